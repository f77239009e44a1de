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
