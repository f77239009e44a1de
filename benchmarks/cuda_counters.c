/* Counts kernel launches, device-to-host copies and synchronizations of a process
 * (benchmarks/cuda_counters.py builds it and reads the counters).
 *
 *   LD_PRELOAD=/path/libcaspar_counters.so python ...
 *
 * The CUDA driver's entry points reach a process three ways, and each is wrapped:
 *   - linked directly (the dynamic linker resolves cuLaunchKernel to the wrapper here);
 *   - dlsym(handle, "cuLaunchKernel") on a dlopen'ed libcuda (CuPy's driver module):
 *     dlsym itself is wrapped and hands out the counting wrapper;
 *   - cuGetProcAddress (the CUDA runtime, linked statically into CuPy and cuDSS, asks the
 *     driver for its entry points this way): the wrapper hands out counting wrappers.
 * Counters: [0] kernel launches (cuLaunchKernel, cuLaunchKernelEx,
 * cuLaunchCooperativeKernel), [1] device-to-host copies (cuMemcpyDtoH,
 * cuMemcpyDtoHAsync, and the unified-address copies cuMemcpy / cuMemcpyAsync from device
 * memory to host memory -- the route of CuPy's get(): the driver says which memory a
 * pointer is, and a pointer it does not know is pageable host memory), [2] the other
 * unified-address copies (host to device, device to device), [3] synchronizations
 * (cuStreamSynchronize, cuCtxSynchronize, cuEventSynchronize) -- a host read waits for
 * one of these or a synchronous copy.
 * The CUDA runtime (libcudart, which CuPy calls for its copies and stream
 * synchronizations) reaches the driver for these through a private export table, not
 * through the entry points above, so its own copy and synchronize functions are wrapped
 * too (cudaMemcpy, cudaMemcpyAsync by their cudaMemcpyKind -- cudaMemcpyDefault told by
 * the pointers --, cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize),
 * linked directly or looked up with dlsym; their real definitions are found in the loaded
 * libcudart however it was loaded (dl_iterate_phdr). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

/* counts[0..3] as above; counts[4]: bit i set once an entry point of counter i was
 * wrapped (handed out or called), so that a zero is told apart from "not reached" */
static unsigned long long counts[5];

#ifdef CASPAR_CUPTI
/* counters 1 and 3 from CUPTI's activity records (cuda_counters_cupti.c) */
int caspar_cupti_start(void);
void caspar_cupti_flush(void);
static int cupti_on;
__attribute__((constructor)) static void start_cupti(void) { cupti_on = caspar_cupti_start(); }
#endif

void caspar_count_add(int counter, unsigned long long n) {
    __atomic_fetch_add(&counts[counter], n, __ATOMIC_RELAXED);
}
void caspar_count_seen(int counter) {
    __atomic_fetch_or(&counts[4], 1ULL << counter, __ATOMIC_RELAXED);
}

void caspar_counts(unsigned long long* out) {
#ifdef CASPAR_CUPTI
    if (cupti_on) caspar_cupti_flush();
#endif
    for (int i = 0; i < 5; ++i) out[i] = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
}

/* 1 when reads and syncs are CUPTI's counts (the wrappers below then leave them alone) */
int caspar_counts_from_cupti(void) {
#ifdef CASPAR_CUPTI
    return cupti_on;
#else
    return 0;
#endif
}

#define SEEN(i) __atomic_fetch_or(&counts[4], 1ULL << (i), __ATOMIC_RELAXED)
#ifdef CASPAR_CUPTI
#define CUPTI_OWNS(i) (cupti_on && ((i) == 1 || (i) == 3))
#else
#define CUPTI_OWNS(i) 0
#endif
/* (a counter CUPTI keeps is not bumped here too: one count per read) */
#define BUMP(i) (SEEN(i), CUPTI_OWNS(i) ? 0ULL \
                 : __atomic_fetch_add(&counts[i], 1ULL, __ATOMIC_RELAXED))

typedef void* (*dlsym_t)(void*, const char*);
static dlsym_t real_dlsym_fn(void) {
    static dlsym_t real = 0;
    if (!real) real = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!real) real = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    return real;
}

/* one real pointer per wrapped entry point, filled by whichever route finds it first */
typedef int (*launch_t)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void*, void**, void**);
typedef int (*launch_ex_t)(const void*, void*, void**, void**);
typedef int (*dtoh_t)(void*, unsigned long long, size_t);
typedef int (*dtoh_async_t)(void*, unsigned long long, size_t, void*);
typedef int (*copy_t)(unsigned long long, unsigned long long, size_t);
typedef int (*copy_async_t)(unsigned long long, unsigned long long, size_t, void*);
typedef int (*sync1_t)(void*);
typedef int (*sync0_t)(void);
typedef int (*gpa_t)(const char*, void**, int, unsigned long long);
typedef int (*gpa2_t)(const char*, void**, int, unsigned long long, void*);

static launch_t r_launch, r_launch_coop;
static launch_ex_t r_launch_ex;
static dtoh_t r_dtoh;
static dtoh_async_t r_dtoh_async;
static copy_t r_copy;
static copy_async_t r_copy_async;
static sync1_t r_stream_sync, r_event_sync;
static sync0_t r_ctx_sync;
static gpa_t r_gpa;
static gpa2_t r_gpa2;

/* the handle of a dlopen'ed libcuda (the first handle a cu* name was found in): its own
 * definitions, not the wrappers here, which a global (RTLD_NEXT) lookup may return when
 * libcuda's exported functions are themselves interposed */
static void* cuda_handle;

static void* lookup(const char* name) {
    void* p = cuda_handle ? real_dlsym_fn()(cuda_handle, name) : 0;
    return p ? p : real_dlsym_fn()(RTLD_NEXT, name);
}
#define REAL(var, type, name) (var ? var : (var = (type)lookup(name)))

int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned sh, void* st, void** p, void** e) {
    BUMP(0);
    return REAL(r_launch, launch_t, "cuLaunchKernel")(f, gx, gy, gz, bx, by, bz, sh, st, p, e);
}
int cuLaunchCooperativeKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned sh, void* st, void** p,
                              void** e) {
    BUMP(0);
    return REAL(r_launch_coop, launch_t, "cuLaunchCooperativeKernel")(f, gx, gy, gz, bx, by,
                                                                       bz, sh, st, p, e);
}
int cuLaunchKernelEx(const void* c, void* f, void** p, void** e) {
    BUMP(0);
    return REAL(r_launch_ex, launch_ex_t, "cuLaunchKernelEx")(c, f, p, e);
}
int cuMemcpyDtoH_v2(void* d, unsigned long long s, size_t n) {
    BUMP(1);
    return REAL(r_dtoh, dtoh_t, "cuMemcpyDtoH_v2")(d, s, n);
}
int cuMemcpyDtoHAsync_v2(void* d, unsigned long long s, size_t n, void* st) {
    BUMP(1);
    return REAL(r_dtoh_async, dtoh_async_t, "cuMemcpyDtoHAsync_v2")(d, s, n, st);
}
/* cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_MEMORY_TYPE): 1 host, 2 device, 3 array,
 * 4 unified; an error (a pointer the driver does not know: pageable host memory) -> 1 */
typedef int (*attr_t)(void*, int, unsigned long long);
static attr_t r_attr;
static unsigned memory_type(unsigned long long ptr) {
    unsigned type = 0;
    if (REAL(r_attr, attr_t, "cuPointerGetAttribute")(&type, 2, ptr) != 0) return 1;
    return type;
}
/* a unified-address copy: a host read (counter 1) when it goes from device memory to
 * host memory, else counter 2 */
static void count_copy(unsigned long long d, unsigned long long s) {
    BUMP(2);
    SEEN(1);
    if (memory_type(s) == 2 && memory_type(d) == 1) {
        __atomic_fetch_sub(&counts[2], 1ULL, __ATOMIC_RELAXED);
        if (!CUPTI_OWNS(1)) __atomic_fetch_add(&counts[1], 1ULL, __ATOMIC_RELAXED);
    }
}
int cuMemcpy(unsigned long long d, unsigned long long s, size_t n) {
    count_copy(d, s);
    return REAL(r_copy, copy_t, "cuMemcpy")(d, s, n);
}
int cuMemcpyAsync(unsigned long long d, unsigned long long s, size_t n, void* st) {
    count_copy(d, s);
    return REAL(r_copy_async, copy_async_t, "cuMemcpyAsync")(d, s, n, st);
}
int cuStreamSynchronize(void* st) {
    BUMP(3);
    return REAL(r_stream_sync, sync1_t, "cuStreamSynchronize")(st);
}
int cuEventSynchronize(void* ev) {
    BUMP(3);
    return REAL(r_event_sync, sync1_t, "cuEventSynchronize")(ev);
}
int cuCtxSynchronize(void) {
    BUMP(3);
    return REAL(r_ctx_sync, sync0_t, "cuCtxSynchronize")();
}

/* the loaded libcudart's handle, whichever way it was loaded (a dlopen'ed library's
 * dependencies are not in the global scope that RTLD_NEXT searches) */
static void* cudart_handle;
static int find_cudart(struct dl_phdr_info* info, size_t size, void* out) {
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "libcudart")) {
        *(const char**)out = info->dlpi_name;
        return 1;
    }
    return 0;
}
static void* rt_lookup(const char* name) {
    if (!cudart_handle) {   /* (dlopen outside the iteration: it holds the loader's lock) */
        const char* path = 0;
        dl_iterate_phdr(find_cudart, &path);
        if (path) cudart_handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    }
    void* p = cudart_handle ? real_dlsym_fn()(cudart_handle, name) : 0;
    return p ? p : real_dlsym_fn()(RTLD_NEXT, name);
}
#define RT_REAL(var, type, name) (var ? var : (var = (type)rt_lookup(name)))

typedef int (*rt_copy_t)(void*, const void*, size_t, int);
typedef int (*rt_copy_async_t)(void*, const void*, size_t, int, void*);
static rt_copy_t r_rt_copy;
static rt_copy_async_t r_rt_copy_async;
static sync1_t r_rt_stream_sync, r_rt_event_sync;
static sync0_t r_rt_device_sync;

/* cudaMemcpyKind: 0 host to host, 1 host to device, 2 device to host, 3 device to
 * device, 4 default (the pointers say) */
static void count_rt_copy(void* d, const void* s, int kind) {
    SEEN(1);
    SEEN(2);
    if (kind == 2 || (kind == 4 && memory_type((uintptr_t)s) == 2
                      && memory_type((uintptr_t)d) == 1)) {
        if (!CUPTI_OWNS(1)) __atomic_fetch_add(&counts[1], 1ULL, __ATOMIC_RELAXED);
    } else {
        __atomic_fetch_add(&counts[2], 1ULL, __ATOMIC_RELAXED);
    }
}
int cudaMemcpy(void* d, const void* s, size_t n, int kind) {
    count_rt_copy(d, s, kind);
    return RT_REAL(r_rt_copy, rt_copy_t, "cudaMemcpy")(d, s, n, kind);
}
int cudaMemcpyAsync(void* d, const void* s, size_t n, int kind, void* st) {
    count_rt_copy(d, s, kind);
    return RT_REAL(r_rt_copy_async, rt_copy_async_t, "cudaMemcpyAsync")(d, s, n, kind, st);
}
int cudaStreamSynchronize(void* st) {
    BUMP(3);
    return RT_REAL(r_rt_stream_sync, sync1_t, "cudaStreamSynchronize")(st);
}
int cudaEventSynchronize(void* ev) {
    BUMP(3);
    return RT_REAL(r_rt_event_sync, sync1_t, "cudaEventSynchronize")(ev);
}
int cudaDeviceSynchronize(void) {
    BUMP(3);
    return RT_REAL(r_rt_device_sync, sync0_t, "cudaDeviceSynchronize")();
}

/* name (as dlsym or cuGetProcAddress spell it) -> (where the real pointer goes, wrapper) */
struct hook { const char* name; void** real; void* wrapper; int counter; };
static struct hook hooks[] = {
    {"cuLaunchKernel", (void**)&r_launch, (void*)cuLaunchKernel, 0},
    {"cuLaunchCooperativeKernel", (void**)&r_launch_coop, (void*)cuLaunchCooperativeKernel, 0},
    {"cuLaunchKernelEx", (void**)&r_launch_ex, (void*)cuLaunchKernelEx, 0},
    {"cuMemcpyDtoH_v2", (void**)&r_dtoh, (void*)cuMemcpyDtoH_v2, 1},
    {"cuMemcpyDtoH", (void**)&r_dtoh, (void*)cuMemcpyDtoH_v2, 1},
    {"cuMemcpyDtoHAsync_v2", (void**)&r_dtoh_async, (void*)cuMemcpyDtoHAsync_v2, 1},
    {"cuMemcpyDtoHAsync", (void**)&r_dtoh_async, (void*)cuMemcpyDtoHAsync_v2, 1},
    {"cuMemcpy", (void**)&r_copy, (void*)cuMemcpy, 2},
    {"cuMemcpyAsync", (void**)&r_copy_async, (void*)cuMemcpyAsync, 2},
    {"cuStreamSynchronize", (void**)&r_stream_sync, (void*)cuStreamSynchronize, 3},
    {"cuEventSynchronize", (void**)&r_event_sync, (void*)cuEventSynchronize, 3},
    {"cuCtxSynchronize", (void**)&r_ctx_sync, (void*)cuCtxSynchronize, 3},
    {"cudaMemcpy", (void**)&r_rt_copy, (void*)cudaMemcpy, 1},
    {"cudaMemcpyAsync", (void**)&r_rt_copy_async, (void*)cudaMemcpyAsync, 1},
    {"cudaStreamSynchronize", (void**)&r_rt_stream_sync, (void*)cudaStreamSynchronize, 3},
    {"cudaEventSynchronize", (void**)&r_rt_event_sync, (void*)cudaEventSynchronize, 3},
    {"cudaDeviceSynchronize", (void**)&r_rt_device_sync, (void*)cudaDeviceSynchronize, 3},
};

/* CASPAR_COUNTERS_TRACE set: every driver entry point a process asks for by name is
 * written to stderr (how to find a route the wrappers miss) */
static void trace(const char* how, const char* name) {
    static int on = -1;
    if (on < 0) on = getenv("CASPAR_COUNTERS_TRACE") != 0;
    if (on && name && strncmp(name, "cu", 2) == 0) fprintf(stderr, "cuda_counters %s %s\n", how, name);
}

static void* swap_in(const char* name, void* real) {
    if (!real || !name) return real;
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; ++i)
        if (strcmp(name, hooks[i].name) == 0) {
            if (real == hooks[i].wrapper)   /* no loop into ourselves */
                real = strncmp(name, "cuda", 4) == 0 ? rt_lookup(name) : lookup(name);
            if (!real) return hooks[i].wrapper;
            *hooks[i].real = real;
            SEEN(hooks[i].counter);
            return hooks[i].wrapper;
        }
    return real;
}

int cuGetProcAddress(const char* sym, void** pfn, int ver, unsigned long long flags) {
    int rc = REAL(r_gpa, gpa_t, "cuGetProcAddress")(sym, pfn, ver, flags);
    trace("cuGetProcAddress", sym);
    if (rc == 0 && pfn) *pfn = swap_in(sym, *pfn);
    return rc;
}
int cuGetProcAddress_v2(const char* sym, void** pfn, int ver, unsigned long long flags,
                        void* status) {
    int rc = REAL(r_gpa2, gpa2_t, "cuGetProcAddress_v2")(sym, pfn, ver, flags, status);
    trace("cuGetProcAddress_v2", sym);
    if (rc == 0 && pfn) *pfn = swap_in(sym, *pfn);
    return rc;
}

void* dlsym(void* handle, const char* name) {
    void* p = real_dlsym_fn()(handle, name);
    trace("dlsym", name);
    if (p && name && !cuda_handle && handle != RTLD_NEXT && handle != RTLD_DEFAULT
            && strncmp(name, "cu", 2) == 0 && strncmp(name, "cuda", 4) != 0)
        cuda_handle = handle;
    if (p && name && strcmp(name, "cuGetProcAddress") == 0) {
        r_gpa = (gpa_t)p;
        return (void*)cuGetProcAddress;
    }
    if (p && name && strcmp(name, "cuGetProcAddress_v2") == 0) {
        r_gpa2 = (gpa2_t)p;
        return (void*)cuGetProcAddress_v2;
    }
    return swap_in(name, p);
}
