/* Counts kernel launches, device-to-host copies and synchronizations of a process
 * (benchmarks/cuda_counters.py builds it and reads the counters).
 *
 *   LD_PRELOAD=/path/libcaspar_counters.so python ...
 *
 * Each wrapper counts, then calls the next definition of the symbol (the CUDA driver's
 * or runtime's).  Calls the runtime makes to the driver internally bypass the dynamic
 * linker and are not counted twice.  Counters: [0] launches (driver cuLaunchKernel*
 * and runtime cudaLaunchKernel*), [1] device-to-host copies (cuMemcpyDtoH*,
 * cudaMemcpy* with kind DeviceToHost), [2] copies of kind Default (direction unknown),
 * [3] synchronizations (stream, context and device). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

static unsigned long long counts[4];

void caspar_counts(unsigned long long* out) {
    for (int i = 0; i < 4; ++i) out[i] = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
}

#define BUMP(i) __atomic_fetch_add(&counts[i], 1ULL, __ATOMIC_RELAXED)
#define NEXT(type, name) \
    static type real_ = 0; \
    if (!real_) real_ = (type)dlsym(RTLD_NEXT, name)

typedef struct { unsigned x, y, z; } dim3_t;

typedef int (*launch_t)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void*, void**, void**);
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned sh, void* st, void** p, void** e) {
    NEXT(launch_t, "cuLaunchKernel");
    BUMP(0);
    return real_(f, gx, gy, gz, bx, by, bz, sh, st, p, e);
}
int cuLaunchKernel_ptsz(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned sh, void* st, void** p, void** e) {
    NEXT(launch_t, "cuLaunchKernel_ptsz");
    BUMP(0);
    return real_(f, gx, gy, gz, bx, by, bz, sh, st, p, e);
}

typedef int (*launch_ex_t)(const void*, void*, void**, void**);
int cuLaunchKernelEx(const void* c, void* f, void** p, void** e) {
    NEXT(launch_ex_t, "cuLaunchKernelEx");
    BUMP(0);
    return real_(c, f, p, e);
}

typedef int (*rt_launch_t)(const void*, dim3_t, dim3_t, void**, size_t, void*);
int cudaLaunchKernel(const void* f, dim3_t g, dim3_t b, void** a, size_t sh, void* st) {
    NEXT(rt_launch_t, "cudaLaunchKernel");
    BUMP(0);
    return real_(f, g, b, a, sh, st);
}
int cudaLaunchKernel_ptsz(const void* f, dim3_t g, dim3_t b, void** a, size_t sh, void* st) {
    NEXT(rt_launch_t, "cudaLaunchKernel_ptsz");
    BUMP(0);
    return real_(f, g, b, a, sh, st);
}

typedef int (*dtoh_t)(void*, unsigned long long, size_t);
int cuMemcpyDtoH_v2(void* d, unsigned long long s, size_t n) {
    NEXT(dtoh_t, "cuMemcpyDtoH_v2");
    BUMP(1);
    return real_(d, s, n);
}
typedef int (*dtoh_async_t)(void*, unsigned long long, size_t, void*);
int cuMemcpyDtoHAsync_v2(void* d, unsigned long long s, size_t n, void* st) {
    NEXT(dtoh_async_t, "cuMemcpyDtoHAsync_v2");
    BUMP(1);
    return real_(d, s, n, st);
}

typedef int (*memcpy_t)(void*, const void*, size_t, int);
int cudaMemcpy(void* d, const void* s, size_t n, int kind) {
    NEXT(memcpy_t, "cudaMemcpy");
    if (kind == 2) BUMP(1); else if (kind == 4) BUMP(2);
    return real_(d, s, n, kind);
}
typedef int (*memcpy_async_t)(void*, const void*, size_t, int, void*);
int cudaMemcpyAsync(void* d, const void* s, size_t n, int kind, void* st) {
    NEXT(memcpy_async_t, "cudaMemcpyAsync");
    if (kind == 2) BUMP(1); else if (kind == 4) BUMP(2);
    return real_(d, s, n, kind, st);
}

typedef int (*sync1_t)(void*);
typedef int (*sync0_t)(void);
int cudaStreamSynchronize(void* st) { NEXT(sync1_t, "cudaStreamSynchronize"); BUMP(3); return real_(st); }
int cuStreamSynchronize(void* st) { NEXT(sync1_t, "cuStreamSynchronize"); BUMP(3); return real_(st); }
int cudaDeviceSynchronize(void) { NEXT(sync0_t, "cudaDeviceSynchronize"); BUMP(3); return real_(); }
int cuCtxSynchronize(void) { NEXT(sync0_t, "cuCtxSynchronize"); BUMP(3); return real_(); }
