/* vl_backend_caching: the caching allocator behind lib/alloc.h. Parses and checks the
 * options, owns the one lock (lock.h; every entry point takes it: one uncontended atomic
 * exchange is the whole cost of thread safety), and tears everything down on close. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "caching/allocator.h"
#include "caching/caching.h"
#include "caching/fast.h"
#include "caching/hostmem.h"
#include "caching/park.h"
#include "caching/sizes.h"

static const vl_opt caching_options[] = {
    {.name = "segments", .kind = VL_OPT_ENUM, .default_value = "classic", .choices = "classic|expandable",
     .help = "classic: one device allocation per segment, sized like PyTorch's (2 MiB small, 20 MiB "
             "for requests < 10 MiB, else rounded to 2 MiB); expandable: growing virtual ranges "
             "per stream and pool, mapped in chunks on demand (needs VMM; the low-waste choice)",
     .positional = 1},
    {.name = "roundup_div", .kind = VL_OPT_INT, .default_value = "0",
     .help = "round requests up to one of N power-of-two divisions (PyTorch's roundup_power2_divisions; "
             "a power of two; 0 or 1: plain 512 B rounding)"},
    {.name = "max_split", .kind = VL_OPT_SIZE, .default_value = "0",
     .help = "classic: blocks this large or larger are never split and serve only requests >= it "
             "(PyTorch's max_split_size_mb); 0: unlimited"},
    {.name = "gc", .kind = VL_OPT_DOUBLE, .default_value = "0",
     .help = "classic: before growing past this fraction of device capacity, give back entirely free "
             "segments, oldest first (PyTorch's garbage_collection_threshold); 0: off"},
    {.name = "chunk", .kind = VL_OPT_SIZE, .default_value = "2MiB",
     .help = "expandable: largest mapping unit (a power-of-two multiple of the device granularity, "
             "rounded down); chunks start at one granule and double with the offset (64 per "
             "doubling). 2MiB (one granule, as PyTorch) wastes least; larger chunks take fewer map "
             "calls while growing but strand more free memory in partly used chunks"},
    {.name = "span", .kind = VL_OPT_SIZE, .default_value = "64MiB",
     .help = "expandable: most bytes one map call covers (rounded down to whole chunks, at least "
             "one): growth maps the chunks a request needs as one physical allocation, since each "
             "call costs about the same whatever its size, but such a span is unmapped only whole, "
             "so spans are used only while reserved stays within an eighth of what the process can reach "
             "(its reserved plus the device's free memory), chunk by chunk beyond; 0: one map call per chunk"},
    {.name = "reclaim", .kind = VL_OPT_DOUBLE, .default_value = "-1", .min = -DBL_MAX, .max = DBL_MAX, /* -1 is a mode */
     .help = "expandable: -1 (the default): unmap only on trim and under memory pressure, like PyTorch, "
             "so a steady loop makes no map calls and its waste never creeps up; a number: let a stream's "
             "reserved grow to (1 + this) x its peak allocated, and past that unmap its own wholly free "
             "chunks before mapping more, once an event recorded on it says their work completed (no "
             "waiting; their memory is kept for the next map, up to this cap), other streams' only when "
             "the device is out of memory (after waiting for it); less waste in a first pass, paid in map "
             "calls and a layout that drifts from pass to pass (lowwaste: 0.008)"},
    {.name = "reclaim_max", .kind = VL_OPT_DOUBLE, .default_value = "0.25", .min = -DBL_MAX, .max = DBL_MAX,
     .help = "expandable: the most the reclaim budget rises to. It starts at reclaim and doubles whenever "
             "map calls made while reclaiming exceed raise_maps in 1,024 allocations at a steady peak, so that a "
             "workload whose free memory does not fit its next requests stops unmapping and mapping the "
             "same memory every step and pays in waste instead, and falls back once that stops (decay); at "
             "most reclaim: a fixed budget (lib/caching/README.md)"},
    {.name = "raise_maps", .kind = VL_OPT_INT, .default_value = "10", .min = 1, .max = 1024,
     .help = "expandable: map calls made while reclaiming, in 1,024 allocations at a steady peak, above "
             "which the reclaim budget doubles (up to reclaim_max). Higher keeps the budget tight longer "
             "and relocates more; spans make each relocation fewer calls (lib/caching/README.md)"},
    {.name = "decay", .kind = VL_OPT_BOOL, .default_value = "0",
     .help = "expandable: 1: the reclaim budget falls back one doubling after 32 windows of 1,024 allocations "
             "without a burst of relocation (longer after a fall that a sustained need undid), and after a "
             "fall rises again only on sustained relocation; 0 (the default until measured on a GPU): it "
             "never falls back (lib/caching/README.md)"},
    {.name = "split", .kind = VL_OPT_ENUM, .default_value = "hole", .choices = "low|hole",
     .help = "expandable: where a split block's remainder goes: low = after the request (as PyTorch); "
             "hole = before it when the block follows an unmapped hole, so a later, larger request "
             "can extend the remainder into the hole instead of leaving it stranded between live "
             "blocks"},
    {.name = "lend", .kind = VL_OPT_BOOL, .default_value = "0",
     .help = "expandable: 1: a stream's small and large pools serve each other's requests from their "
             "cached blocks before mapping more; 0 (the default, as PyTorch): each pool serves its own "
             "sizes, so small blocks do not settle in the large pool's free memory"},
    {.name = "top", .kind = VL_OPT_ENUM, .default_value = "last", .choices = "last|fit",
     .help = "expandable: last (the default, PyTorch's rule): a free block that borders unmapped space "
             "counts as large as it could grow, so best fit takes it only when no other cached block "
             "fits, and growth finds it whole; fit: plain best fit"},
    {.name = "pack", .kind = VL_OPT_BOOL, .default_value = "0",
     .help = "expandable: serve a cached request from the lowest-addressed of the best fit and the "
             "smallest blocks of the next 7 size classes, and when a stream's allocated drops to 0, "
             "fill the holes of its ranges (of at most 33 blocks) with the chunks at their tops, lent, "
             "so each becomes one free block from its start, as a cold pass finds it; 0 (the default): "
             "best fit only, as PyTorch (lib/caching/README.md)"},
    {.name = "park", .kind = VL_OPT_BOOL, .default_value = "1",
     .help = "a stream's last free waits, uncoalesced, for the stream's next request, which takes "
             "it back without the free lists when best fit would give it that same block (the "
             "cache-hit fast path); otherwise it joins the free lists first, so no decision "
             "changes, only statistics read between the two; 0: every free coalesces at once"},
    {.name = "plan", .kind = VL_OPT_BOOL, .default_value = "0",
     .help = "learn a program that repeats exactly (a fixed-shape training loop: same requests, same "
             "frees, every step), lay one period out offline and serve later periods at planned "
             "offsets in an arena of its own (address space, mapped once), without fits or map calls; a request that differs ends the plan "
             "(the allocator serves it) and learning starts again (lib/caching/plan.h). Pair it "
             "with a tight warm-up (lowwaste:plan=1): peak reserved counts the steps "
             "before the plan too"},
    {.name = "oom_report", .kind = VL_OPT_BOOL, .default_value = "0",
     .help = "print a PyTorch-style report to stderr on every OOM"},
    {NULL},
};

static vl_caching *impl(vl_allocator *a) { return (vl_caching *)a->impl; }

static int caching_open(vl_allocator *a, const vl_spec *spec, char *err, size_t errlen)
{
    vl_caching_config cfg = {0};
    cfg.expandable = vl_spec_choice(spec, "segments") == 1;
    int64_t div = vl_spec_int(spec, "roundup_div");
    cfg.max_split = vl_spec_size(spec, "max_split");
    cfg.gc_threshold = vl_spec_double(spec, "gc");
    cfg.chunk = vl_spec_size(spec, "chunk");
    cfg.span = vl_spec_size(spec, "span");
    cfg.oom_report = vl_spec_bool(spec, "oom_report");
    cfg.reclaim = vl_spec_double(spec, "reclaim");
    cfg.reclaim_max = vl_spec_double(spec, "reclaim_max");
    cfg.raise_maps = (int)vl_spec_int(spec, "raise_maps");
    cfg.split_toward_hole = vl_spec_choice(spec, "split") == 1;
    cfg.lend = cfg.expandable && vl_spec_bool(spec, "lend");
    cfg.top_last = cfg.expandable && vl_spec_choice(spec, "top") == 0;
    cfg.pack = cfg.expandable && vl_spec_bool(spec, "pack"); /* classic segments have nothing to pack */
    cfg.park = vl_spec_bool(spec, "park") && !cfg.pack; /* pack=1 lays an idle stream out at its last free */
    cfg.plan = vl_spec_bool(spec, "plan");
    cfg.decay = (int)vl_spec_bool(spec, "decay");
    /* Options that cannot work are usage errors here, not failures later. */
    if (div < 0 || div > 1 << 20 || (div & (div - 1)) != 0) {
        snprintf(err, errlen, "caching: roundup_div must be 0 or a power of two, got %lld", (long long)div);
        return VL_OPEN_USAGE;
    }
    cfg.roundup_div = (unsigned)div;
    if (!(cfg.gc_threshold >= 0.0 && cfg.gc_threshold < 1.0)) {
        snprintf(err, errlen, "caching: gc must be in [0, 1), got %g", cfg.gc_threshold);
        return VL_OPEN_USAGE;
    }
    if (!isfinite(cfg.reclaim) || !isfinite(cfg.reclaim_max)) {
        snprintf(err, errlen, "caching: reclaim and reclaim_max must be finite numbers, got %g and %g", cfg.reclaim,
                 cfg.reclaim_max);
        return VL_OPEN_USAGE;
    }
    if (cfg.chunk == 0) {
        snprintf(err, errlen, "caching: chunk must be > 0");
        return VL_OPEN_USAGE;
    }
    if (cfg.expandable && a->dev->granularity > a->dev->total_bytes) {
        snprintf(err, errlen, "caching: segments=expandable cannot map anything: the granularity (%zu bytes) "
             "exceeds the device (%zu bytes)", a->dev->granularity, a->dev->total_bytes);
        return VL_OPEN_USAGE;
    }
    if (cfg.expandable && cfg.chunk > a->dev->total_bytes) {
        snprintf(err, errlen, "caching: chunk=%zu is larger than the device (%zu bytes)", cfg.chunk,
                 a->dev->total_bytes);
        return VL_OPEN_USAGE;
    }
    if (cfg.expandable && (!a->dev->vmm_supported || a->dev->granularity == 0)) {
        snprintf(err, errlen, "caching: segments=expandable needs virtual memory support, which %s lacks",
                 a->dev->name);
        return VL_OPEN_USAGE;
    }
    if (cfg.plan && (!a->dev->vmm_supported || a->dev->granularity == 0)) {
        snprintf(err, errlen, "caching: plan=1 needs virtual memory support for its arena, which %s lacks", a->dev->name);
        return VL_OPEN_USAGE;
    }
    vl_cplan *plan = cfg.plan ? vl_plan_new() : NULL;
    vl_caching *c = cfg.plan && !plan ? NULL : vl_host_calloc(1, sizeof *c);
    if (!c || vl_addrmap_init(&c->table, 4096) != 0 || vl_addrmap_init(&c->stream_table, 16) != 0) {
        if (c) vl_addrmap_destroy(&c->table);
        free(c);
        vl_plan_delete(plan);
        snprintf(err, errlen, "caching: out of host memory%s", cfg.plan && !plan ? " for plan=1's log" : "");
        return -1;
    }
    vl_lock_init(&c->lock);
    c->dev = a->dev;
    c->cfg = cfg;
    vl_slab_init(&c->blocks, sizeof(vl_cblock), 1024);
    vl_slab_init(&c->nodes, VL_NODE_SIZE, 256);
    memset(&c->st, 0, sizeof c->st);
    vl_budget_init(&c->budget, &c->cfg, c->st.allocs, c->allocated_high_water);
    c->plan = plan;
    c->fast = cfg.park && !cfg.plan && cfg.roundup_div <= 1 && (!cfg.top_last || cfg.reclaim < 0);
    a->impl = c;
    return 0;
}

/* The slow halves, out of line: the fast paths (fast.h) then call nothing and save no
 * registers. Each releases the lock its caller took. */
static __attribute__((noinline)) void *alloc_locked(vl_caching *c, size_t size, vl_stream s)
{
    void *p = vl_caching_alloc(c, size, s);
    vl_lock_release(&c->lock);
    return p;
}

static __attribute__((noinline)) void free_locked(vl_caching *c, void *ptr)
{
    vl_caching_free(c, ptr);
    vl_lock_release(&c->lock);
}

static void *caching_alloc(vl_allocator *a, size_t size, vl_stream s)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    void *p = vl_caching_alloc_fast(c, size, s);
    if (!p) return alloc_locked(c, size, s);
    vl_lock_release(&c->lock);
    return p;
}

static void caching_free(vl_allocator *a, void *ptr, size_t size, vl_stream s)
{
    (void)size; /* the block knows its size; the stream that frees does not matter (PyTorch) */
    (void)s;
    if (!ptr) return;
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    if (!vl_caching_free_fast(c, ptr)) {
        free_locked(c, ptr);
        return;
    }
    vl_lock_release(&c->lock);
}

static int caching_record_use(vl_allocator *a, void *ptr, vl_stream s)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    int rc = vl_caching_record_use(c, ptr, s);
    vl_lock_release(&c->lock);
    return rc;
}

static size_t caching_trim(vl_allocator *a)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    size_t released = vl_caching_trim(c);
    vl_lock_release(&c->lock);
    return released;
}

static void caching_get_stats(vl_allocator *a, vl_alloc_stats *st)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    vl_caching_get_stats(c, st);
    vl_lock_release(&c->lock);
}

static void caching_reset_peaks(vl_allocator *a)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    vl_caching_reset_peaks(c);
    vl_lock_release(&c->lock);
}

static void caching_print_summary(vl_allocator *a, FILE *out)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    vl_caching_print_summary(c, out);
    vl_lock_release(&c->lock);
}

static void caching_oom_report(vl_allocator *a, size_t size, vl_stream s, vl_oom_report *r)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    vl_caching_fill_oom_report(c, size, s, r);
    vl_lock_release(&c->lock);
}

static void caching_close(vl_allocator *a)
{
    vl_caching *c = impl(a);
    if (!c) return;
    vl_lock_acquire(&c->lock);
    vl_caching_process_events(c, 1);
    if (c->plan) vl_plan_close(c); /* the arena is no segment: released here, whatever it holds */
    vl_release_drain(c); /* every retire batch unmapped, kept memory given back */
    vl_park_release_all(c); /* every cached block FREE, as the teardown below expects */
    if (c->table.count)
        fprintf(stderr, "caching: %zu blocks (%lld bytes) still allocated at close; their segments are released\n",
                c->table.count, (long long)c->st.allocated_bytes);
    while (c->segments) {
        vl_csegment *s = c->segments;
        if (s->expandable) {
            vl_expandable_destroy(c, s);
        } else {
            int rc = c->dev->ops->mem_free(c->dev, (void *)s->base, s->size);
            if (rc != VL_DEV_OK) vl_caching_fail(c, VL_CACHING_ERR_DEVICE, "mem_free of a segment at close", rc);
            vl_segment_unlink(c, s);
            free(s);
        }
    }
    free(c->idle);
    for (size_t i = 0; i < c->nstreams; i++) {
        for (int k = 0; k < 2; k++) free(c->streams[i]->pools[k].holes);
        free(c->streams[i]);
    }
    free(c->streams);
    vl_slab_destroy(&c->blocks);
    vl_slab_destroy(&c->nodes);
    vl_addrmap_destroy(&c->table);
    vl_addrmap_destroy(&c->stream_table);
    vl_plan_delete(c->plan);
    vl_lock_release(&c->lock);
    free(c);
    a->impl = NULL;
}

const vl_alloc_backend vl_backend_caching = {
    .name = "caching",
    .summary = "vramlab's caching allocator: PyTorch-style pools, O(1) bins, classic or expandable segments",
    .options = caching_options,
    .needs_cuda = 0,
    .counts_requests = 1, /* each block keeps its requested size; the checks rely on it */
    .open = caching_open,
    .alloc = caching_alloc,
    .free = caching_free,
    .record_use = caching_record_use,
    .trim = caching_trim,
    .get_stats = caching_get_stats,
    .reset_peaks = caching_reset_peaks,
    .print_summary = caching_print_summary,
    .oom_report = caching_oom_report,
    .close = caching_close,
};

int vl_caching_check(vl_allocator *a, char *err, size_t errlen)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    int rc = vl_caching_check_locked(c, err, errlen);
    vl_lock_release(&c->lock);
    return rc;
}

int vl_caching_last_error(vl_allocator *a, char *buf, size_t buflen)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    int code = c->last_error;
    if (buf && buflen) snprintf(buf, buflen, "%s", code ? c->last_error_text : "");
    vl_lock_release(&c->lock);
    return code;
}

size_t vl_caching_block_size(vl_allocator *a, void *p)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    size_t size;
    if (c->plan && vl_plan_owns(c->plan, p)) {
        size = vl_plan_block_size(c->plan, p);
    } else {
        vl_addrmap_slot *slot = vl_addrmap_find(&c->table, (uintptr_t)p);
        const vl_cblock *b = slot ? (const vl_cblock *)(uintptr_t)slot->value : NULL;
        size = b && b->state == VL_CB_ALLOCATED ? b->size : 0; /* PARKED ones are in the table too */
    }
    vl_lock_release(&c->lock);
    return size;
}

int vl_caching_on_growth(vl_allocator *a, vl_caching_growth_fn fn, void *ctx)
{
    if (!a || a->backend != &vl_backend_caching) return -1;
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    c->on_growth = fn;
    c->on_growth_ctx = fn ? ctx : NULL;
    vl_lock_release(&c->lock);
    return 0;
}

int vl_caching_plan_info(vl_allocator *a, vl_plan_info *out)
{
    if (!a || a->backend != &vl_backend_caching) return -1;
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    int have = c->plan != NULL;
    if (have) vl_plan_get_info(c->plan, out);
    vl_lock_release(&c->lock);
    return have ? 0 : -1;
}

int vl_caching_budget_info(vl_allocator *a, vl_budget_info *out)
{
    if (!a || a->backend != &vl_backend_caching) return -1;
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    const vl_crelocation *r = &c->relocation;
    *out = (vl_budget_info){c->budget.value, r->maps_hidden, r->maps_exposed, r->map_ns,
                            r->exposed_ns, r->unmap_ns, c->budget.raises, c->budget.decays};
    vl_lock_release(&c->lock);
    return 0;
}

unsigned long long vl_caching_park_hits(vl_allocator *a)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    unsigned long long hits = c->parking.hits;
    vl_lock_release(&c->lock);
    return hits;
}

int vl_caching_last_oom_report(vl_allocator *a, vl_oom_report *out)
{
    vl_caching *c = impl(a);
    vl_lock_acquire(&c->lock);
    int have = c->last_oom[0] != '\0';
    if (have) {
        *out = c->last_report;
        snprintf(out->alloc, sizeof out->alloc, "%s", a->spec);
    }
    vl_lock_release(&c->lock);
    return have;
}
