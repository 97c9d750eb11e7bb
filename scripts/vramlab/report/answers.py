"""Each program's answer on one run: the folk claim it tests, holds / does not hold /
inconclusive and why, and its rows of the scenario table (the template of findings block
findings_table, scripts/vramlab/findings) with their figures evaluated on this run. The
README's table is made from these, so there is one phrasing of each answer. No figure,
no answer: a figure the run cannot give makes the answer "inconclusive: <why>"."""
import os
import re

from vramlab import rankstats
from vramlab import results as vlresults
from vramlab.findings import figures, spec

FINDINGS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "findings")  # vramlab/findings
BLOCK = "findings_table"

# The question each program answers, as the folk claim it puts to the test.
CLAIMS = {
    "async_free_race": "Freeing a buffer while another stream still uses it corrupts data (without record_stream).",
    "retained_graph": "Keeping the loss tensor (not loss.item()) across iterations leaks memory.",
    "out_of_place": "y = x + 1 needs twice the memory of x += 1, and in place is faster.",
    "fragmentation_churn": "Fragmentation makes allocations fail although enough memory is free.",
    "cache_hold": "A caching allocator keeps freed memory from other processes until it is trimmed.",
    "pinned_copy": "cudaMemcpyAsync from pageable memory is synchronous; pinned memory makes it asynchronous.",
    "fork_workers": "A process that forks after initialising CUDA cannot use CUDA in the child.",
    "free_stall": "cudaFree waits for kernels running on other streams.",
    "device0_pileup": "Workers on other GPUs also put a context on GPU 0.",
    "ipc_hold": "An IPC handle keeps the whole segment of the block alive.",
    "peer_access": "Copies between GPUs are slow without peer access.",
    "graph_pool": "A CUDA graph per shape keeps its own memory.",
    "stream_pools": "Allocating from many streams wastes memory.",
    "context_cost": "Every CUDA context costs hundreds of MiB.",
    "cublas_workspace": "cuBLAS allocates a workspace per stream.",
    "pinned_rounding": "Pinned host allocations are rounded up.",
    "alloc_latency": "cudaMalloc is slow; a caching allocator makes allocation cheap.",
    "random_churn": "A caching allocator is faster than cudaMalloc under random allocation churn.",
    "multi_stream": "A caching allocator keeps kernel throughput up when every step allocates.",
    "replay": "A caching allocator replays a framework's allocation trace faster than cudaMalloc.",
    "vmm_wait": "Virtual-memory calls (cuMemMap, cuMemUnmap: expandable segments) wait for the GPU's queued work.",
    "lookup_scaling": "An allocation gets slower as the allocator's tables grow (more cached blocks, more streams).",
}
# Programs that measure without putting a folk claim to the test: what they measure.
NO_CLAIM = {
    "torch_alloc_compare": ("measures cache-hit alloc+free pairs and a 10,000-slot churn of PyTorch's, "
                            "cudaMallocAsync's and vramlab's allocators side by side; no folk claim to decide"),
}


class Missing(Exception):
    """A figure this run cannot give (not measured, another tier, no such file)."""


def _num(text):
    """(low, high) of a figure as the findings format it ("1,234", "0.3-0.5", "-2")."""
    parts = re.findall(r"[\u2212-]?[0-9][0-9,]*\.?[0-9]*(?:e[+-]?[0-9]+)?", text)
    if not parts:
        raise Missing(f"figure '{text}' is not a number")
    vals = [float(p.replace(",", "").replace("\u2212", "-")) for p in parts[:2]]
    return min(vals), max(vals)


class Figures:
    """The findings_table's figures, evaluated on demand on one folder of this run. Only
    files inside the run count: a figure stored in another run is missing here."""

    def __init__(self, folder, spec_figures=None, source=None):
        self.folder = folder
        if spec_figures is None:
            blocks = {b.name: b for b in spec.load(os.path.join(FINDINGS, "figures.tsv"))}
            spec_figures = blocks[BLOCK].figures
        self.spec = {f.name: f for f in spec_figures}
        self.source = source if source is not None else figures.Source()
        self.done = {}

    def text(self, name):
        if name not in self.done:
            f = self.spec.get(name)
            outside = [p for p in (f.files.split(",") if f else []) if os.path.isabs(p) or ".." in p.split("/")]
            try:
                if outside:
                    raise KeyError(f"{name} is read from {outside[0]}, outside this run")
                # legacy: the stored reference runs predate COMPLETE; the header says which runs lack it
                self.done[name] = figures.evaluate(self.spec[name], self.folder, self.source, True)
            except (spec.SpecError, vlresults.BadInput, KeyError, ValueError, ZeroDivisionError) as e:
                where = str(e).strip("'\"").replace(self.folder + "/", "").replace(self.folder, "the run folder")
                self.done[name] = Missing(where)
        v = self.done[name]
        if isinstance(v, Exception):
            raise v
        return v

    def num(self, name):
        return _num(self.text(name))


def table_rows(template=None):
    """[(scenario, allocator, bad, fixed)] of the findings_table template, the scenario
    carried down to its continuation rows."""
    rows, scenario = [], ""
    with open(template or os.path.join(FINDINGS, "blocks", BLOCK + ".md")) as f:
        for line in f.read().splitlines()[2:]:
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if len(cells) != 4:
                continue
            scenario = cells[0] or scenario
            rows.append((scenario, *cells[1:]))
    return rows


def fill(template, figs):
    """The template with its {figures} from this run; Missing names the first it lacks."""
    return re.sub(r"\{([a-z0-9_]+)\}", lambda m: figs.text(m.group(1)), template)


# The rules that decide a claim from this run's figures: each returns (holds?, why).
def _afr(f):
    bad = max(f.num("afr_async_bad")[1], f.num("afr_caching_bad")[1])
    fixed = max(f.num("afr_async_fixed")[1], f.num("afr_caching_fixed")[1])
    return bad > 0 and fixed == 0, (f"{bad:.0f} corrupted trials without a dependency, {fixed:.0f} with one"
                                    " (async, caching)")


def _rg(f):
    leak, item = f.num("rg_leak_gb"), f.num("rg_item_slope")
    return leak[0] > 0 and item[1] < 1, f"keeping the loss: +{leak[0]:.2f} GB per iteration; loss.item(): slope {item[1]:.0f} B"


def _oop(f):
    add, inplace = f.num("oop_peak_add"), f.num("oop_peak_inplace")
    return add[0] > inplace[1], f"peak {add[0]:.1f}x the input out of place against {inplace[1]:.1f}x in place"


def _fc(f):
    ooms = f.num("fc_caching_ooms")[1]
    return ooms > 0, f"caching: {ooms:.0f} OOMs despite free memory (largest allocation {f.text('fc_caching_largest')} of free)"


def _ch(f):
    held, trim = f.num("ch_held_gb"), f.num("ch_trim_gb")
    return held[0] > 0.1 and trim[0] > 0.1, f"{f.text('ch_held_gb')} GB stay reserved after every free; trim gives back {f.text('ch_trim_gb')} GB"


def _pc(f):
    call, copy = f.num("pg_call_256")[0], f.num("pg_copy_256")[0]
    return call >= 0.5 * copy, f"a pageable 256 MiB cudaMemcpyAsync returns after {call:.2f} of {copy:.2f} ms; pinned in {f.text('pin_call')} us"


def _fs(f):
    stall = f.num("raw_stall_50ms")[0]
    return stall >= 25, f"raw cudaFree during a 50 ms kernel on another stream: {stall:.1f} ms"


def _fw(f):
    # The failure is a status, not a number: read from the first_calls rows of the CSV.
    path = os.path.join(f.folder, "fork_workers.default.csv")
    try:
        _, header, rows = vlresults.read_csv(path)
        recs = [dict(zip(header, r)) for r in rows if len(r) == len(header)]
    except (vlresults.BadInput, OSError) as e:
        raise Missing(f"fork_workers.default.csv: {e}")
    calls = [r for r in recs if r.get("test") == "first_calls"]
    if not calls:
        raise Missing("no first_calls rows in fork_workers.default.csv")
    bad = [r["call"] for r in calls if r.get("role") == "bad" and r.get("status") == "error"]
    fixed = [r["call"] for r in calls if r.get("role") == "fixed" and r.get("status") == "error"]
    return bool(bad) and not fixed, (f"after fork, {len(bad)} of the first calls failed in the child (first: "
                                     f"{bad[0] if bad else 'none'}); fork before init and fork+exec: {len(fixed)} failed;"
                                     f" each extra process costs {f.text('per_worker_mib')} MiB")


def _rows(f, pattern):
    """[(file, {column: cell})] of the run's CSVs matching pattern; Missing if none."""
    import glob
    out = []
    for path in sorted(glob.glob(os.path.join(f.folder, pattern))):
        if path.endswith(".sim.csv"):
            continue
        try:
            _, header, rows = vlresults.read_csv(path)
        except (vlresults.BadInput, OSError) as e:
            raise Missing(f"{os.path.basename(path)}: {e}")
        out += [(os.path.basename(path), dict(zip(header, r))) for r in rows if len(r) == len(header)]
    if not out:
        raise Missing(f"no {pattern} in the run folder")
    return out


def _pick(rows, what, **want):
    """The rows whose cells equal want; Missing names what the rule needed."""
    got = [r for _, r in rows if all(r.get(k) == v for k, v in want.items())]
    if not got:
        raise Missing(f"no {what} rows (" + ",".join(f"{k}={v}" for k, v in want.items()) + ")")
    return got


def _f(row, col):
    try:
        return float(row[col])
    except (KeyError, ValueError, TypeError):
        raise Missing(f"column {col} empty or absent")


MIB = 1048576


def _ipc(f):
    rows = _rows(f, "ipc_hold.caching.csv")
    held = _pick(rows, "hold/consumer_holds", section="hold", variant="consumer_holds", status="ok")[0]
    closed = _pick(rows, "hold/consumer_closed", section="hold", variant="consumer_closed", status="ok")[0]
    block, seg, kept = _f(held, "block_bytes"), _f(held, "allocation_bytes"), _f(held, "held_while_shared_bytes")
    freed = _f(closed, "held_while_shared_bytes")
    # holds: more than the block stays (the segment); does not: at most the block
    return kept > block, (
        f"caching: a consumer holding the handle of a {block / MIB:.0f} MiB block keeps {kept / MIB:.0f} MiB"
        f" after the producer freed it and trimmed (the segment: {seg / MIB:.0f} MiB); handle closed: {freed:.0f} B")


def _d0(f):
    rows = _rows(f, "device0_pileup.default.csv")
    bad = _pick(rows, "pileup/touch_before_set on GPU 0 with 2 workers", test="pileup", variant="touch_before_set",
                workers="2", gpu="0", status="ok")[0]
    fixed = [r for _, r in rows if r.get("role") == "fixed" and r.get("workers") == "2" and r.get("gpu") == "0"
             and r.get("status") == "ok"]
    foreign, own = _f(bad, "foreign_bytes_per_worker"), _f(bad, "own_context_bytes")
    fixed_max = max((_f(r, "foreign_bytes") for r in fixed), default=None)
    if fixed_max is None:
        raise Missing("no fixed rows (role=fixed, workers=2, gpu=0)")
    # holds: a worker of GPU 1 leaves a context's worth on GPU 0; does not: next to nothing
    return _verdict(foreign > own / 4, foreign < 16 * MIB), (
        f"a worker that touches the runtime before cudaSetDevice(1) puts {foreign / MIB:.0f} MiB on GPU 0"
        f" (GPU 0's own context: {own / MIB:.0f} MiB); selecting the device first: {fixed_max:.0f} B")


def _pa(f):
    rows = _rows(f, "peer_access.default.csv")
    size = "67108864"
    off = _pick(rows, "copy/p2p_peer_disabled at 64 MiB", section="copy", variant="p2p_peer_disabled", bytes=size,
                status="ok")[0]
    on = _pick(rows, "copy/p2p_peer_enabled at 64 MiB", section="copy", variant="p2p_peer_enabled", bytes=size,
               status="ok")[0]
    a, b = _f(off, "gbps"), _f(on, "gbps")
    # holds: peer access at least doubles a 64 MiB copy; does not: within 10%
    return _verdict(b > 2 * a, b < 1.1 * a), (
        f"cudaMemcpyPeer of 64 MiB: {a:.1f} GB/s without peer access, {b:.0f} GB/s with it ({b / a:.1f}x)")


def _verdict(holds, does_not):
    """True (holds), False (does not hold), or None (between the rule's two thresholds)."""
    return True if holds else False if does_not else None


def _gp(f):
    rows = _rows(f, "graph_pool.*.csv")
    per = _pick(rows, "graph_mem/graph_per_shape", section="graph_mem", variant="graph_per_shape", status="ok")
    last = max(per, key=lambda r: _f(r, "graphs"))
    n, alive, largest, reserved = (_f(last, c) for c in ("graphs", "alive_shape_bytes", "shape_bytes", "graph_reserved_bytes"))
    # per shape: reserved near the sum of the shapes alive; shared: near the largest (10% tolerance)
    own = reserved >= 0.9 * alive
    shared = reserved <= 1.1 * largest
    return _verdict(own, shared), (
        f"{n:.0f} graphs, one per shape, with {alive / MIB:,.0f} MiB of allocations alive reserve"
        f" {reserved / MIB:,.0f} MiB of graph memory, the largest shape's {largest / MIB:,.0f} MiB: the driver shares it between graphs")


def _pr(f):
    rows = _rows(f, "pinned_rounding.default.csv")
    bad = _pick(rows, "hold/pow2_cache", test="hold", variant="pow2_cache", status="ok")[0]
    fixed = _pick(rows, "hold/exact_cache", test="hold", variant="exact_cache", status="ok")[0]
    ratio, exact = _f(bad, "held_over_requested"), _f(fixed, "held_over_requested")
    req = _f(bad, "requested_bytes")
    os_bad, os_fixed = _f(bad, "mem_free_drop_bytes"), _f(fixed, "mem_free_drop_bytes")
    # holds: the cache pins >5% over the request and the OS sees more pinned than for exact sizes
    holds = ratio > 1.05 and os_bad > 1.05 * os_fixed
    notat = ratio <= 1.05
    return _verdict(holds, notat), (
        f"a power-of-two pinned cache pins {ratio:.2f}x the {req / 2**30:.1f} GiB requested (exact sizes {exact:.2f}x);"
        f" MemFree drops {os_bad / 2**30:.2f} against {os_fixed / 2**30:.2f} GiB")


def _cc(f):
    rows = _rows(f, "context_cost.default.csv")
    lazy = _pick(rows, "context/lazy", test="context", variant="lazy", status="ok")[0]
    eager = [r for _, r in rows if r.get("test") == "context" and r.get("variant") == "eager+cublas" and r.get("status") == "ok"]
    procs = _pick(rows, "processes/lazy", test="processes", variant="lazy", status="ok")
    most = max(procs, key=lambda r: _f(r, "workers"))
    cost, per = _f(lazy, "per_process_bytes") / MIB, _f(most, "per_process_bytes") / MIB
    # "hundreds of MiB": at least 200 MiB holds, under 100 does not, in between undecided
    verdict = _verdict(cost >= 200, cost < 100)
    return verdict, (f"a lazy context costs {cost:,.0f} MiB" +
                     (f" (eager with cuBLAS {_f(eager[0], 'per_process_bytes') / MIB:,.0f} MiB)" if eager else "") +
                     f"; {_f(most, 'workers'):.0f} processes at once pay {per:,.0f} MiB each")


def _cw(f):
    rows = _rows(f, "cublas_workspace.default.csv")
    st = _pick(rows, "streams/default", test="streams", variant="default", status="ok")
    by = sorted(st, key=lambda r: _f(r, "count"))
    if len(by) < 2:
        raise Missing("fewer than 2 streams/default rows")
    one, most = by[0], by[-1]
    extra = (_f(most, "device_used_bytes") - _f(one, "device_used_bytes")) / (_f(most, "count") - _f(one, "count")) / MIB
    hd = sorted(_pick(rows, "handles/default", test="handles", variant="default", status="ok"), key=lambda r: _f(r, "count"))
    per_handle = _f(hd[-1], "per_unit_bytes") / MIB
    # a workspace per stream: each further stream adds >= 16 MiB (Hopper's is 32 MiB);
    # under 4 MiB (two 2 MiB pages of noise) it does not; in between undecided
    verdict = _verdict(extra >= 16, extra < 4)
    return verdict, (f"each stream beyond the first adds {extra:.1f} MiB ({_f(one, 'device_used_bytes') / MIB:.0f} MiB"
                     f" at 1 stream, {_f(most, 'device_used_bytes') / MIB:.0f} MiB at {_f(most, 'count'):.0f});"
                     f" each handle costs {per_handle:.0f} MiB")


def _sp(f):
    rows = _rows(f, "stream_pools.caching.csv")
    def at(variant):
        got = _pick(rows, f"{variant} stream_pools.caching", variant=variant)
        return max(got, key=lambda r: _f(r, "streams"))
    bad, fixed = at("per_stream"), at("alloc_stream")
    if bad["streams"] != fixed["streams"]:
        raise Missing(f"per_stream and alloc_stream at different stream counts ({bad['streams']}, {fixed['streams']})")
    one = min(_pick(rows, "per_stream", variant="per_stream"), key=lambda r: _f(r, "streams"))
    rb, rf, r1 = _f(bad, "reserved_over_requested"), _f(fixed, "reserved_over_requested"), _f(one, "reserved_over_requested")
    ob, of = _f(bad, "ooms"), _f(fixed, "ooms")
    # wastes: reserves >5% more than one allocation stream, or runs out of the budget more often
    more, lesser = rb > 1.05 * rf or ob > of, rb <= 1.05 * rf and ob <= of
    return _verdict(more, lesser), (
        f"caching, {bad['streams']} streams: reserved {rb:.2f}x requested and {ob:.0f} OOMs allocating per stream,"
        f" {rf:.2f}x and {of:.0f} OOMs from one allocation stream ({r1:.2f}x on 1 stream)")


def _vw(f):
    rows = _rows(f, "vmm_wait.default.csv")
    calls = [r for _, r in rows if r.get("call") not in ("none", None)]
    if not calls:
        raise Missing("no VMM call rows in vmm_wait.default.csv")
    worst = max(calls, key=lambda r: _f(r, "call_median_us") / _f(r, "kernel_us"))
    frac = _f(worst, "call_median_us") / _f(worst, "kernel_us")
    done = sum(1 for r in calls if r.get("event_done_after") not in ("0", "", None))
    # waits: a call takes half the queued kernel or more, or finds the event done after it
    waits, beside = frac >= 0.5 or done > 0, frac < 0.1 and done == 0
    return _verdict(waits, beside), (
        f"the slowest VMM call, {worst['call']} on {worst['stream']}, takes {_f(worst, 'call_median_us'):,.0f} us"
        f" (median) beside a {_f(worst, 'kernel_us') / 1000:,.0f} ms kernel; the kernel was done after {done} of"
        f" {len(calls)} calls")


def _ls(f):
    import glob
    paths = sorted(glob.glob(os.path.join(f.folder, "lookup_scaling.caching.sim.csv")) or
                   glob.glob(os.path.join(f.folder, "lookup_scaling.caching.csv")))
    if not paths:
        raise Missing("no lookup_scaling.caching.sim.csv in the run folder")
    _, header, body = vlresults.read_csv(paths[0])
    recs = [dict(zip(header, r)) for r in body if len(r) == len(header)]
    parts, grow = [], []
    for case, unit in (("cached", "cached block"), ("streams", "stream")):
        got = sorted((r for r in recs if r.get("case") == case), key=lambda r: _f(r, "count"))
        if len(got) < 2:
            raise Missing(f"fewer than 2 case={case} rows in {os.path.basename(paths[0])}")
        lo, hi = got[0], got[-1]
        ratio = _f(hi, "alloc_median_ns") / _f(lo, "alloc_median_ns")
        grow.append(ratio)
        parts.append(f"{case}: median {_f(lo, 'alloc_median_ns'):,.0f} ns at {_f(lo, 'count'):,.0f} {unit}{'' if _f(lo, 'count') == 1 else 's'},"
                     f" {_f(hi, 'alloc_median_ns'):,.0f} ns at {_f(hi, 'count'):,.0f} ({ratio:.1f}x)")
    # slower: the median at the largest count is 2x or more that at the smallest, in a case
    slower, flat = max(grow) >= 2, max(grow) < 1.25
    return _verdict(slower, flat), "; ".join(parts)


RULES_NEW = {"device0_pileup": _d0, "peer_access": _pa, "ipc_hold": _ipc, "graph_pool": _gp, "pinned_rounding": _pr, "context_cost": _cc,
             "cublas_workspace": _cw, "stream_pools": _sp, "vmm_wait": _vw, "lookup_scaling": _ls}


RULES = {"async_free_race": _afr, "retained_graph": _rg, "out_of_place": _oop, "fragmentation_churn": _fc,
         "cache_hold": _ch, "pinned_copy": _pc, "free_stall": _fs, "fork_workers": _fw,
         **RULES_NEW}
# Benchmarks: the claim "caching beats cudaMalloc", decided row by row on the key
# measurement (lower is better for times, higher for rates).
BENCH_CLAIM = {"alloc_latency", "random_churn", "multi_stream", "replay"}


class Answer:
    def __init__(self, prog):
        self.prog, self.claim = prog, CLAIMS.get(prog, f"What {prog} measures (no folk claim recorded for it).")
        self.verdict, self.why = "inconclusive", ""
        self.rows, self.missing = [], []  # findings rows filled on this run; those it could not fill

    @property
    def sentence(self):
        return f"{self.verdict}: {self.why}" if self.why else self.verdict


def metric_summary(m):
    """(value, low, high, how) of a metric: with repetitions the median over them with its
    signed-rank interval (scripts/compare.d/rankstats), else the in-process p25..p75."""
    if len(m.samples) > 1:
        est = rankstats.quantile_median(m.samples)
        _, lo, hi, cov = rankstats.signed_rank_interval(m.samples)
        return est, lo, hi, f"median of {len(m.samples)} repetitions, {cov:.0%} interval"
    return m.value, m.lo, m.hi, "p25..p75 in the process" if m.lo is not None else "one value"


def _bench_answer(ans, data):
    col, rows, cells, _ = data.key_table(ans.prog)
    raw = [f for f in cells if data.tag(ans.prog, f) == "raw"]
    caching = [f for f in cells if data.tag(ans.prog, f) == "caching"]
    if not raw or not caching or not col:
        ans.why = "no raw and caching results on the device to compare" + (f" (column {col})" if col else "")
        return
    higher = col.endswith("_per_s")
    wins = total = 0
    for r in rows:
        a, b = cells[raw[0]].get(r), cells[caching[0]].get(r)
        if a is None or b is None:
            continue
        total += 1
        wins += (b.value > a.value) if higher else (b.value < a.value)
    if not total:
        ans.why = f"no row measured {col} for both raw and caching"
        return
    ans.verdict = "holds" if wins == total else ("does not hold" if wins == 0 else "inconclusive")
    ans.why = f"caching {'above' if higher else 'below'} raw on {col} in {wins} of {total} rows"


def answer(data, prog, rows=None, figures_of=None):
    """The Answer for one program of a run (collect.RunData); rows and figures_of: the
    findings_table template's rows and its figures, when the caller holds them already."""
    ans = Answer(prog)
    figs = figures_of or Figures(data.reps[0])
    for _, alloc, bad, fixed in (r for r in (rows if rows is not None else table_rows()) if r[0] == prog):
        try:
            ans.rows.append((alloc, fill(bad, figs), fill(fixed, figs)))
        except Missing as e:
            ans.missing.append((alloc, str(e)))
    if prog in RULES:
        # Decided on every repetition: an answer that differs between them is inconclusive.
        outcomes = []
        for rep in data.reps:
            try:
                held, why = RULES[prog](figs if rep == data.reps[0] else Figures(rep, list(figs.spec.values())))
                # a rule's None: the figures fall between its thresholds (its tolerance)
                outcomes.append((held, why if held is not None else "within the rule's tolerance, neither way: " + why))
            except Missing as e:
                outcomes.append((None, f"a figure it needs is missing: {e}"))
        verdicts = {h for h, _ in outcomes}
        holds = verdicts.pop() if len(verdicts) == 1 else None
        ans.verdict = {True: "holds", False: "does not hold", None: "inconclusive"}[holds]
        ans.why = outcomes[0][1]
        if len(outcomes) > 1:
            n = sum(1 for h, _ in outcomes if h)
            ans.why = (f"holds in {n} of {len(outcomes)} repetitions; " if holds is None and len(verdicts) > 0
                       else f"the same in all {len(outcomes)} repetitions; ") + "repetition 1: " + ans.why
    elif prog in BENCH_CLAIM:
        _bench_answer(ans, data)
    elif prog in NO_CLAIM:
        ans.why = NO_CLAIM[prog]
    else:
        ans.why = "no rule decides this claim from the figures; the measurements are below"
    if data.simulated_only(prog):
        ans.why += " (simulated device)"
    return ans
