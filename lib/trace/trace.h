/* Allocation traces: parsed from a file or a memory buffer into a flat list of
 * alloc/free operations that bench/replay plays against any allocator.
 * No CUDA here: parsers run (and are fuzzed) on machines without a GPU.
 *
 * Formats (--format; guessed from the first line when omitted):
 *
 *  vramlab   vramlab's own, one operation per line, fields separated by blanks:
 *                vramlab-trace 1            first line (optional with --format vramlab)
 *                # a comment                '#' lines and blank lines are skipped
 *                a ID SIZE [STREAM]         allocate SIZE bytes, name the block ID
 *                f ID [STREAM]              free the block named ID
 *            ID: an unsigned integer (decimal or 0x-hex; an address is fine), unique
 *            among live blocks, reusable after its free. SIZE: bytes, or lib/size.h
 *            syntax (4KiB, 1.5GiB). STREAM: an unsigned integer naming a stream
 *            (default 0 = the default stream); distinct numbers are distinct streams.
 *
 *  torch-csv PyTorch's snapshot device trace flattened to CSV (scripts/torch-snapshot-to-csv):
 *                action,addr,size,stream,time_us        header (columns in any order;
 *                                                       action, addr, size required)
 *            Actions: alloc; free_requested, free_completed; segment_alloc,
 *            segment_free, segment_map, segment_unmap and snapshot (the recording
 *            allocator's own work: counted, not replayed); oom (counted as a recorded
 *            OOM); free (older PyTorch: requested and completed at once).
 *            A free takes effect at free_completed by default: until then PyTorch
 *            keeps the block from reuse (another stream may still read it), so the
 *            memory is in use. VL_TRACE_FREE_AT_REQUESTED replays the program's own
 *            intent instead (frees at free_requested).
 *            Numbers: decimal or 0x-hex; time_us may be fractional or empty.
 *
 *  torch-pickle  torch.cuda.memory._snapshot() / _dump_snapshot() pickles: not parsed
 *            from a buffer (recognised by the pickle header); vl_trace_load (load.h)
 *            runs scripts/torch-snapshot-to-csv through a pipe and parses torch-csv.
 *
 *  rmm       RMM's logging_resource_adaptor CSV:
 *                Thread,Time,Action,Pointer,Size,Stream
 *            Actions allocate, free ("allocate failure" / "failure": a recorded OOM).
 *
 * Addresses are matched exactly: an alloc at an address that is still live is a
 * malformed trace; a free of an address that is not live is an "unknown free",
 * counted with the first few line numbers and left out of the operations.
 * Every stream value seen gets an index (0 = the first one seen); the caller maps
 * indices to real streams. Streams named 0 are the default stream (stream_is_default).
 *
 * Robustness: parsers accept any byte sequence (NUL bytes, no final newline, very
 * long lines) and either succeed or return -1 with "LINE: reason" in err. */
#ifndef VL_TRACE_H
#define VL_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum vl_trace_format {
    VL_TRACE_AUTO = 0,
    VL_TRACE_VRAMLAB,
    VL_TRACE_TORCH_CSV,
    VL_TRACE_TORCH_PICKLE,
    VL_TRACE_RMM
} vl_trace_format;

typedef enum vl_trace_free_at {
    VL_TRACE_FREE_AT_COMPLETED = 0, /* torch-csv: free at free_completed (default) */
    VL_TRACE_FREE_AT_REQUESTED      /* torch-csv: free at free_requested */
} vl_trace_free_at;

enum { VL_TRACE_ALLOC = 0, VL_TRACE_FREE = 1 };

/* One operation. Invariant: a FREE's slot names an earlier ALLOC's slot, freed once;
 * slots are numbered 0.. in the order of their ALLOCs (slot i is the i-th alloc). */
typedef struct vl_trace_op {
    uint64_t size;   /* ALLOC: bytes asked for; FREE: the size of the block freed */
    uint32_t slot;   /* the block */
    uint32_t stream; /* index into vl_trace.stream_ids */
    uint32_t line;   /* source line, for messages */
    uint8_t kind;    /* VL_TRACE_ALLOC or VL_TRACE_FREE */
} vl_trace_op;

#define VL_TRACE_FIRST_UNKNOWN 8

typedef struct vl_trace {
    vl_trace_format format;
    vl_trace_op *ops;
    size_t nops, ops_cap;
    size_t nallocs, nfrees;           /* nallocs == number of slots */
    uint64_t *stream_ids;             /* the trace's own stream values, by index */
    uint32_t nstreams, streams_cap;
    size_t unknown_frees;             /* frees of addresses not live at that point */
    uint32_t unknown_free_lines[VL_TRACE_FIRST_UNKNOWN];
    size_t recorded_ooms;             /* OOMs the trace itself recorded */
    size_t skipped_records;           /* segment_*, snapshot: the recorder's own work */
    size_t live_at_end;               /* blocks never freed in the trace */
    uint64_t peak_live_bytes;         /* max over time of the live requested bytes */
    uint64_t total_alloc_bytes;
} vl_trace;

typedef struct vl_trace_options {
    vl_trace_format format;           /* VL_TRACE_AUTO: guess */
    vl_trace_free_at free_at;
} vl_trace_options;

/* Parses len bytes of data. Returns 0, or -1 with "LINE: reason" (or a reason
 * without a line) in err; *out is then empty (nothing to free, but vl_trace_free is
 * harmless). fmt VL_TRACE_AUTO guesses. Never touches CUDA, never reads past len. */
int vl_trace_parse_buffer(const char *data, size_t len, vl_trace_format fmt, vl_trace *out,
                          char *err, size_t errlen);
int vl_trace_parse_buffer_opts(const char *data, size_t len, const vl_trace_options *opt,
                               vl_trace *out, char *err, size_t errlen);
/* Reads a whole stream (a file, stdin, a pipe) and parses it. */
int vl_trace_parse_file(FILE *in, const vl_trace_options *opt, vl_trace *out, char *err, size_t errlen);
void vl_trace_free(vl_trace *t);

/* The one sniff rule, from the first bytes (two suffice for a pickle, the first
 * non-comment line for the text formats); VL_TRACE_AUTO when nothing fits. */
vl_trace_format vl_trace_guess(const char *data, size_t len);
const char *vl_trace_format_name(vl_trace_format f);
/* "vramlab", "torch-csv", "torch-pickle", "rmm", "auto"; -1 when unknown. */
int vl_trace_format_parse(const char *name, vl_trace_format *out);
/* Whether stream index i is the trace's default stream (its value is 0). */
int vl_trace_stream_is_default(const vl_trace *t, uint32_t i);

#endif
