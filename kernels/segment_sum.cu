// out[dst[j]] = sum_{k = ptr[j]}^{ptr[j+1]-1} v[perm[k]]   (one thread per segment j)
// Deterministic scatter-add: the summation order is fixed by the precomputed
// (perm, ptr), so repeated evaluations give bitwise-identical results.
extern "C" __global__ void caspar_segment_sum(const double* __restrict__ v,
                                              const long long* __restrict__ perm,
                                              const long long* __restrict__ ptr,
                                              const long long* __restrict__ dst,
                                              double* __restrict__ out, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    double s = 0.0;
    for (long long k = ptr[j]; k < ptr[j + 1]; ++k) s += v[perm[k]];
    out[dst[j]] = s;
}

// The same for B rows at once (caspar_backend/batch/scatter.py):
// out[b, j] = (accumulate ? out[b, j] : 0) + v[b, perm[ptr[j]]] + v[b, perm[ptr[j] + 1]] + ...
// added left to right, v (B, K) and out (B, size) C-order; one thread per (b, j).
extern "C" __global__ void caspar_segment_sum_rows(const double* __restrict__ v,
                                                   const long long* __restrict__ perm,
                                                   const long long* __restrict__ ptr,
                                                   double* __restrict__ out,
                                                   const long long size, const long long K,
                                                   const long long B, const int accumulate) {
    const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= B * size) return;
    const long long b = g / size, j = g - b * size;
    const double* vb = v + b * K;
    double s = accumulate ? out[g] : 0.0;
    for (long long k = ptr[j]; k < ptr[j + 1]; ++k) s += vb[perm[k]];
    out[g] = s;
}
