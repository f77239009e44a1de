// caspar group table: one entry per pattern group of a generated problem module
// (caspar_backend/evaluators/group_table.py builds it; its NumPy dtype mirrors this
// struct field by field, 64 bytes).  A dispatch kernel runs over the blocks of every
// group of one table: group k owns the blocks [block0_k, block0_{k+1}).
#ifndef CASPAR_GROUPS_CUH
#define CASPAR_GROUPS_CUH

struct caspar_group {
    const int* vt;         // variable table, slot-major (entry j of instance i at j*N + i)
    const int* pt;         // parameter table, slot-major
    const double* dt;      // data table, slot-major
    const int* dst;        // value destination (rows or term slots) / Hessian weight index
    long long jac_base;    // first slot of the group's Jacobian (or gradient) values
    long long hess_base;   // first slot of the group's Hessian values
    int N;                 // instances
    int block0;            // first block of the group in its table's launch
    int direct;            // 1: values go to `out`, 0: to the term buffer (split rows)
    int pad;
};

// the entry k with block0_k <= blockIdx.x < block0_{k+1} (block0 increasing)
__device__ __forceinline__ int caspar_group_of(const caspar_group* __restrict__ G, int ng) {
    const int b = (int)blockIdx.x;
    int lo = 0, hi = ng - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (G[mid].block0 <= b) lo = mid; else hi = mid - 1;
    }
    return lo;
}

#endif
