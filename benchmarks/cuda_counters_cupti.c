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
 * type; ...} -- read at those offsets so that the struct's version does not matter. */
#include <cupti.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BUFFER_BYTES (1 << 20)

extern void caspar_count_add(int counter, unsigned long long n);
extern void caspar_count_seen(int counter);

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
            if (bytes[4] == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH) ++reads;
        } else if (record->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) {
            uint32_t type;
            memcpy(&type, bytes + 4, sizeof type);
            if (type != CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT) ++syncs;
        }
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
    return 1;
}

void caspar_cupti_flush(void) { cuptiActivityFlushAll(1); }
