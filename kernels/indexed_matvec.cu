// y[i] = sum_{k = ptr[i]}^{ptr[i+1]-1} val[src[k]] * x[col[k]]   (one thread per row i)
// A sparse matrix whose entries are entries of a value vector (no copy of the values):
// (ptr, col, src) is its CSR pattern with, for each entry, its position in val.  The
// summation order is fixed (k increasing), so results are bitwise repeatable.
extern "C" __global__ void caspar_indexed_matvec(const long long* __restrict__ ptr,
                                                 const long long* __restrict__ col,
                                                 const long long* __restrict__ src,
                                                 const double* __restrict__ val,
                                                 const double* __restrict__ x,
                                                 double* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double s = 0.0;
    for (long long k = ptr[i]; k < ptr[i + 1]; ++k) s += val[src[k]] * x[col[k]];
    y[i] = s;
}
