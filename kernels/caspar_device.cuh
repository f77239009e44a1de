// caspar device helpers: spliced at the top of every generated CUDA module.
// Double precision only; no fast-math.  Conventions match the NumPy evaluator
// (caspar_backend/ops.py): sign(0) = 0, sign(NaN) = NaN, x**n by squaring.
#ifndef CASPAR_DEVICE_CUH
#define CASPAR_DEVICE_CUH

__device__ __forceinline__ double caspar_sign(double x) {
    if (x != x) return x;
    return (double)((x > 0.0) - (x < 0.0));
}

// x**n for an integer n, by repeated squaring (exact for |n| small and x finite)
__device__ __forceinline__ double caspar_powi(double x, int n) {
    if (n < 0) return 1.0 / caspar_powi(x, -n);
    double r = 1.0, b = x;
    while (n) {
        if (n & 1) r *= b;
        b *= b;
        n >>= 1;
    }
    return r;
}

#endif
