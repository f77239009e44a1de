// Batched LDL^T without pivoting over one sparsity pattern: one thread per instance.
//
// Every kernel loops over op tables built once on the host
// (caspar_backend/batch/ldl_symbolic.py), so this one compiled module serves any pattern.
// Factor and work arrays are row-major (rows, B): element (r, b) at r * B + b, so the
// threads of a warp (consecutive b) read consecutive addresses for every op.  The
// caller's values (B, nnz), right-hand sides and vectors (B, n) are C-order rows.
//
// Arithmetic goes through __dmul_rn / __dadd_rn / __dsub_rn / __ddiv_rn (never fused
// into an FMA) in QDLDL's order of operations as ldl_symbolic.py states it (the op
// tables are sorted that way), which the NumPy backend (ldl_host.py) follows too: the
// two give the same factors and solutions bit for bit, and QDLDL's.

// P K_b P^T = (I + L) D (I + L)^T for the instances b = active[i], i < n_active.
// T: the values s before the scaling by the pivot's reciprocal (T_kc; d_k at pivot
// rows), F: L (L_kc = T_kc * dinv_c; dinv_k = 1 / d_k at pivot rows), both (n_f, B).
// Inertia by Sylvester's law, pivots in elimination order: a pivot that is 0 or not
// finite ends the count (it and every later one count as zero).
extern "C" __global__ void caspar_batch_ldl_factor(
        const double* __restrict__ values, const long long* __restrict__ active,
        const int n_active, const long long B, const long long nnz, const long long n,
        const long long n_f, const long long* __restrict__ a_src,
        const long long* __restrict__ op_ptr, const long long* __restrict__ op_t,
        const long long* __restrict__ op_l, const long long* __restrict__ pivot_row,
        const long long* __restrict__ elim_diag_row, double* __restrict__ T,
        double* __restrict__ F, long long* __restrict__ n_pos,
        long long* __restrict__ n_neg, long long* __restrict__ n_zero) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_active) return;
    const long long b = active[i];
    const double* a = values + b * nnz;
    for (long long t = 0; t < n_f; ++t) {
        const long long e = a_src[t];          // the entry of K at this row, -1 for fill
        double s = e >= 0 ? a[e] : 0.0;
        for (long long u = op_ptr[t]; u < op_ptr[t + 1]; ++u)
            s = __dsub_rn(s, __dmul_rn(T[op_t[u] * B + b], F[op_l[u] * B + b]));
        T[t * B + b] = s;
        const long long p = pivot_row[t];      // p == t: t is a pivot
        F[t * B + b] = p == t ? __ddiv_rn(1.0, s) : __dmul_rn(s, F[p * B + b]);
    }
    long long pos = 0, neg = 0;
    for (long long k = 0; k < n; ++k) {
        const double d = T[elim_diag_row[k] * B + b];
        // d - d is 0 for a finite d and NaN for +-inf and NaN (no math header needed)
        if (__dsub_rn(d, d) != 0.0 || d == 0.0) break;
        if (d > 0.0) ++pos; else ++neg;
    }
    n_pos[b] = pos;
    n_neg[b] = neg;
    n_zero[b] = n - pos - neg;
}

// x_b = P^T (I + L)^-T D^-1 (I + L)^-1 P rhs_b for b < B; Y (n, B) work, level order.
extern "C" __global__ void caspar_batch_ldl_solve(
        const double* rhs, double* out, const int n_inst,
        const long long B, const long long n, const long long* __restrict__ src,
        const long long* __restrict__ dst, const long long* __restrict__ fw_ptr,
        const long long* __restrict__ fw_row, const long long* __restrict__ fw_pos,
        const long long* __restrict__ diag_row, const long long* __restrict__ bw_ptr,
        const long long* __restrict__ bw_row, const long long* __restrict__ bw_pos,
        const double* __restrict__ F, double* __restrict__ Y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_inst) return;
    const long long b = i;
    const double* c = rhs + b * n;
    for (long long r = 0; r < n; ++r) {          // (I + L) y = P c
        double s = c[src[r]];
        for (long long u = fw_ptr[r]; u < fw_ptr[r + 1]; ++u)
            s = __dsub_rn(s, __dmul_rn(Y[fw_pos[u] * B + b], F[fw_row[u] * B + b]));
        Y[r * B + b] = s;
    }
    for (long long r = 0; r < n; ++r)            // z = y * dinv
        Y[r * B + b] = __dmul_rn(Y[r * B + b], F[diag_row[r] * B + b]);
    for (long long r = n - 1; r >= 0; --r) {     // (I + L)^T x = z, ancestors first
        double s = Y[r * B + b];
        for (long long u = bw_ptr[r]; u < bw_ptr[r + 1]; ++u)
            s = __dsub_rn(s, __dmul_rn(Y[bw_pos[u] * B + b], F[bw_row[u] * B + b]));
        Y[r * B + b] = s;
    }
    double* o = out + b * n;
    for (long long q = 0; q < n; ++q) o[q] = Y[dst[q] * B + b];
}

// out_b = K_b x_b with K_b's upper triangle (CSC, diagonal last in each column):
// (U x) + (U^T x) - diag(U) x, each product summed in CSC order (as SciPy's csc_matvec
// and csr_matvec do on the host).  W (n, B) holds U x.
extern "C" __global__ void caspar_batch_ldl_matvec(
        const double* __restrict__ values, const double* __restrict__ x,
        double* __restrict__ out, const int n_inst, const long long B, const long long n,
        const long long nnz, const long long* __restrict__ indptr,
        const long long* __restrict__ indices, double* __restrict__ W) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_inst) return;
    const long long b = i;
    const double* v = values + b * nnz;
    const double* xb = x + b * n;
    double* o = out + b * n;
    for (long long r = 0; r < n; ++r) W[r * B + b] = 0.0;
    for (long long j = 0; j < n; ++j) {
        const double xj = xb[j];
        double s = 0.0;
        for (long long e = indptr[j]; e < indptr[j + 1]; ++e) {
            const long long r = indices[e];
            W[r * B + b] = __dadd_rn(W[r * B + b], __dmul_rn(v[e], xj));
            s = __dadd_rn(s, __dmul_rn(v[e], xb[r]));
        }
        o[j] = s;                                // (U^T x)_j, complete after column j
    }
    for (long long j = 0; j < n; ++j)
        o[j] = __dsub_rn(__dadd_rn(W[j * B + b], o[j]), __dmul_rn(v[indptr[j + 1] - 1], xb[j]));
}

// ---------------------------------------------------------------------------------------
// The same three operations with one block of CASPAR_LDL_BLOCK threads per instance (block
// b solves instance active[b]).  One thread per instance leaves a GPU nearly idle below
// about 10^5 instances, each thread walking a dependent chain of loads; here the threads
// of a block share one instance's rows.  The factorization and the solves go level by
// level of the elimination tree (ldl_symbolic.py: the rows of one level depend only on
// lower levels), with __syncthreads between levels; each row receives the same operations
// in the same order as above, so the results are the same bits.

#define CASPAR_LDL_BLOCK 64

// min / sum of one value per thread over the block (blockDim.x a power of two); red is a
// shared array of blockDim.x entries; every thread gets the result
__device__ long long caspar_block_min(long long v, long long* red) {
    red[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s && red[threadIdx.x + s] < red[threadIdx.x])
            red[threadIdx.x] = red[threadIdx.x + s];
        __syncthreads();
    }
    const long long r = red[0];
    __syncthreads();
    return r;
}

__device__ long long caspar_block_sum(long long v, long long* red) {
    red[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    const long long r = red[0];
    __syncthreads();
    return r;
}

// As caspar_batch_ldl_factor; row_ptr (n_levels+1,): the layout rows of each level.
// Per level: every row's T (and a pivot's F = 1/d), then the off-diagonal rows' F = T
// times their pivot's F (pivots come first in the sequential order too).  Inertia: the
// first pivot in elimination order that is 0 or not finite ends the count, as above.
extern "C" __global__ void caspar_batch_ldl_factor_blk(
        const double* __restrict__ values, const long long* __restrict__ active,
        const int n_active, const long long B, const long long nnz, const long long n,
        const long long n_levels, const long long* __restrict__ row_ptr,
        const long long* __restrict__ a_src,
        const long long* __restrict__ op_ptr, const long long* __restrict__ op_t,
        const long long* __restrict__ op_l, const long long* __restrict__ pivot_row,
        const long long* __restrict__ elim_diag_row, double* __restrict__ T,
        double* __restrict__ F, long long* __restrict__ n_pos,
        long long* __restrict__ n_neg, long long* __restrict__ n_zero) {
    __shared__ long long red[CASPAR_LDL_BLOCK];
    if (blockIdx.x >= (unsigned)n_active) return;
    const long long b = active[blockIdx.x];
    const double* a = values + b * nnz;
    for (long long l = 0; l < n_levels; ++l) {
        for (long long t = row_ptr[l] + threadIdx.x; t < row_ptr[l + 1]; t += blockDim.x) {
            const long long e = a_src[t];
            double s = e >= 0 ? a[e] : 0.0;
            for (long long u = op_ptr[t]; u < op_ptr[t + 1]; ++u)
                s = __dsub_rn(s, __dmul_rn(T[op_t[u] * B + b], F[op_l[u] * B + b]));
            T[t * B + b] = s;
            if (pivot_row[t] == t) F[t * B + b] = __ddiv_rn(1.0, s);
        }
        __syncthreads();
        for (long long t = row_ptr[l] + threadIdx.x; t < row_ptr[l + 1]; t += blockDim.x) {
            const long long p = pivot_row[t];
            if (p != t) F[t * B + b] = __dmul_rn(T[t * B + b], F[p * B + b]);
        }
        __syncthreads();
    }
    long long bad = n;
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
        const double d = T[elim_diag_row[k] * B + b];
        if ((__dsub_rn(d, d) != 0.0 || d == 0.0) && k < bad) bad = k;
    }
    bad = caspar_block_min(bad, red);
    long long pos = 0, neg = 0;
    for (long long k = threadIdx.x; k < bad; k += blockDim.x) {
        if (T[elim_diag_row[k] * B + b] > 0.0) ++pos; else ++neg;
    }
    pos = caspar_block_sum(pos, red);
    neg = caspar_block_sum(neg, red);
    if (threadIdx.x == 0) {
        n_pos[b] = pos;
        n_neg[b] = neg;
        n_zero[b] = n - pos - neg;
    }
}

// As caspar_batch_ldl_solve for instance blockIdx.x; lev_ptr (n_levels+1,): the
// level-order positions of each level.  Forward level by level, the diagonal, backward
// from the top level down.
extern "C" __global__ void caspar_batch_ldl_solve_blk(
        const double* rhs, double* out, const int n_inst,
        const long long B, const long long n, const long long n_levels,
        const long long* __restrict__ lev_ptr, const long long* __restrict__ src,
        const long long* __restrict__ dst, const long long* __restrict__ fw_ptr,
        const long long* __restrict__ fw_row, const long long* __restrict__ fw_pos,
        const long long* __restrict__ diag_row, const long long* __restrict__ bw_ptr,
        const long long* __restrict__ bw_row, const long long* __restrict__ bw_pos,
        const double* __restrict__ F, double* __restrict__ Y) {
    if (blockIdx.x >= (unsigned)n_inst) return;
    const long long b = blockIdx.x;
    const double* c = rhs + b * n;
    for (long long l = 0; l < n_levels; ++l) {
        for (long long r = lev_ptr[l] + threadIdx.x; r < lev_ptr[l + 1]; r += blockDim.x) {
            double s = c[src[r]];
            for (long long u = fw_ptr[r]; u < fw_ptr[r + 1]; ++u)
                s = __dsub_rn(s, __dmul_rn(Y[fw_pos[u] * B + b], F[fw_row[u] * B + b]));
            Y[r * B + b] = s;
        }
        __syncthreads();
    }
    for (long long r = threadIdx.x; r < n; r += blockDim.x)
        Y[r * B + b] = __dmul_rn(Y[r * B + b], F[diag_row[r] * B + b]);
    __syncthreads();
    for (long long l = n_levels - 1; l >= 0; --l) {
        for (long long r = lev_ptr[l] + threadIdx.x; r < lev_ptr[l + 1]; r += blockDim.x) {
            double s = Y[r * B + b];
            for (long long u = bw_ptr[r]; u < bw_ptr[r + 1]; ++u)
                s = __dsub_rn(s, __dmul_rn(Y[bw_pos[u] * B + b], F[bw_row[u] * B + b]));
            Y[r * B + b] = s;
        }
        __syncthreads();
    }
    double* o = out + b * n;
    for (long long q = threadIdx.x; q < n; q += blockDim.x) o[q] = Y[dst[q] * B + b];
}

// As caspar_batch_ldl_matvec, one thread per (instance, index q): column q's sum
// (U^T x)_q in CSC order, row q's sum (U x)_q over the row's entries by increasing
// column (u_ptr (n+1,), u_ent: the entries of U's rows, CSR order) -- the order in which
// the column loop above adds them -- and their combination as above.  No work array.
extern "C" __global__ void caspar_batch_ldl_matvec_flat(
        const double* __restrict__ values, const double* __restrict__ x,
        double* __restrict__ out, const int n_inst, const long long n,
        const long long* __restrict__ indptr, const long long* __restrict__ indices,
        const long long* __restrict__ u_ptr, const long long* __restrict__ u_ent,
        const long long* __restrict__ u_col, const long long nnz) {
    const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= (long long)n_inst * n) return;
    const long long b = g / n, q = g - b * n;
    const double* v = values + b * nnz;
    const double* xb = x + b * n;
    double s = 0.0;
    for (long long e = indptr[q]; e < indptr[q + 1]; ++e)
        s = __dadd_rn(s, __dmul_rn(v[e], xb[indices[e]]));
    double w = 0.0;
    for (long long u = u_ptr[q]; u < u_ptr[q + 1]; ++u)
        w = __dadd_rn(w, __dmul_rn(v[u_ent[u]], xb[u_col[u]]));
    out[b * n + q] = __dsub_rn(__dadd_rn(w, s), __dmul_rn(v[indptr[q + 1] - 1], xb[q]));
}
