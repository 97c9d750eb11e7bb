/* Writes a vramlab-format trace (trace.h) of the operations a live allocator sees, so
 * that a real program's allocations can be replayed later, on the simulated device too
 * (bench/replay --device sim). The PyTorch plugin records with it (VRAMLAB_TRACE=FILE).
 *
 * Lines: "a 0xADDR SIZE STREAM" and "f 0xADDR STREAM"; the address names the block
 * (unique among live blocks, as the format requires) and the stream is the handle's
 * value as an integer (0: the default stream). Thread-safe: a mutex orders the lines as
 * the calls took it. A write error is reported once on stderr and recording stops; the
 * host program goes on (the recorder never ends its process). */
#ifndef VL_TRACE_RECORD_H
#define VL_TRACE_RECORD_H

#include <stddef.h>
#include <stdint.h>

typedef struct vl_trace_recorder vl_trace_recorder;

/* Opens (truncates) path and writes the header; NULL with a reason in err. */
vl_trace_recorder *vl_trace_record_open(const char *path, char *err, size_t errlen);
void vl_trace_record_alloc(vl_trace_recorder *r, const void *addr, size_t size, uintptr_t stream);
void vl_trace_record_free(vl_trace_recorder *r, const void *addr, uintptr_t stream);
/* Flushes and closes; returns 0, or -1 when a write failed at any point. */
int vl_trace_record_close(vl_trace_recorder *r);

#endif
