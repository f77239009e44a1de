/* Host reads and synchronizations of a process counted from CUPTI's activity records
 * (built into benchmarks/cuda_counters.py's library where CUPTI's header and library are
 * found; the wrappers of cuda_counters.c then count only the launches).
 *
 * Why: the CUDA runtime linked statically into CuPy and cuDSS reaches the driver's copy
 * and synchronize functions through the driver's export table, past every entry point
 * cuda_counters.c wraps (on the H200 its copy and synchronize counts stayed 0).  CUPTI
 * sees the work itself, however it was requested:
 *   - CUPTI_ACTIVITY_KIND_MEMCPY records whose copy kind is device to host (a pageable
 *     or pinned host destination alike): counter 1, "reads";
 *   - CUPTI_ACTIVITY_KIND_SYNCHRONIZATION records of a stream, event or context
 *     synchronize (a stream waiting on an event does not block the host: not counted):
 *     counter 3, "syncs".
 * Records arrive in buffers CUPTI fills and hands back (buffer_done); caspar_cupti_flush
 * makes CUPTI hand back the partial ones first, so a read of the counters is up to date.
 * Layout read from a record: every CUpti_ActivityMemcpy* version begins {uint32 kind;
 * uint8 copyKind; ...} and every CUpti_ActivitySynchronization* {uint32 kind; uint32
 * type; ...} -- read at those offsets so that the struct's version does not matter.
 *
 * Timeline (benchmarks/cuda_timeline.py): with CASPAR_TIMELINE=<capacity> in the
 * environment, kernels (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, read through the
 * CASPAR_KERNEL_RECORD struct the build found in the header), device-to-host and other
 * copies, memsets and synchronizations are also kept as TimelineRecord rows (device
 * clock, ns) in a buffer of that many rows; caspar_timeline_read copies them out and
 * caspar_timeline_clear starts over.  Offsets shared by every record version:
 * kernel {.., uint64 start @16, uint64 end @24}, memcpy {.., uint64 bytes @8, start @16,
 * end @24}, memset {uint32 kind, uint32 value, uint64 bytes @8, start @16, end @24},
 * synchronization {.., uint64 start @8, end @16}. */
#include <cupti.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BUFFER_BYTES (1 << 20)

extern void caspar_count_add(int counter, unsigned long long n);
extern void caspar_count_seen(int counter);

/* one timeline row: what = 0 kernel (detail: its name, a const char* CUPTI keeps for the
 * process's life), 1 device-to-host copy, 2 other copy, 3 memset (detail: bytes),
 * 4 synchronization (detail: its type) */
typedef struct {
    uint64_t start, end, detail;
    uint32_t what, stream;
} TimelineRecord;

static TimelineRecord* timeline;
static size_t timeline_capacity;
static size_t timeline_count; /* rows offered, kept or not (kept: min(count, capacity)) */

static uint64_t at64(const uint8_t* bytes, size_t offset) {
    uint64_t v;
    memcpy(&v, bytes + offset, sizeof v);
    return v;
}

static void keep(uint32_t what, uint64_t start, uint64_t end, uint64_t detail, uint32_t stream) {
    size_t k = __atomic_fetch_add(&timeline_count, 1, __ATOMIC_RELAXED);
    if (k < timeline_capacity) {
        TimelineRecord r = {start, end, detail, what, stream};
        timeline[k] = r;
    }
}

static void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = (uint8_t*)aligned_alloc(8, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_done(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size,
                                 size_t valid) {
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity* record = 0;
    unsigned long long reads = 0, syncs = 0;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        const uint8_t* bytes = (const uint8_t*)record;
        if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            int dtoh = bytes[4] == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
            if (dtoh) ++reads;
            if (timeline) keep(dtoh ? 1 : 2, at64(bytes, 16), at64(bytes, 24), at64(bytes, 8), 0);
        } else if (record->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) {
            uint32_t type;
            memcpy(&type, bytes + 4, sizeof type);
            if (type != CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT) ++syncs;
            if (timeline) keep(4, at64(bytes, 8), at64(bytes, 16), type, 0);
        }
#ifdef CASPAR_KERNEL_RECORD
        else if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && timeline) {
            const CASPAR_KERNEL_RECORD* k = (const CASPAR_KERNEL_RECORD*)record;
            keep(0, k->start, k->end, (uint64_t)(uintptr_t)k->name, k->streamId);
        } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET && timeline) {
            keep(3, at64(bytes, 16), at64(bytes, 24), at64(bytes, 8), 0);
        }
#endif
    }
    caspar_count_add(1, reads);
    caspar_count_add(3, syncs);
    free(buffer);
}

/* 1 when the activity records are on (then counters 1 and 3 are CUPTI's), else 0 */
int caspar_cupti_start(void) {
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_done) != CUPTI_SUCCESS)
        return 0;
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS) return 0;
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) != CUPTI_SUCCESS) return 0;
    caspar_count_seen(1);
    caspar_count_seen(3);
#ifdef CASPAR_KERNEL_RECORD
    const char* cap = getenv("CASPAR_TIMELINE");
    if (cap && atol(cap) > 0) {
        timeline_capacity = (size_t)atol(cap);
        timeline = (TimelineRecord*)calloc(timeline_capacity, sizeof(TimelineRecord));
        if (!timeline || cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS
            || cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET) != CUPTI_SUCCESS) {
            free(timeline);
            timeline = 0;
            timeline_capacity = 0;
        }
    }
#endif
    return 1;
}

void caspar_cupti_flush(void) { cuptiActivityFlushAll(1); }

/* the timeline's capacity in rows (0: no timeline) */
size_t caspar_timeline_capacity(void) { return timeline_capacity; }

/* the device clock now (ns), the clock of the timeline's rows */
uint64_t caspar_timeline_now(void) {
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
}

/* flushes CUPTI's buffers, copies up to max_rows rows to out; returns the rows offered
 * since the last clear (more than were copied when the buffer filled) */
size_t caspar_timeline_read(TimelineRecord* out, size_t max_rows) {
    cuptiActivityFlushAll(1);
    size_t n = __atomic_load_n(&timeline_count, __ATOMIC_RELAXED);
    size_t kept = n < timeline_capacity ? n : timeline_capacity;
    if (out) memcpy(out, timeline, (kept < max_rows ? kept : max_rows) * sizeof *out);
    return n;
}

void caspar_timeline_clear(void) {
    cuptiActivityFlushAll(1);
    __atomic_store_n(&timeline_count, 0, __ATOMIC_RELAXED);
}
