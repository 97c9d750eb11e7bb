/* The out-of-memory report: what a user hitting "out of memory" needs to know, for
 * every allocator in the suite. Filled by a backend's oom_report hook (lib/alloc.h):
 * raw and async find the largest block by a bounded probe of the device, the caching
 * allocator reads it from its own state, peers and plugins fill what their counters
 * say. Fields nobody can know are VL_UNKNOWN (-1), printed "unknown", never 0.
 *
 * Definitions (docs/oom-report.md has the format and an example):
 *   reserved_unused = reserved - allocated: memory the allocator holds but has not
 *     handed out (cached free blocks, rounding slack, frees still waiting on events);
 *   cached_free = free blocks the allocator can hand out without the device;
 *   largest_block = the largest single request that succeeds now (it also follows the
 *     allocator's size rules: a classic caching segment for a 1-10 MiB request is
 *     20 MiB, so with 8 MiB free the largest request is 1 MiB);
 *   largest_free = the largest piece of free memory the allocator can draw on: a
 *     cached free block, or the device's free memory as one allocation (raw, async:
 *     the probe's answer, which is the largest block);
 *   fragmentation = 1 - largest_free / (device_free + cached_free): the share of the
 *     free memory outside its largest piece (0: all of it in one piece; undefined
 *     when nothing is free);
 *   releasable = cache the allocator would give back to the device on empty_cache;
 *   fits_after_release = whether the request would succeed once that is given back
 *     (computed from state or estimated; the cache is not released to find out). */
#ifndef VL_OOM_REPORT_H
#define VL_OOM_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "spec.h"

typedef struct vl_oom_report {
    char alloc[VL_SPEC_MAX_TEXT];       /* the allocator's SPEC */
    int64_t request_bytes;              /* what the caller asked for */
    int64_t rounded_bytes;              /* the block the allocator needs for it (its rounding) */
    int64_t device_free_bytes, device_total_bytes;
    int64_t allocated_bytes, reserved_bytes, reserved_unused_bytes;
    int64_t cached_free_bytes;
    int64_t largest_block_bytes;
    int64_t largest_free_bytes;
    /* How largest_block was found: "allocator state", "probe" (then probe_attempts and
     * probe_resolution_bytes: a bisection of real allocations, a multiple of the
     * resolution, so a lower bound within one resolution), or "unknown". */
    const char *largest_block_method;
    int64_t probe_attempts, probe_resolution_bytes;
    double fragmentation;               /* NaN: unknown or undefined */
    int64_t releasable_bytes;
    int64_t largest_after_release_bytes;
    int fits_after_release;             /* 1 yes, 0 no, -1 unknown */
    const char *fits_after_release_basis; /* how it was decided, one phrase */
    int64_t ooms;                       /* OOMs of this allocator so far, this one included */
} vl_oom_report;

/* Every figure unknown, the method "unknown". */
void vl_oom_report_unknown(vl_oom_report *r);
/* fragmentation from largest_free, device_free and cached_free (NaN when one is unknown
 * or nothing is free). */
void vl_oom_report_derive_fragmentation(vl_oom_report *r);
/* The report as "key: value" lines, the first "oom_report: SPEC"; byte figures are
 * integers followed by a readable size in parentheses. Returns the length written
 * (truncated to len - 1). */
size_t vl_oom_report_format(const vl_oom_report *r, char *buf, size_t len);
/* The same to out, each line prefixed with `prefix` (may be ""). */
void vl_oom_report_print(const vl_oom_report *r, const char *prefix, FILE *out);

/* The bounded probe of raw and async: the largest multiple of VL_OOM_PROBE_RESOLUTION
 * in [resolution, upper] for which try_alloc(ctx, bytes) holds (it allocates `bytes`,
 * frees them at once and returns 1 if they fitted), by bisection assuming what fits at
 * n fits below n: at most 1 + ceil(log2(upper / resolution)) attempts (17 with 80 GiB
 * free). Sets largest_block and largest_free (0: not even one resolution fits), the method "probe",
 * probe_attempts and probe_resolution. */
#define VL_OOM_PROBE_RESOLUTION ((size_t)2 << 20)
typedef int (*vl_oom_probe_fn)(void *ctx, size_t bytes);
void vl_oom_report_probe(vl_oom_report *r, size_t upper, vl_oom_probe_fn try_alloc, void *ctx);

#endif
