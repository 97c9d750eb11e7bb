/* The simulated device ("--device sim[:capacity=80GiB,...]"): a vl_device that touches
 * no memory, so the caching allocator's policy can be unit-tested and real traces
 * replayed on a machine without a GPU.
 *
 * What it models, and why:
 *   - Capacity only, no external fragmentation: the CUDA driver remaps physical pages,
 *     so a plain allocation succeeds whenever enough bytes are free, even when no free
 *     hole is as large as the request. mem_alloc fails with
 *     VL_DEV_OOM only past capacity.
 *   - Fake addresses from a bump pointer that never reuses a range: live allocations
 *     can never overlap, and a stale pointer can never alias a new one.
 *   - Virtual memory with the driver's rules: map/unmap sizes and addresses are
 *     granularity multiples inside a reservation, a range is mapped once, unmap takes
 *     exactly a range one map call created, a reservation is released unmapped.
 *     A misuse is VL_DEV_ERROR with one line on stderr (tests provoke it on purpose).
 *   - Events that complete immediately (default) or only when the program says so
 *     (events=manual, vl_sim_complete_stream/_all), so cross-stream reuse is testable.
 * Every operation takes one mutex; the hot path of a trace replay (the allocator's
 * cache hits) never reaches the device anyway. */
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrmap.h"
#include "device.h"
#include "exitcodes.h"

const vl_opt vl_device_sim_options[] = {
    {.name = "capacity", .kind = VL_OPT_SIZE, .default_value = "80GiB",
     .help = "device memory capacity",
     .positional = 1},
    {.name = "granularity", .kind = VL_OPT_SIZE, .default_value = "2MiB",
     .help = "VMM allocation granularity (a power of two >= 512 B)"},
    {.name = "events", .kind = VL_OPT_ENUM, .default_value = "immediate", .choices = "immediate|manual",
     .help = "immediate: every event is complete when queried; manual: only after vl_sim_complete_*"},
    {.name = "overhead", .kind = VL_OPT_SIZE, .default_value = "0",
     .help = "memory a context holds before any allocation (a real CUDA context: ~527 MiB)"},
    {.name = "vmm", .kind = VL_OPT_BOOL, .default_value = "1",
     .help = "virtual memory (map/unmap) supported; 0 makes it VL_DEV_UNSUPPORTED"},
    {.name = "fail_alloc", .kind = VL_OPT_INT, .default_value = "0",
     .help = "the Nth mem_alloc fails with a device error (0: never)"},
    {.name = "fail_free", .kind = VL_OPT_INT, .default_value = "0",
     .help = "the Nth mem_free fails with a device error (0: never)"},
    {.name = "fail_reserve", .kind = VL_OPT_INT, .default_value = "0",
     .help = "the Nth va_reserve fails with a device error (0: never)"},
    {.name = "fail_release", .kind = VL_OPT_INT, .default_value = "0",
     .help = "the Nth va_release fails with a device error (0: never)"},
    {.name = "fail_map", .kind = VL_OPT_INT, .default_value = "0",
     .help = "the Nth map (create + map of a chunk) fails with a device error (0: never)"},
    {.name = "fail_unmap", .kind = VL_OPT_INT, .default_value = "0",
     .help = "the Nth unmap fails with a device error (0: never)"},
    {.name = "fail_event", .kind = VL_OPT_INT, .default_value = "0",
     .help = "the Nth event_record fails with a device error (0: never)"},
    {.name = "fail_query", .kind = VL_OPT_INT, .default_value = "0",
     .help = "the Nth event_query fails with a device error (0: never)"},
    {.name = "fail_sync", .kind = VL_OPT_INT, .default_value = "0",
     .help = "the Nth synchronize fails with a device error (0: never)"},
    {.name = "fail_phys", .kind = VL_OPT_INT, .default_value = "0",
     .help = "the Nth phys_release or phys_share fails with a device error (0: never)"},
    {NULL},
};

/* Address space handed out by the bump pointer: starts at 1 TiB (never 0, never near
 * small integers) and grows towards 2^63, which no run can exhaust. */
#define SIM_BASE_ADDRESS (UINT64_C(1) << 40)
#define SIM_PLAIN_ALIGN UINT64_C(512)

/* One va_reserve. Invariant: mapped_bits has one bit per granule, set while that granule
 * belongs to a live map() range; start_bits (the second half of the same array) marks
 * the first granule of each live map() range, so "exactly one range a map call made"
 * is a check of neighbouring bits, with no table of ranges (a table of every mapping
 * would be the sim's largest cost with hundreds of thousands of chunks mapped); mapped_bytes =
 * granularity * popcount(mapped_bits). */
typedef struct sim_reservation {
    uint64_t base, size;
    uint64_t *mapped_bits, *start_bits;
    uint64_t mapped_bytes;
} sim_reservation;

/* Physical memory kept by unmap_keep: its size, and a tag so misuse (a handle used
 * twice, a foreign pointer) is caught. */
#define SIM_PHYS_TAG UINT64_C(0x7068797373696d21)
typedef struct sim_phys {
    uint64_t tag;
    uint64_t size;
    int shared; /* from phys_share: the memory is mapped elsewhere too (counted there) */
} sim_phys;

/* A simulated event: complete once its stream's completed sequence number reaches seq. */
typedef struct sim_event {
    vl_stream stream;
    uint64_t seq;
    int live;
    struct sim_event *next_free;
} sim_event;

typedef struct sim_stream {
    vl_stream stream;
    uint64_t recorded;  /* sequence number of the last event recorded on it */
    uint64_t completed; /* every event with seq <= completed is complete */
} sim_stream;

#define SIM_EVENT_CHUNK 256
typedef struct sim_event_chunk {
    struct sim_event_chunk *next;
    sim_event events[SIM_EVENT_CHUNK];
} sim_event_chunk;

typedef struct sim_device {
    vl_device dev;
    pthread_mutex_t lock;
    uint64_t capacity, overhead, granularity;
    int manual_events;
    uint64_t next_address;       /* bump pointer */
    uint64_t used_bytes;         /* plain allocations + mapped granules - shared_bytes + kept memory */
    uint64_t mapped_bytes;       /* mapped granules */
    size_t live_phys;            /* sim_phys records alive (unmap_keep, phys_share) */
    uint64_t shared_bytes;       /* second mappings of shared memory (phys_share): mapped,
                                    not counted again in used_bytes */
    vl_addrmap plain;            /* plain allocation address -> size */
    sim_reservation *reservations; /* sorted by base (the bump pointer only grows) */
    size_t nreservations, reservations_cap;
    sim_stream *streams;
    size_t nstreams, streams_cap;
    sim_event_chunk *event_chunks;
    sim_event *free_events;
    size_t live_events;
    /* Fault injection: calls[op] counts calls of each kind; the call whose number is
     * fail_at[op] fails (0: none). */
    uint64_t calls[VL_SIM_OPS], fail_at[VL_SIM_OPS];
} sim_device;

static const char *const fault_keys[VL_SIM_OPS] = {"fail_alloc",   "fail_free", "fail_reserve",
                                                   "fail_release", "fail_map",  "fail_unmap",
                                                   "fail_event",   "fail_query", "fail_sync",
                                                   "fail_phys"};

static sim_device *sim_of(vl_device *d) { return (sim_device *)d->impl; }

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

/* Counts a failed call on the device; the first one's reason is kept for the program
 * to report. Caller holds the lock (or is single-threaded: open/close). */
static void count_failure(sim_device *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void count_failure(sim_device *s, const char *fmt, ...)
{
    if (s->dev.failed_calls++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->dev.first_failure, sizeof s->dev.first_failure, fmt, ap);
        va_end(ap);
    }
}

static int sim_misuse(sim_device *s, const char *what, void *addr, size_t size)
{
    fprintf(stderr, "sim device: %s (address %p, size %zu)\n", what, addr, size);
    count_failure(s, "sim device: %s", what);
    return VL_DEV_ERROR;
}

/* Counts a call of kind op; 1 when it is the one to fail. The program reports it (one
 * line, at its end, with a failing exit status). Caller holds the lock. */
static int injected_fault(sim_device *s, vl_sim_op op)
{
    if (++s->calls[op] != s->fail_at[op]) return 0;
    count_failure(s, "sim device: injected failure of %s call %llu", fault_keys[op] + 5,
                  (unsigned long long)s->calls[op]);
    return 1;
}

/* The vl_sim_* test hooks take any device: they act on a simulated one only. lock_sim
 * is their way in, the simulator with its lock held, or NULL for a real device;
 * unlock_sim(NULL) does nothing, so a hook reads as lock, act if there, unlock. */
static sim_device *lock_sim(vl_device *d)
{
    if (!d || !d->simulated) return NULL;
    sim_device *s = sim_of(d);
    pthread_mutex_lock(&s->lock);
    return s;
}

static void unlock_sim(sim_device *s)
{
    if (s) pthread_mutex_unlock(&s->lock);
}

void vl_sim_fail_nth(vl_device *d, vl_sim_op op, uint64_t n)
{
    if ((unsigned)op >= VL_SIM_OPS) return;
    sim_device *s = lock_sim(d);
    if (s) s->fail_at[op] = n ? s->calls[op] + n : 0;
    unlock_sim(s);
}

uint64_t vl_sim_calls(vl_device *d, vl_sim_op op)
{
    if ((unsigned)op >= VL_SIM_OPS) return 0;
    sim_device *s = lock_sim(d);
    uint64_t n = s ? s->calls[op] : 0;
    unlock_sim(s);
    return n;
}

/* --- plain allocations ------------------------------------------------------------ */

static int sim_mem_alloc(vl_device *d, size_t size, void **out)
{
    sim_device *s = sim_of(d);
    *out = NULL;
    if (size == 0) return sim_misuse(s, "mem_alloc of 0 bytes", NULL, 0);
    pthread_mutex_lock(&s->lock);
    int rc = VL_DEV_OK;
    if (injected_fault(s, VL_SIM_MEM_ALLOC)) {
        rc = VL_DEV_ERROR;
    } else if (size > s->capacity - s->overhead - s->used_bytes) {
        rc = VL_DEV_OOM;
    } else {
        uint64_t addr = s->next_address;
        if (vl_addrmap_insert(&s->plain, (uintptr_t)addr, size) != 0) {
            rc = sim_misuse(s, "out of host memory", NULL, size);
        } else {
            s->next_address = align_up(addr + size, SIM_PLAIN_ALIGN);
            s->used_bytes += size;
            *out = (void *)(uintptr_t)addr;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int sim_mem_free(vl_device *d, void *ptr, size_t size)
{
    sim_device *s = sim_of(d);
    pthread_mutex_lock(&s->lock);
    uint64_t held;
    int rc = VL_DEV_OK;
    if (injected_fault(s, VL_SIM_MEM_FREE)) {
        rc = VL_DEV_ERROR;
    } else if (!vl_addrmap_remove(&s->plain, (uintptr_t)ptr, &held)) {
        rc = sim_misuse(s, "mem_free of an address mem_alloc did not return", ptr, size);
    } else if (held != size) {
        vl_addrmap_insert(&s->plain, (uintptr_t)ptr, held); /* leave it allocated */
        rc = sim_misuse(s, "mem_free with a size other than the allocated one", ptr, size);
    } else {
        s->used_bytes -= size;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* --- virtual memory --------------------------------------------------------------- */

/* The reservation containing [addr, addr+size), or NULL. Caller holds the lock. */
static sim_reservation *find_reservation(sim_device *s, uint64_t addr, uint64_t size)
{
    size_t lo = 0, hi = s->nreservations;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->reservations[mid].base <= addr) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return NULL;
    sim_reservation *r = &s->reservations[lo - 1];
    if (addr - r->base > r->size || size > r->size - (addr - r->base)) return NULL;
    return r;
}

static int sim_va_reserve(vl_device *d, size_t size, void **out)
{
    sim_device *s = sim_of(d);
    *out = NULL;
    if (!d->vmm_supported) return VL_DEV_UNSUPPORTED;
    if (size == 0 || size % s->granularity) return sim_misuse(s, "va_reserve size not a granularity multiple", NULL, size);
    pthread_mutex_lock(&s->lock);
    int rc = VL_DEV_OK;
    if (injected_fault(s, VL_SIM_VA_RESERVE)) {
        pthread_mutex_unlock(&s->lock);
        return VL_DEV_ERROR;
    }
    if (s->nreservations == s->reservations_cap) {
        size_t cap = s->reservations_cap ? s->reservations_cap * 2 : 8;
        sim_reservation *grown = realloc(s->reservations, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&s->lock);
            return sim_misuse(s, "out of host memory", NULL, size);
        }
        s->reservations = grown;
        s->reservations_cap = cap;
    }
    uint64_t granules = size / s->granularity;
    uint64_t words = (granules + 63) / 64;
    uint64_t *bits = calloc(2 * words, sizeof *bits);
    if (!bits) {
        rc = sim_misuse(s, "out of host memory", NULL, size);
    } else {
        uint64_t base = align_up(s->next_address, s->granularity);
        s->next_address = base + size;
        s->reservations[s->nreservations++] = (sim_reservation){base, size, bits, bits + words, 0};
        *out = (void *)(uintptr_t)base;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int sim_va_release(vl_device *d, void *addr, size_t size)
{
    sim_device *s = sim_of(d);
    if (!d->vmm_supported) return VL_DEV_UNSUPPORTED;
    pthread_mutex_lock(&s->lock);
    int rc = VL_DEV_OK;
    sim_reservation *r = find_reservation(s, (uintptr_t)addr, size);
    if (injected_fault(s, VL_SIM_VA_RELEASE)) {
        rc = VL_DEV_ERROR;
    } else if (!r || r->base != (uintptr_t)addr || r->size != size) {
        rc = sim_misuse(s, "va_release of a range va_reserve did not return", addr, size);
    } else if (r->mapped_bytes != 0) {
        rc = sim_misuse(s, "va_release of a reservation that still has mappings", addr, size);
    } else {
        free(r->mapped_bits);
        size_t i = (size_t)(r - s->reservations);
        memmove(r, r + 1, (s->nreservations - i - 1) * sizeof *r);
        s->nreservations--;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Checks [first, first+count) granules: returns 1 if any bit is set. */
static int any_bit(const uint64_t *bits, uint64_t first, uint64_t count)
{
    for (uint64_t g = first; g < first + count; g++)
        if (bits[g / 64] >> (g % 64) & 1) return 1;
    return 0;
}

static void set_bits(uint64_t *bits, uint64_t first, uint64_t count, int on)
{
    for (uint64_t g = first; g < first + count; g++) {
        if (on) bits[g / 64] |= UINT64_C(1) << (g % 64);
        else bits[g / 64] &= ~(UINT64_C(1) << (g % 64));
    }
}

/* Marks the size bytes at granule first of r as one mapped range (on = 1) or as unmapped
 * (on = 0): its granules, where it starts, and the mapped-byte counts, which map and
 * unmap must change alike. Caller holds the lock. */
static void mark_range(sim_device *s, sim_reservation *r, uint64_t first, size_t size, int on)
{
    set_bits(r->mapped_bits, first, size / s->granularity, on);
    set_bits(r->start_bits, first, 1, on);
    r->mapped_bytes = on ? r->mapped_bytes + size : r->mapped_bytes - size;
    s->mapped_bytes = on ? s->mapped_bytes + size : s->mapped_bytes - size;
}

/* One step of a VMM call on [addr, addr+size), run under the lock: what map, unmap,
 * unmap_shared, unmap_keep and phys_share do to the simulated device. */
typedef int (*locked_step)(sim_device *s, void *addr, size_t size);

/* The VMM calls that are one step under the lock (map, unmap, unmap_shared). */
static int vmm_call(vl_device *d, void *addr, size_t size, locked_step step)
{
    sim_device *s = sim_of(d);
    if (!d->vmm_supported) return VL_DEV_UNSUPPORTED;
    pthread_mutex_lock(&s->lock);
    int rc = step(s, addr, size);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Maps [addr, addr+size); fresh = 1 takes new memory from the capacity, 0 maps memory
 * kept by unmap_keep (already counted). Caller holds the lock. */
static int map_locked(sim_device *s, void *addr, size_t size, int fresh)
{
    uint64_t a = (uintptr_t)addr;
    if (size == 0 || size % s->granularity || a % s->granularity)
        return sim_misuse(s, "map of a range that is not granularity-aligned", addr, size);
    sim_reservation *r = find_reservation(s, a, size);
    uint64_t first = r ? (a - r->base) / s->granularity : 0, count = size / s->granularity;
    if (injected_fault(s, VL_SIM_MAP)) return VL_DEV_ERROR;
    if (!r) return sim_misuse(s, "map outside every reservation", addr, size);
    if (any_bit(r->mapped_bits, first, count)) return sim_misuse(s, "map of a range that is already (partly) mapped", addr, size);
    if (fresh && size > s->capacity - s->overhead - s->used_bytes) return VL_DEV_OOM;
    mark_range(s, r, first, size, 1);
    if (fresh) s->used_bytes += size;
    return VL_DEV_OK;
}

static int map_fresh_locked(sim_device *s, void *addr, size_t size) { return map_locked(s, addr, size, 1); }

static int sim_map(vl_device *d, void *addr, size_t size) { return vmm_call(d, addr, size, map_fresh_locked); }

/* The reservation holding [addr, addr+size) if that is exactly one map() range: it
 * starts there, covers the range, no other starts inside, and it ends there (the next
 * granule is unmapped or starts another range); else NULL. Caller holds the lock. */
static sim_reservation *one_mapped_range(sim_device *s, void *addr, size_t size)
{
    sim_reservation *r = find_reservation(s, (uintptr_t)addr, size);
    uint64_t a = (uintptr_t)addr;
    if (!r || size == 0 || size % s->granularity || a % s->granularity) return NULL;
    uint64_t first = (a - r->base) / s->granularity, count = size / s->granularity;
    uint64_t granules = r->size / s->granularity, after = first + count;
    int exact = any_bit(r->start_bits, first, 1) && !any_bit(r->start_bits, first + 1, count - 1);
    for (uint64_t g = first; exact && g < after; g++) exact = any_bit(r->mapped_bits, g, 1);
    if (exact && after < granules) exact = !any_bit(r->mapped_bits, after, 1) || any_bit(r->start_bits, after, 1);
    return exact ? r : NULL;
}

/* Unmaps exactly one mapped range; keep = 1 leaves its memory counted (unmap_keep).
 * Caller holds the lock. */
static int unmap_locked(sim_device *s, void *addr, size_t size, int keep)
{
    if (injected_fault(s, VL_SIM_UNMAP)) return VL_DEV_ERROR;
    sim_reservation *r = one_mapped_range(s, addr, size);
    if (!r) return sim_misuse(s, "unmap of a range that is not exactly one mapped range", addr, size);
    mark_range(s, r, ((uintptr_t)addr - r->base) / s->granularity, size, 0);
    if (!keep) s->used_bytes -= size;
    return VL_DEV_OK;
}

/* Like cuMemUnmap: no waiting. Whether queued work still used the range is the
 * caller's business (device.h); tests check the allocator's ordering through
 * events=manual and vl_sim_is_mapped. */
static int unmap_free_locked(sim_device *s, void *addr, size_t size) { return unmap_locked(s, addr, size, 0); }

static int sim_unmap(vl_device *d, void *addr, size_t size) { return vmm_call(d, addr, size, unmap_free_locked); }

/* --- physical memory handles (unmap_keep, phys_share; map_phys, phys_release) ----- */

/* A new handle to the size bytes at addr, made by unmap_keep and phys_share alike: the
 * record is allocated before the lock is taken, so that running out of host memory
 * changes nothing on the device, and handed out (and counted) only when step succeeds. */
static int new_phys(vl_device *d, void *addr, size_t size, int shared, locked_step step, vl_phys *out)
{
    sim_device *s = sim_of(d);
    *out = NULL;
    if (!d->vmm_supported) return VL_DEV_UNSUPPORTED;
    sim_phys *ph = malloc(sizeof *ph);
    if (!ph) return sim_misuse(s, "out of host memory", addr, size);
    pthread_mutex_lock(&s->lock);
    int rc = step(s, addr, size);
    if (rc == VL_DEV_OK) {
        *ph = (sim_phys){SIM_PHYS_TAG, size, shared};
        *out = (vl_phys)ph;
        s->live_phys++;
        ph = NULL;
    }
    pthread_mutex_unlock(&s->lock);
    free(ph);
    return rc;
}

/* The handles map_phys and phys_release take: one that new_phys made and that is still
 * live (the tag is cleared when a handle is used up). */
static int is_live_phys(const sim_phys *ph) { return ph && ph->tag == SIM_PHYS_TAG; }

/* A handle that map_phys or phys_release used up. The tag is cleared before the free
 * so that a second use of the same pointer, while malloc has not handed that memory
 * out again, reads as misuse. */
static void retire_phys(sim_phys *ph)
{
    ph->tag = 0;
    free(ph);
}

static int keep_locked(sim_device *s, void *addr, size_t size) { return unmap_locked(s, addr, size, 1); }

static int sim_unmap_keep(vl_device *d, void *addr, size_t size, vl_phys *out)
{
    return new_phys(d, addr, size, 0, keep_locked, out);
}

static int sim_map_phys(vl_device *d, void *addr, size_t size, vl_phys phys)
{
    sim_device *s = sim_of(d);
    if (!d->vmm_supported) return VL_DEV_UNSUPPORTED;
    sim_phys *ph = (sim_phys *)phys;
    if (!is_live_phys(ph)) return sim_misuse(s, "map_phys of memory unmap_keep did not return", addr, size);
    if (ph->size != size) return sim_misuse(s, "map_phys with a size other than the kept one", addr, size);
    pthread_mutex_lock(&s->lock);
    int rc = map_locked(s, addr, size, 0);
    if (rc == VL_DEV_OK) {
        s->live_phys--;
        if (ph->shared) s->shared_bytes += size;
    }
    pthread_mutex_unlock(&s->lock);
    if (rc == VL_DEV_OK) retire_phys(ph);
    return rc;
}

/* Sharing changes nothing on the device: the range must be one mapping. Its faults are
 * injected as phys_release's (the simulator has no key of its own for them). */
static int share_locked(sim_device *s, void *addr, size_t size)
{
    if (injected_fault(s, VL_SIM_PHYS_RELEASE)) return VL_DEV_ERROR;
    if (!one_mapped_range(s, addr, size))
        return sim_misuse(s, "phys_share of a range that is not exactly one mapped range", addr, size);
    return VL_DEV_OK;
}

static int sim_phys_share(vl_device *d, void *addr, size_t size, vl_phys *out)
{
    return new_phys(d, addr, size, 1, share_locked, out);
}

/* Unmaps one of two mappings of shared memory: the memory stays counted (the other
 * mapping holds it). More than the shared bytes there are is a misuse. */
static int unmap_shared_locked(sim_device *s, void *addr, size_t size)
{
    int rc = s->shared_bytes < size ? sim_misuse(s, "unmap_shared of memory that is not mapped twice", addr, size)
                                    : unmap_locked(s, addr, size, 1);
    if (rc == VL_DEV_OK) s->shared_bytes -= size;
    return rc;
}

static int sim_unmap_shared(vl_device *d, void *addr, size_t size)
{
    return vmm_call(d, addr, size, unmap_shared_locked);
}

static int sim_phys_release(vl_device *d, vl_phys phys, size_t size)
{
    sim_device *s = sim_of(d);
    if (!d->vmm_supported) return VL_DEV_UNSUPPORTED;
    sim_phys *ph = (sim_phys *)phys;
    if (!is_live_phys(ph) || ph->size != size)
        return sim_misuse(s, "phys_release of memory unmap_keep did not return (or of another size)", phys, size);
    pthread_mutex_lock(&s->lock);
    int rc = VL_DEV_OK;
    if (injected_fault(s, VL_SIM_PHYS_RELEASE)) {
        rc = VL_DEV_ERROR;
    } else {
        if (!ph->shared) s->used_bytes -= size; /* a shared handle's memory stays mapped */
        s->live_phys--;
    }
    pthread_mutex_unlock(&s->lock);
    if (rc == VL_DEV_OK) retire_phys(ph);
    return rc;
}

static sim_stream *stream_of(sim_device *s, vl_stream st);

/* --- events ----------------------------------------------------------------------- */

/* The stream's record, created on first use. Caller holds the lock. */
static sim_stream *stream_of(sim_device *s, vl_stream st)
{
    for (size_t i = 0; i < s->nstreams; i++)
        if (s->streams[i].stream == st) return &s->streams[i];
    if (s->nstreams == s->streams_cap) {
        size_t cap = s->streams_cap ? s->streams_cap * 2 : 8;
        sim_stream *grown = realloc(s->streams, cap * sizeof *grown);
        if (!grown) return NULL;
        s->streams = grown;
        s->streams_cap = cap;
    }
    s->streams[s->nstreams] = (sim_stream){st, 0, 0};
    return &s->streams[s->nstreams++];
}

static int sim_event_record(vl_device *d, vl_stream st, vl_event *out)
{
    sim_device *s = sim_of(d);
    *out = NULL;
    pthread_mutex_lock(&s->lock);
    if (injected_fault(s, VL_SIM_EVENT_RECORD)) {
        pthread_mutex_unlock(&s->lock);
        return VL_DEV_ERROR;
    }
    int rc = VL_DEV_OK;
    sim_stream *ss = stream_of(s, st);
    if (!s->free_events) {
        sim_event_chunk *c = ss ? calloc(1, sizeof *c) : NULL;
        if (c) {
            c->next = s->event_chunks;
            s->event_chunks = c;
            for (size_t i = 0; i < SIM_EVENT_CHUNK; i++) {
                c->events[i].next_free = s->free_events;
                s->free_events = &c->events[i];
            }
        }
    }
    if (!ss || !s->free_events) {
        rc = sim_misuse(s, "out of host memory", NULL, 0);
    } else {
        sim_event *e = s->free_events;
        s->free_events = e->next_free;
        e->stream = st;
        e->seq = ++ss->recorded;
        e->live = 1;
        s->live_events++;
        *out = (vl_event)e;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int event_complete_locked(sim_device *s, const sim_event *e)
{
    if (!s->manual_events) return 1;
    sim_stream *ss = stream_of(s, e->stream);
    return ss && e->seq <= ss->completed;
}

static int sim_event_query(vl_device *d, vl_event ev)
{
    sim_device *s = sim_of(d);
    sim_event *e = (sim_event *)ev;
    if (!e || !e->live) return sim_misuse(s, "event_query of an event that is not live", ev, 0), -1;
    pthread_mutex_lock(&s->lock);
    int done = injected_fault(s, VL_SIM_EVENT_QUERY) ? -1 : event_complete_locked(s, e);
    pthread_mutex_unlock(&s->lock);
    return done;
}

static void sim_event_release(vl_device *d, vl_event ev)
{
    sim_device *s = sim_of(d);
    sim_event *e = (sim_event *)ev;
    if (!e) return;
    pthread_mutex_lock(&s->lock);
    if (!e->live) {
        sim_misuse(s, "event_release of an event that is not live", ev, 0);
    } else {
        e->live = 0;
        e->next_free = s->free_events;
        s->free_events = e;
        s->live_events--;
    }
    pthread_mutex_unlock(&s->lock);
}

void vl_sim_complete_stream(vl_device *d, vl_stream st)
{
    sim_device *s = lock_sim(d);
    sim_stream *ss = s ? stream_of(s, st) : NULL;
    if (ss) ss->completed = ss->recorded;
    unlock_sim(s);
}

static void complete_all_locked(sim_device *s)
{
    for (size_t i = 0; i < s->nstreams; i++) s->streams[i].completed = s->streams[i].recorded;
}

void vl_sim_complete_all(vl_device *d)
{
    sim_device *s = lock_sim(d);
    if (s) complete_all_locked(s);
    unlock_sim(s);
}

size_t vl_sim_pending_events(vl_device *d)
{
    sim_device *s = lock_sim(d);
    size_t pending = 0;
    for (sim_event_chunk *c = s ? s->event_chunks : NULL; c; c = c->next)
        for (size_t i = 0; i < SIM_EVENT_CHUNK; i++)
            if (c->events[i].live && !event_complete_locked(s, &c->events[i])) pending++;
    unlock_sim(s);
    return pending;
}

/* vl_sim_used_bytes and vl_sim_mapped_bytes: one of the two byte counts, read under
 * the lock. */
static size_t read_bytes(vl_device *d, int mapped)
{
    sim_device *s = lock_sim(d);
    size_t n = !s ? 0 : mapped ? s->mapped_bytes : s->used_bytes;
    unlock_sim(s);
    return n;
}

size_t vl_sim_mapped_bytes(vl_device *d) { return read_bytes(d, 1); }

size_t vl_sim_used_bytes(vl_device *d) { return read_bytes(d, 0); }

int vl_sim_is_mapped(vl_device *d, void *addr)
{
    sim_device *s = lock_sim(d);
    sim_reservation *r = s ? find_reservation(s, (uintptr_t)addr, 1) : NULL;
    int mapped = r && any_bit(r->mapped_bits, ((uintptr_t)addr - r->base) / s->granularity, 1);
    unlock_sim(s);
    return mapped;
}

/* --- the rest --------------------------------------------------------------------- */

static int sim_synchronize(vl_device *d)
{
    /* Waiting for all work completes every event recorded so far. */
    sim_device *s = sim_of(d);
    pthread_mutex_lock(&s->lock);
    int failed = injected_fault(s, VL_SIM_SYNCHRONIZE);
    if (!failed) complete_all_locked(s);
    pthread_mutex_unlock(&s->lock);
    return failed ? VL_DEV_ERROR : VL_DEV_OK;
}

static int sim_mem_info(vl_device *d, size_t *free_bytes, size_t *total_bytes)
{
    sim_device *s = sim_of(d);
    pthread_mutex_lock(&s->lock);
    if (free_bytes) *free_bytes = s->capacity - s->overhead - s->used_bytes;
    if (total_bytes) *total_bytes = s->capacity;
    pthread_mutex_unlock(&s->lock);
    return VL_DEV_OK;
}

static void sim_close(vl_device *d)
{
    sim_device *s = sim_of(d);
    if (!s) return;
    for (size_t i = 0; i < s->nreservations; i++) free(s->reservations[i].mapped_bits);
    free(s->reservations);
    free(s->streams);
    while (s->event_chunks) {
        sim_event_chunk *next = s->event_chunks->next;
        free(s->event_chunks);
        s->event_chunks = next;
    }
    vl_addrmap_destroy(&s->plain);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static const vl_device_ops sim_ops = {
    .mem_alloc = sim_mem_alloc,
    .mem_free = sim_mem_free,
    .va_reserve = sim_va_reserve,
    .va_release = sim_va_release,
    .map = sim_map,
    .unmap = sim_unmap,
    .unmap_keep = sim_unmap_keep,
    .map_phys = sim_map_phys,
    .phys_release = sim_phys_release,
    .phys_share = sim_phys_share,
    .unmap_shared = sim_unmap_shared,
    .event_record = sim_event_record,
    .event_query = sim_event_query,
    .event_release = sim_event_release,
    .synchronize = sim_synchronize,
    .mem_info = sim_mem_info,
    .close = sim_close,
};

vl_device *vl_device_sim_open(const vl_spec *spec, int *status, char *err, size_t errlen)
{
    *status = VL_EXIT_USAGE; /* a SPEC that cannot work */
    uint64_t capacity = vl_spec_size(spec, "capacity");
    uint64_t granularity = vl_spec_size(spec, "granularity");
    uint64_t overhead = vl_spec_size(spec, "overhead");
    if (capacity == 0) {
        snprintf(err, errlen, "sim: capacity must be > 0");
        return NULL;
    }
    if (granularity < 512 || (granularity & (granularity - 1))) {
        snprintf(err, errlen, "sim: granularity must be a power of two >= 512 B");
        return NULL;
    }
    if (overhead >= capacity) {
        snprintf(err, errlen, "sim: overhead must be below capacity");
        return NULL;
    }
    uint64_t fail_at[VL_SIM_OPS];
    for (int op = 0; op < VL_SIM_OPS; op++) {
        fail_at[op] = (uint64_t)vl_spec_int(spec, fault_keys[op]); /* not negative: the option's range */
    }
    sim_device *s = calloc(1, sizeof *s);
    if (!s || vl_addrmap_init(&s->plain, 1024)) {
        if (s) {
            vl_addrmap_destroy(&s->plain);
            free(s);
        }
        snprintf(err, errlen, "sim: out of host memory");
        *status = VL_EXIT_FAIL;
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->capacity = capacity;
    s->overhead = overhead;
    s->granularity = granularity;
    s->manual_events = vl_spec_choice(spec, "events") == 1; /* immediate|manual */
    s->next_address = SIM_BASE_ADDRESS;
    memcpy(s->fail_at, fail_at, sizeof fail_at);

    vl_device *d = &s->dev;
    d->ops = &sim_ops;
    d->kind = "sim";
    d->simulated = 1;
    d->ordinal = 0;
    d->vmm_supported = vl_spec_bool(spec, "vmm");
    d->granularity = granularity;
    d->total_bytes = capacity;
    snprintf(d->spec, sizeof d->spec, "%s", spec->text);
    snprintf(d->name, sizeof d->name, "simulated");
    snprintf(d->driver_version, sizeof d->driver_version, "n/a");
    snprintf(d->runtime_version, sizeof d->runtime_version, "n/a");
    d->impl = s;
    return d;
}
