"""The live PyTorch benchmark's statistics, verdict and report files (vramlab.torch.bench),
in plain Python: no torch, numpy or GPU, so `make test` checks them on synthetic rows.

One sample is one process: one workload run once under one allocator. Per
(workload, allocator) the summary gives step_ms, ratio and ratio_mean against PyTorch's
default allocator (rank intervals; round-paired from PAIRED_MIN_ROUNDS rounds),
ratio_adj (adjusted for the host probe; a diagnostic), procs_needed, alloc_ms,
maps_per_step, device_used_bytes, waste and equality; A+B rows are compared inside
their processes. The verdict per workload, for vramlab expandable (VL_EXPANDABLE), in
vramlab.verdict's words and rules: speed PASS where the ratios' 95% upper ends are <= 1.03,
FAIL on a regression beyond 3%; waste PASS at most PyTorch expandable's + 0.005 where the run
has it (the allocator a user would otherwise pick), else at most 1.02; the verdict PASS where
speed and waste pass with equal results, FAIL where one fails, INCONCLUSIVE otherwise.
docs/torch-bench.md, section "vramlab/torch/bench_stats.py", defines every column."""
import csv
import io
import math
import os
import random
import statistics

from vramlab import covariate, rankstats
from vramlab import verdict as rules  # verdict() here is the zoo's verdict per workload
from vramlab.fmt import number
from vramlab.results import number as num
from vramlab.results import read_dicts
from vramlab.torch import zoo

REFERENCE = "torch"                  # speed and numerical reference: PyTorch's default allocator
VL_CLASSIC = "vramlab"
VL_EXPANDABLE = "vramlab-expandable"
TORCH_EXPANDABLE = "torch-expandable"
PAIR = f"{VL_CLASSIC}+{VL_EXPANDABLE}"  # the in-process comparison of the two (never the verdict)
SPEED_LIMIT = 1.03
WASTE_LIMIT = 1.02    # where the run has no PyTorch expandable segments to judge the waste against
WASTE_MARGIN = 0.005  # where it has: at most their waste + this
LEVEL = 0.95

SAMPLE_FIELDS = (
    "run_id", "round", "order", "workload", "allocator", "spec", "seed", "status", "error",
    "steps", "steps_timed", "step_ms_median", "step_ms_mean", "alloc_ms_median", "process_s", "steps_s",
    "maps_per_step", "unmaps_per_step", "maps_total", "unmaps_total",
    "step_ms_median_b", "alloc_ms_median_b", "paired_ratio", "paired_total_ratio",
    "peak_allocated_bytes", "peak_reserved_bytes", "peak_requested_bytes", "stats_from",
    "device_used_base_bytes", "device_used_max_bytes", "device_used_end_bytes",
    "results", "exact_equal", "max_rel_diff",
    "probe_launch_us_before", "probe_launch_us_after", "probe_python_us", "probe_launch_us_steps",
    "alloc_ms_mean",
)
# the probe-adjusted diagnostic (adjusted()): empty where it cannot be computed
ADJ_FIELDS = ("ratio_adj", "ratio_adj_lo", "ratio_adj_hi", "ratio_mean_adj", "ratio_mean_adj_lo", "ratio_mean_adj_hi",
              "adj_slope", "adj_sd_raw", "adj_sd", "procs_needed_adj", "adj_shuffled_excl")
SUMMARY_FIELDS = (
    "half", "workload", "allocator", "spec", "n", "failed",
    "step_ms", "step_ms_lo", "step_ms_hi", "step_ms_ci",
    "ratio", "ratio_lo", "ratio_hi", "ratio_p", "ratio_ci", "ratio_basis", "ratio_mean", "ratio_mean_lo",
    "ratio_mean_hi", "speed", "rounds_paired", "ratio_between", "ratio_between_lo", "ratio_between_hi",
    "ratio_mean_between", "ratio_mean_between_lo", "ratio_mean_between_hi",
    "ratio_adj", "ratio_adj_lo", "ratio_adj_hi", "ratio_mean_adj", "ratio_mean_adj_lo",
    "ratio_mean_adj_hi", "adj_slope", "adj_sd_raw", "adj_sd", "speed_adj", "procs_needed_adj", "adj_shuffled_excl", "step_ms_b",
    "alloc_ms_b",
    "alloc_ms", "alloc_ms_lo", "alloc_ms_hi", "alloc_ms_mean", "maps_per_step", "unmaps_per_step",
    "peak_reserved_bytes", "peak_allocated_bytes", "peak_requested_bytes",
    "waste", "waste_min", "waste_max", "waste_basis",
    "device_used_max_bytes", "device_used_bytes", "equal", "max_rel_diff", "ref_rel_diff", "procs_needed",
)
VERDICT_FIELDS = ("half", "workload", "n", "rounds_paired", "ratio", "ratio_lo", "ratio_hi", "ratio_mean",
                  "ratio_mean_lo", "ratio_mean_hi", "speed", "waste", "waste_min", "waste_max",
                  "waste_ok", "waste_limit", "torch_expandable_waste", "maps_per_step", "unmaps_per_step", "alloc_ms", "alloc_share",
                  "equal", "verdict", "procs_needed", "ratio_adj", "ratio_adj_lo", "ratio_adj_hi", "ratio_mean_adj",
                  "ratio_mean_adj_lo", "ratio_mean_adj_hi", "adj_sd_raw", "adj_sd", "speed_adj", "procs_needed_adj",
                  "adj_shuffled_excl")
# plots/torch_zoo.gp's input (torch_zoo.summary.csv): no free-text column, so that no
# field holds a comma and the script's awk can split the rows
PLOT_FIELDS = ("half", "workload", "allocator", "n", "step_ms", "ratio", "ratio_lo", "ratio_hi", "speed", "waste",
               "waste_min", "waste_max", "maps_per_step", "unmaps_per_step", "alloc_ms", "device_used_bytes")
PASS, FAIL, INCONCLUSIVE, NA = rules.PASS, rules.FAIL, rules.UNDECIDED, rules.NA
SPEED_THRESHOLD = SPEED_LIMIT - 1  # the speed check's threshold, a change of 3%, in verdict's terms
# equal: results that differ, but no more than the reference's own processes differ among
# themselves (non-deterministic kernels): a pass, marked
EQUAL_WITHIN_REFERENCE = PASS + "~"


# --- small helpers ------------------------------------------------------------------------------

def counter(v):
    """A byte counter: None when empty or negative (the allocator does not keep it)."""
    x = num(v)
    return None if x is None or x < 0 else x


def counter_delta(before, after):
    """after - before of a cumulative counter; None where either reading is unknown (never
    0 for an unknown)."""
    if before is None or after is None:
        return None
    return after - before


def per_step(readings, first):
    """A cumulative counter's increase per step over the timed steps: readings[0] is taken
    before step 0, readings[i + 1] after step i; the timed steps are first... None where
    a reading it needs is unknown or no step is timed."""
    n = len(readings) - 1 - first
    if n <= 0 or first < 0:
        return None
    d = counter_delta(readings[first], readings[-1])
    return None if d is None else d / n


def median_ci(values, level=0.95):
    """(median, lo, hi, coverage): the sample median and the narrowest order-statistics
    interval (x_(j), x_(n+1-j)) that covers the population median with probability
    >= level (binomial, any continuous distribution). Below 6 values no such interval
    exists: (min, max) with its coverage 1 - 2^(1-n)."""
    v = sorted(values)
    n = len(v)
    if n == 0:
        return None, None, None, None
    med = rankstats.quantile_median(v)
    if n == 1:
        return med, v[0], v[0], 0.0

    def coverage(j):  # P(x_(j) <= m <= x_(n+1-j)) = 1 - 2 P(Bin(n, 1/2) < j)
        return 1 - 2 * sum(math.comb(n, i) for i in range(j)) / 2 ** n

    j = 1
    while j + 1 <= n // 2 and coverage(j + 1) >= level:
        j += 1
    return med, v[j - 1], v[n - j], coverage(j)


def paired_ci(ratios, level=0.95):
    """(estimate, lo, hi, coverage) of the ratio B / A from one in-process paired ratio
    per process: the Hodges-Lehmann pseudo-median of their logs and its Wilcoxon
    signed-rank interval (rankstats.signed_rank_interval). A and B alternate (A B, B A)
    inside a process, so each log ratio is symmetric about the true one; at 8 processes
    this interval is about half as wide as median_ci's, which is then min..max."""
    est, lo, hi, cov = rankstats.signed_rank_interval([math.log(x) for x in ratios], 1 - level)
    return math.exp(est), math.exp(lo), math.exp(hi), cov


def pair_total_ratio(times, served_by, first):
    """A pair's B total over its A total, over the units of steps first.. (step i runs as
    units 2i and 2i+1; served_by[u]: 0 for A, 1 for B); None when A's total is 0."""
    tot = [0.0, 0.0]
    for u in range(2 * first, 2 * (len(times) // 2)):
        tot[served_by[u]] += times[u]
    return tot[1] / tot[0] if tot[0] > 0 else None


def compare_results(result, ref):
    """(exact_equal, max_rel_diff) of two result lists (losses or token sums)."""
    if result is None or ref is None or len(result) != len(ref):
        return False, math.inf
    exact = all(a == b for a, b in zip(result, ref))
    rel = 0.0
    for a, b in zip(result, ref):
        a, b = float(a), float(b)
        if a != b:
            d = abs(a - b) / max(abs(a), abs(b), 1e-30)
            rel = max(rel, d if math.isfinite(d) else math.inf)
    return exact, rel


def parse_results(text):
    """The 'results' cell: numbers separated by spaces."""
    out = []
    for tok in (text or "").split():
        out.append(int(tok) if tok.lstrip("-").isdigit() else float(tok))
    return out


def format_results(values):
    return " ".join(repr(v) if isinstance(v, float) else str(v) for v in values)


def waste_of(row):
    """(peak reserved / peak allocated, "allocated"), or over peak requested where no
    allocated figure is kept, or (None, "")."""
    res = counter(row.get("peak_reserved_bytes"))
    for basis in ("allocated", "requested"):
        den = counter(row.get(f"peak_{basis}_bytes"))
        if res is not None and den:
            return res / den, basis
    return None, ""


# --- per-sample equality against the reference ----------------------------------------------

def mark_equality(rows):
    """Fills exact_equal / max_rel_diff of every ok row against the first ok REFERENCE
    row of the same workload and seed (in run order). Rows without a reference keep ''."""
    refs = {}
    for r in sorted(rows, key=lambda r: (int(r.get("round") or 0), int(r.get("order") or 0))):
        if r.get("status") == "ok" and r.get("allocator") == REFERENCE:
            refs.setdefault((r["workload"], str(r.get("seed"))), parse_results(r.get("results")))
    for r in rows:
        ref = refs.get((r["workload"], str(r.get("seed"))))
        if r.get("status") != "ok" or ref is None or not r.get("results"):  # pairs keep none
            r["exact_equal"], r["max_rel_diff"] = "", ""
            continue
        exact, rel = compare_results(parse_results(r.get("results")), ref)
        r["exact_equal"] = "yes" if exact else "no"
        r["max_rel_diff"] = "inf" if not math.isfinite(rel) else f"{rel:.3g}"
    return rows


# --- summary ---------------------------------------------------------------------------------

def ratio_between(ref_ms, ms, level=LEVEL):
    """(estimate, lo, hi, p) of the step time ms against ref_ms, one value per process on
    each side: the Hodges-Lehmann shift of the logs, exp'd, with the Moses interval of
    coverage >= level (the Mann-Whitney rank-sum interval), and the rank-sum test's
    two-sided p-value. lo and hi are None where the processes are too few for such an
    interval; everything is None without a value on either side."""
    a = [math.log(x) for x in ref_ms if x and x > 0]
    b = [math.log(x) for x in ms if x and x > 0]
    if not a or not b:
        return None, None, None, None
    est, lo, hi = rankstats.hodges_lehmann(a, b, 1 - level)
    bounded = math.isfinite(lo) and math.isfinite(hi)
    return (math.exp(est), math.exp(lo) if bounded else None, math.exp(hi) if bounded else None,
            rankstats.mann_whitney(a, b))


PAIRED_MIN_ROUNDS = 6  # the fewest pairs whose signed-rank interval reaches 95% (96.9% at 6)


def round_pairs(ref_rows, rows):
    """[(reference row, row)] of the rounds in which both sides have an ok process with
    positive median and mean steps, in round order; [] where a side has two processes in
    one round (not this bench's design: nothing is paired then)."""
    def by_round(rs):
        out = {}
        for r in rs:
            if r.get("status") != "ok" or not all((num(r.get(k)) or 0) > 0 for k in ("step_ms_median", "step_ms_mean")):
                continue
            if r.get("round") in out:
                return None
            out[r.get("round")] = r
        return out
    a, b = by_round(ref_rows), by_round(rows)
    if a is None or b is None:
        return []
    rounds = sorted(set(a) & set(b), key=lambda k: num(k) if num(k) is not None else math.inf)
    return [(a[k], b[k]) for k in rounds]


def ratio_paired(pairs, key, level=LEVEL):
    """(estimate, lo, hi, coverage, p) of the step time key against the reference's over
    rounds: each round's two processes ran back to back (schedule), so the log ratio
    within a round leaves out what drifts between rounds; the Hodges-Lehmann
    pseudo-median of those log ratios, exp'd, its Wilcoxon signed-rank interval and
    the test's two-sided p-value. None without a pair."""
    ratios = [num(b[key]) / num(a[key]) for a, b in pairs]
    if not ratios:
        return None
    return paired_ci(ratios, level) + (rankstats.signed_rank_p([math.log(x) for x in ratios]),)


def rounds_needed(pairs, margin=SPEED_LIMIT):
    """Rounds that would bound the round-paired ratio to +-(margin - 1) at the spread of
    these rounds' log ratios (the larger of the median step's and the mean step's):
    (z s / ln margin)^2 over the signed-rank interval's efficiency; None below 2 rounds."""
    if len(pairs) < 2:
        return None
    sd = max(statistics.stdev([math.log(num(b[k]) / num(a[k])) for a, b in pairs])
             for k in ("step_ms_median", "step_ms_mean"))
    return max(PAIRED_MIN_ROUNDS, math.ceil((Z_975 * sd / math.log(margin)) ** 2 / RANK_EFFICIENCY))


def speed_of(ratios):
    """The speed check over several ratios to the reference that must all hold, each
    (estimate, lo, hi): vramlab.verdict.check of each (lower is better, SPEED_THRESHOLD;
    no interval: INCONCLUSIVE), combined (verdict.combine): FAIL where one is a regression
    beyond 3%, PASS where every upper end is <= SPEED_LIMIT, else INCONCLUSIVE."""
    return rules.combine(rules.check(r, lo, hi, sense=-1, threshold=SPEED_THRESHOLD) for r, lo, hi in ratios)


def median_if_all(values, n):
    """The median of values where every one of the n processes has one, else None: a
    figure some processes lack is not summarized from the others."""
    got = [x for x in values if x is not None]
    return rankstats.quantile_median(got) if got and len(got) == n else None


Z_975 = 1.959963984540054  # the normal distribution's 97.5% point
RANK_EFFICIENCY = 3 / math.pi  # the rank-sum interval's against the t interval, normal data


def procs_needed(a, b, margin=SPEED_LIMIT):
    """Processes a side for a 95% interval of the ratio b/a of half-width ln(margin), at
    the pooled spread of log(a) and log(b) (module docstring); None with fewer than 2
    positive values a side."""
    la, lb = [math.log(x) for x in a if x and x > 0], [math.log(x) for x in b if x and x > 0]
    if len(la) < 2 or len(lb) < 2:
        return None
    pooled = ((len(la) - 1) * statistics.variance(la) + (len(lb) - 1) * statistics.variance(lb)) \
        / (len(la) + len(lb) - 2)
    return procs_for_sd(math.sqrt(pooled), RANK_EFFICIENCY, margin)


def procs_for_sd(sd, efficiency=1.0, margin=SPEED_LIMIT):
    """Processes a side for a 95% interval of half-width ln(margin) at a standard deviation
    sd of the log step times, for an interval of that efficiency against the t interval."""
    return max(2, math.ceil(2 * (Z_975 * sd / math.log(margin)) ** 2 / efficiency))


PROBE = "probe_launch_us_steps"  # the covariate: the host probe after each step, per process


def adjusted(ref_rows, rows):
    """The ratio of rows' step times to ref_rows', median and mean steps, adjusted for the
    host probe (covariate.adjusted_ratio): a dict of the summary's *_adj fields, empty
    where a process on either side has no probe (runs before the probe was recorded)."""
    def get(rs, key):
        vals = [(num(r.get(key)), num(r.get(PROBE))) for r in rs]
        return vals if all(y and y > 0 and x and x > 0 for y, x in vals) else None
    out, medians = {}, None
    for key, name in (("step_ms_median", "ratio_adj"), ("step_ms_mean", "ratio_mean_adj")):
        a, b = get(ref_rows, key), get(rows, key)
        got = a and b and covariate.adjusted_ratio([y for y, _ in a], [x for _, x in a],
                                                   [y for y, _ in b], [x for _, x in b], LEVEL)
        if not got:
            return {}
        out.update({name: got["ratio"], f"{name}_lo": got["lo"], f"{name}_hi": got["hi"]})
        if key == "step_ms_median":
            medians = a, b
            # processes a side for a +-3% interval at this residual spread (normal z; a guide)
            out.update(adj_slope=got["slope"], adj_sd_raw=got["sd_raw"], adj_sd=got["sd_adj"],
                       procs_needed_adj=procs_for_sd(got["sd_adj"]))
    out["speed_adj"] = speed_of(((out["ratio_adj"], out["ratio_adj_lo"], out["ratio_adj_hi"]),
                                 (out["ratio_mean_adj"], out["ratio_mean_adj_lo"], out["ratio_mean_adj_hi"])))
    out["adj_shuffled_excl"] = shuffled_exclusions(*medians)
    return out


SHUFFLES = 200  # label shuffles per workload for the adjusted interval's calibration


def shuffled_exclusions(a, b, shuffles=SHUFFLES, seed=1):
    """The adjusted interval's calibration on the run's own processes: a and b are the two
    sides' (step, probe) pairs; their labels are shuffled (fixed seed), which leaves no real
    difference, and the share of shuffles whose 95% interval excludes 1 is returned. Near
    0.05 the interval keeps its level here; well above it, it is too narrow for this run."""
    rng = random.Random(seed)
    both, hits, done = list(a) + list(b), 0, 0
    for _ in range(shuffles):
        rng.shuffle(both)
        x, y = both[:len(a)], both[len(a):]
        got = covariate.adjusted_ratio([s for s, _ in x], [p for _, p in x], [s for s, _ in y], [p for _, p in y])
        if got is None:
            continue
        done += 1
        hits += got["lo"] > 1 or got["hi"] < 1
    return hits / done if done else None


def summarize(rows, allocators=None):
    """Summary rows, one per (workload, allocator), in first-seen order (or that of
    allocators). rows: sample dicts with exact_equal filled (mark_equality)."""
    groups = {}
    for r in rows:
        groups.setdefault((r["workload"], r["allocator"]), []).append(r)
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    order = list(allocators) if allocators else list(dict.fromkeys(r["allocator"] for r in rows))
    out = []
    for w in workloads:
        ok_of = {a: [r for r in groups.get((w, a), []) if r.get("status") == "ok"] for a in order}
        ref_ms = [num(r.get("step_ms_median")) for r in ok_of.get(REFERENCE, [])]
        ref_mean = [num(r.get("step_ms_mean")) for r in ok_of.get(REFERENCE, [])]
        ref_rels = [num(r.get("max_rel_diff")) for r in ok_of.get(REFERENCE, [])]
        ref_rel = max((x for x in ref_rels if x is not None), default=None)
        for a in order:
            all_rows = groups.get((w, a), [])
            if not all_rows:
                continue
            ok = ok_of[a]
            steps = [x for x in (num(r.get("step_ms_median")) for r in ok) if x and x > 0]
            med, lo, hi, cov = median_ci(steps)
            s = dict(half=zoo.half_of(w), workload=w, allocator=a, spec=all_rows[0].get("spec", ""), n=len(ok),
                     failed=len(all_rows) - len(ok), step_ms=med, step_ms_lo=lo, step_ms_hi=hi,
                     step_ms_ci=cov)
            s.update(ratio=None, ratio_lo=None, ratio_hi=None, ratio_p=None, ratio_ci=None, ratio_basis="",
                     ratio_mean=None, ratio_mean_lo=None, ratio_mean_hi=None,
                     speed="", step_ms_b=None, alloc_ms_b=None, procs_needed=None, rounds_paired=None,
                     ratio_between=None, ratio_between_lo=None, ratio_between_hi=None, ratio_mean_between=None,
                     ratio_mean_between_lo=None, ratio_mean_between_hi=None)
            s.update(dict.fromkeys(ADJ_FIELDS), speed_adj="")
            pr = [x for x in (num(r.get("paired_ratio")) for r in ok) if x and x > 0]
            if pr:  # a pair: B against A inside each process
                rmed, rlo, rhi, rcov = paired_ci(pr)
                # the same over the timed steps' totals (older runs have none)
                tot = [x for x in (num(r.get("paired_total_ratio")) for r in ok) if x and x > 0]
                if tot:
                    tmed, tlo, thi, _ = paired_ci(tot)
                    s.update(ratio_mean=tmed, ratio_mean_lo=tlo, ratio_mean_hi=thi)
                sb = [x for x in (num(r.get("step_ms_median_b")) for r in ok) if x and x > 0]
                ab = [x for x in (num(r.get("alloc_ms_median_b")) for r in ok) if x is not None and x >= 0]
                s.update(ratio=rmed, ratio_lo=rlo, ratio_hi=rhi, ratio_ci=rcov,
                         ratio_basis=f"B against A in-process, signed-rank over {len(pr)} processes",
                         step_ms_b=rankstats.quantile_median(sb) if sb else None,
                         alloc_ms_b=rankstats.quantile_median(ab) if ab else None)
            elif a == REFERENCE:
                s["ratio_basis"] = "the reference"
            elif steps:
                means = [x for x in (num(r.get("step_ms_mean")) for r in ok) if x and x > 0]
                s["procs_needed"] = max((n for n in (procs_needed(ref_ms, steps), procs_needed(ref_mean, means))
                                         if n is not None), default=None)
                est, rlo, rhi, p = ratio_between(ref_ms, steps)
                mest, mlo, mhi, _ = ratio_between(ref_mean, means)
                if est is not None:
                    s.update(ratio=est, ratio_lo=rlo, ratio_hi=rhi, ratio_p=p,
                             ratio_ci=LEVEL if rhi is not None else None,
                             ratio_basis=f"between processes, against {REFERENCE}, Hodges-Lehmann"
                             + ("" if rhi is not None else ": too few processes for a 95% interval"),
                             ratio_mean=mest, ratio_mean_lo=mlo, ratio_mean_hi=mhi,
                             speed=speed_of(((est, rlo, rhi), (mest, mlo, mhi))),
                             ratio_between=est, ratio_between_lo=rlo, ratio_between_hi=rhi,
                             ratio_mean_between=mest, ratio_mean_between_lo=mlo, ratio_mean_between_hi=mhi)
                pairs = round_pairs(ok_of.get(REFERENCE, []), ok)
                s["rounds_paired"] = len(pairs)
                if len(pairs) >= PAIRED_MIN_ROUNDS:  # the design's own analysis: rounds are blocks
                    est, rlo, rhi, cov, p = ratio_paired(pairs, "step_ms_median")
                    mest, mlo, mhi, _, _ = ratio_paired(pairs, "step_ms_mean")
                    s.update(ratio=est, ratio_lo=rlo, ratio_hi=rhi, ratio_p=p, ratio_ci=cov,
                             ratio_basis=f"round-paired against {REFERENCE}, signed-rank over {len(pairs)} of "
                             f"{len(ok)} processes",
                             ratio_mean=mest, ratio_mean_lo=mlo, ratio_mean_hi=mhi,
                             speed=speed_of(((est, rlo, rhi), (mest, mlo, mhi))), procs_needed=rounds_needed(pairs))
                s.update(adjusted(ok_of.get(REFERENCE, []), ok))
            am = [x for x in (num(r.get("alloc_ms_median")) for r in ok) if x is not None and x >= 0]
            amed, alo, ahi, _ = median_ci(am)
            s.update(alloc_ms=amed, alloc_ms_lo=alo, alloc_ms_hi=ahi,
                     alloc_ms_mean=median_if_all([num(r.get("alloc_ms_mean")) for r in ok], len(ok)))
            for key in ("maps_per_step", "unmaps_per_step"):
                s[key] = median_if_all([num(r.get(key)) for r in ok], len(ok))
            for key in ("peak_reserved_bytes", "peak_allocated_bytes", "peak_requested_bytes",
                        "device_used_max_bytes"):
                s[key] = median_if_all([counter(r.get(key)) for r in ok], len(ok))
            s["device_used_bytes"] = median_if_all(
                [counter_delta(counter(r.get("device_used_base_bytes")), counter(r.get("device_used_max_bytes")))
                 for r in ok], len(ok))
            wastes = [waste_of(r) for r in ok]
            wv = [x for x, _ in wastes if x is not None]
            s.update(waste=median_if_all([x for x, _ in wastes], len(ok)),
                     waste_min=min(wv) if wv else None, waste_max=max(wv) if wv else None,
                     waste_basis="/".join(sorted({b for _, b in wastes if b})))
            eq = [r.get("exact_equal") for r in ok if r.get("exact_equal") in ("yes", "no")]
            rels = [num(r.get("max_rel_diff")) for r in ok if r.get("max_rel_diff") not in (None, "")]
            s.update(equal=f"{eq.count('yes')}/{len(eq)}" if eq else "",
                     max_rel_diff=max((x if x is not None else math.inf) for x in rels) if rels else None,
                     ref_rel_diff=ref_rel)
            out.append(s)
    return out


def equal_call(s):
    """PASS (equal), EQUAL_WITHIN_REFERENCE (differs, no more than the reference from
    itself), FAIL, or NA (nothing to compare)."""
    if not s["equal"]:
        return NA
    yes, n = (int(x) for x in s["equal"].split("/"))
    if yes == n:
        return PASS
    if s["ref_rel_diff"] is not None and s["max_rel_diff"] is not None \
            and s["max_rel_diff"] <= s["ref_rel_diff"] and s["ref_rel_diff"] > 0:
        return EQUAL_WITHIN_REFERENCE
    return FAIL


def waste_limit(torch_expandable):
    """The waste vramlab expandable may have on a workload: PyTorch expandable's + WASTE_MARGIN
    where the run measured it there, else WASTE_LIMIT."""
    w = torch_expandable["waste"] if torch_expandable else None
    return w + WASTE_MARGIN if w is not None else WASTE_LIMIT


def verdict(summary):
    """One row per workload: vramlab expandable against the Done-when (module docstring).
    Pairs never enter it."""
    by = {(s["workload"], s["allocator"]): s for s in summary}
    rows = []
    for w in dict.fromkeys(s["workload"] for s in summary):
        e, t, ref = by.get((w, VL_EXPANDABLE)), by.get((w, TORCH_EXPANDABLE)), by.get((w, REFERENCE))
        v = dict(half=zoo.half_of(w), workload=w, n=0, rounds_paired=None, ratio=None, ratio_lo=None, ratio_hi=None,
                 ratio_mean=None, ratio_mean_lo=None, ratio_mean_hi=None,
                 speed=INCONCLUSIVE, waste=None, waste_min=None, waste_max=None, waste_ok=NA, waste_limit=waste_limit(t),
                 torch_expandable_waste=t["waste"] if t else None, maps_per_step=None, unmaps_per_step=None,
                 alloc_ms=None, alloc_share=None, equal=NA, verdict=INCONCLUSIVE, procs_needed=None,
                 speed_adj="", **dict.fromkeys(ADJ_FIELDS))
        if e is None or e["n"] == 0:
            rows.append(v)
            continue
        v.update({k: e[k] for k in ("n", "rounds_paired", "ratio", "ratio_lo", "ratio_hi", "ratio_mean", "ratio_mean_lo",
                                    "ratio_mean_hi", "waste", "waste_min", "waste_max",
                                    "maps_per_step", "unmaps_per_step", "alloc_ms", "procs_needed", "speed_adj")
                  + ADJ_FIELDS})
        v["speed"] = e["speed"] or INCONCLUSIVE  # summarize's check: both ratios, or no ratio
        if e["alloc_ms"] is not None and ref and ref["step_ms"]:
            v["alloc_share"] = e["alloc_ms"] / ref["step_ms"]  # of PyTorch's step time; not judged
        v["waste_ok"] = rules.limit_check(e["waste"], v["waste_limit"])
        v["equal"] = equal_call(e)  # a check that can only fail the verdict: NA is no objection
        v["verdict"] = rules.combine([v["speed"], v["waste_ok"]] + ([FAIL] if v["equal"] == FAIL else []))
        rows.append(v)
    return rows


def overall(verdicts):
    """The overall line: PASS only when every workload passes; per half where the run has
    workloads of both."""
    def line(vs):
        got = {k: [v["workload"] for v in vs if v["verdict"] == k] for k in (PASS, FAIL, INCONCLUSIVE)}
        word = rules.combine(v["verdict"] for v in vs)
        parts = [f"{len(got[PASS])} of {len(vs)} pass"]
        parts += [f"{k.lower()}: {', '.join(got[k])}" for k in (FAIL, INCONCLUSIVE) if got[k]]
        return word, "; ".join(parts)

    if not verdicts:
        return f"overall: {INCONCLUSIVE}: no workload"
    word, text = line(verdicts)
    out = [f"overall: {word}: {text}"]
    halves = list(dict.fromkeys(v["half"] for v in verdicts if v["half"]))
    if len(halves) > 1:
        for h in halves:
            hw, ht = line([v for v in verdicts if v["half"] == h])
            out.append(f"  {h} half: {hw}: {ht}")
    return "\n".join(out)


# --- files and tables ------------------------------------------------------------------------------

# Judged against WASTE_LIMIT: 4 significant digits would write 1.0201 as 1.02, which reads
# back as within the limit. 6 keep every figure a process can give (bytes over bytes).
PRECISE_FIELDS = frozenset(("waste", "waste_min", "waste_max", "waste_limit", "torch_expandable_waste"))


def cells(fields, row, digits=4):
    """A row's CSV cells: strings as they are (read back from a CSV), numbers through
    vramlab.fmt.number with digits significant digits (PRECISE_FIELDS with 6)."""
    return [row.get(k) if isinstance(row.get(k), str) else number(row.get(k), 6 if k in PRECISE_FIELDS else digits)
            for k in fields]


def write_csv(path, fields, rows, comments=(), digits=4):
    """Writes PATH whole: a temporary file renamed over it, so that a process killed
    meanwhile leaves the old file or the new one, never half of one."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", newline="") as f:
        for c in comments:
            f.write(f"# {c}\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(fields)
        for r in rows:
            w.writerow(cells(fields, r, digits))
    os.replace(tmp, path)


def append_csv(path, fields, row, digits=4):
    """Appends one row to PATH (the header first where PATH is missing or empty), in one
    write, flushed and synced: an incremental file stays valid if the writer is killed."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        w.writerow(fields)
    w.writerow(cells(fields, row, digits))
    with open(path, "a", newline="") as f:
        f.write(buf.getvalue())
        f.flush()
        os.fsync(f.fileno())


def _x(v, d=4):
    return "-" if v is None else number(v, d)


def _interval(lo, hi):
    return "" if lo is None or hi is None else f"[{number(lo, 4)}, {number(hi, 4)}]"


def _mib(v):
    return None if v is None else v / 2**20


def _ratio_cell(s, text):
    """A pair's ratio is B against A inside its processes, not against torch: it says so."""
    return f"B/A {text}" if "+" in s["allocator"] and text not in ("", "-") else text


def table(summary, verdicts):
    """The printed report: the summary per workload, then the verdict and the overall line."""
    x = _x
    lines = [f"{'half':7} {'workload':11} {'allocator':19} {'n':>2} {'step ms':>8} {'x torch':>7} {'[95% HL]':>17} "
             f"{'speed':>12} {'waste':>7} {'dev MiB':>8} {'maps/st':>8} {'unmaps/st':>9} {'alloc us':>8} {'mean us':>8} "
             f"{'equal':>6}"]
    us = lambda ms: ms * 1e3 if ms is not None else None  # noqa: E731  (ms per step -> us)
    for s in summary:
        lines.append(
            f"{s['half'] or '-':7} {s['workload']:11} {s['allocator']:19} {s['n']:>2} {x(s['step_ms']):>8} "
            f"{_ratio_cell(s, x(s['ratio'])):>7} {_interval(s['ratio_lo'], s['ratio_hi']) or '-':>17} "
            f"{s['speed'] or '-':>12} "
            f"{x(s['waste'], 5):>7} "  # 1.0215, not 1.02: the limit is 1.02
            f"{x(_mib(s['device_used_bytes']), 5):>8} {x(s['maps_per_step'], 3):>8} {x(s['unmaps_per_step'], 3):>9} "
            f"{x(us(s.get('alloc_ms')), 4):>8} {x(us(s.get('alloc_ms_mean')), 4):>8} "
            f"{s['equal'] or '-':>6}"
            + (f"  ({s['failed']} failed)" if s["failed"] else ""))
    lines.append("")
    lines.append(f"verdict of {VL_EXPANDABLE}: step time within {SPEED_LIMIT - 1:.0%} of {REFERENCE} (upper ends of "
                 f"the {LEVEL:.0%} intervals of the ratios, round-paired where {PAIRED_MIN_ROUNDS} or more rounds "
                 f"pair (rounds column), else between processes, of the median step and of the mean "
                 f"step, <= {SPEED_LIMIT}) and waste (peak reserved "
                 f"/ peak allocated, median) <= its limit (PyTorch expandable's + {WASTE_MARGIN} where the run has it, "
                 f"else {WASTE_LIMIT}); results equal: PASS; FAIL: a real slowdown beyond "
                 f"{SPEED_LIMIT}, a waste above its limit or results that differ. alloc%: time in the allocator per "
                 f"step over {REFERENCE}'s step time (not judged); n +-3%: processes a side that would bound the "
                 f"ratio to +-3% at the spread seen (rounds where paired; a guide, not judged)")
    lines.append(f"{'half':7} {'workload':11} {'rounds':>6} {'ratio':>7} {'[95% HL]':>17} {'mean':>7} {'[95% HL]':>17} "
                 f"{'speed':>12} {'waste':>7} {'limit':>7} {'waste':>5} "
                 f"{'torch-exp':>9} {'maps/st':>8} {'alloc%':>7} {'equal':>6} {'verdict':>12} {'n +-3%':>7}")
    for v in verdicts:
        share = v.get("alloc_share")
        paired = v.get("rounds_paired")
        paired = paired if paired is not None and paired >= PAIRED_MIN_ROUNDS else "-"
        lines.append(f"{v['half'] or '-':7} {v['workload']:11} {paired:>6} {x(v['ratio']):>7} "
                     f"{_interval(v['ratio_lo'], v['ratio_hi']) or '-':>17} {x(v.get('ratio_mean')):>7} "
                     f"{_interval(v.get('ratio_mean_lo'), v.get('ratio_mean_hi')) or '-':>17} "
                     f"{v['speed']:>12} {x(v['waste'], 5):>7} {x(v['waste_limit'], 5):>7} "
                     f"{v['waste_ok']:>5} {x(v['torch_expandable_waste'], 5):>9} {x(v['maps_per_step'], 3):>8} "
                     f"{(f'{share:.2%}' if share is not None else '-'):>7} {v['equal']:>6} {v['verdict']:>12} "
                     f"{v['procs_needed'] if v.get('procs_needed') is not None else '-':>7}")
    lines.append(overall(verdicts))
    adj = [v for v in verdicts if v.get("ratio_adj") is not None]
    if adj:  # a diagnostic: the verdict above never uses it (module docstring)
        lines.append("")
        lines.append("adjusted for the host probe (diagnostic, not the verdict): the ratios by analysis of covariance "
                     "on each step's host probe, Student-t 95%; sd: the spread of log step time before -> after")
        lines.append("shuffled: the share of label shuffles whose interval excludes 1 (its calibration on "
                     "this run; near 5% it holds its level)")
        lines.append(f"{'workload':11} {'ratio':>7} {'[95% t]':>17} {'mean':>7} {'[95% t]':>17} {'speed':>12} "
                     f"{'sd':>13} {'n +-3%':>7} {'shuffled':>8}")
        for v in adj:
            shuffled = v.get("adj_shuffled_excl")
            shuffled = f"{shuffled:.1%}" if shuffled is not None else "-"
            lines.append(f"{v['workload']:11} {x(v['ratio_adj']):>7} {_interval(v['ratio_adj_lo'], v['ratio_adj_hi']):>17} "
                         f"{x(v['ratio_mean_adj']):>7} "
                         f"{_interval(v['ratio_mean_adj_lo'], v['ratio_mean_adj_hi']):>17} {v['speed_adj']:>12} "
                         f"{x(v['adj_sd_raw'], 3):>6}->{x(v['adj_sd'], 3):<6} {v['procs_needed_adj']:>7} "
                         f"{shuffled:>8}")
    return "\n".join(lines)


def markdown(summary, verdicts, comments=()):
    """zoo.md: the conditions, the table per workload and allocator, the verdict, the
    overall line. An unknown figure is an empty cell."""
    def cell(v, d=4):
        return "" if v is None else number(v, d)

    keep = ("run_id", "date", "device", "nvidia-smi", "torch", "git", "rounds", "size")
    out = ["# torch-bench: the workload zoo", ""]
    out += [f"- {c}" for c in comments if c.split(":")[0] in keep]
    out += ["", f"Step time against `{REFERENCE}` (PyTorch's default allocator): the Hodges-Lehmann ratio, "
            f"round-paired (signed-rank) where {PAIRED_MIN_ROUNDS} or more rounds pair, else between processes "
            f"(rank-sum), with its {LEVEL:.0%} interval; speed `PASS` where the interval's upper end is <= {SPEED_LIMIT}, "
            f"`FAIL` where the ratio is a real slowdown (the interval above 1) beyond {SPEED_LIMIT}, else "
            f"`INCONCLUSIVE`. waste: peak reserved / peak allocated. "
            "device MiB: device memory in use at most, minus before the first allocation. maps, unmaps: the "
            "allocator's device calls per timed step. alloc us: time inside the plugin's entry points per step. "
            "An A+B row (both in one process) gives B against A on the same steps (B/A), not against torch. "
            "An empty cell: not measured or not kept by that allocator.", "",
            "| half | workload | allocator | n | step ms | x torch | 95% interval | speed | waste | device MiB "
            "| maps/step | unmaps/step | alloc us/step | equal |",
            "|---|---|---|--:|--:|--:|---|---|--:|--:|--:|--:|--:|---|"]
    for s in summary:
        am = s.get("alloc_ms")
        out.append(f"| {s['half']} | {s['workload']} | {s['allocator']} | {s['n']} | {cell(s['step_ms'])} "
                   f"| {_ratio_cell(s, cell(s['ratio']))} | {_interval(s['ratio_lo'], s['ratio_hi'])} | {s['speed']} "
                   f"| {cell(s['waste'], 5)} | {cell(_mib(s['device_used_bytes']), 5)} | {cell(s['maps_per_step'], 3)} "
                   f"| {cell(s['unmaps_per_step'], 3)} | {cell(am * 1e3 if am is not None else None)} "
                   f"| {s['equal']} |")
    out += ["", f"## Verdict: `{VL_EXPANDABLE}`", "",
            f"Step time within {SPEED_LIMIT - 1:.0%} of `{REFERENCE}` ({LEVEL:.0%} upper ends <= {SPEED_LIMIT}, "
            f"of the ratio of median steps and of the ratio of mean steps: the mean carries rare slow steps) and "
            f"waste <= its limit (PyTorch expandable's + {WASTE_MARGIN} where the run has it, else {WASTE_LIMIT}); "
            f"results equal: **PASS**; **FAIL**: a real slowdown beyond {SPEED_LIMIT}, a waste above its limit "
            f"or results that differ. The in-process pairs (A+B columns) never enter it.", "",
            "| half | workload | n | rounds paired | ratio | 95% interval | ratio of means | 95% interval | speed | waste | limit | waste ok "
            "| torch-expandable waste | maps/step | equal | verdict | processes a side for ±3% |",
            "|---|---|--:|--:|--:|---|--:|---|---|--:|--:|---|--:|--:|---|---|--:|"]
    for v in verdicts:
        out.append(f"| {v['half']} | {v['workload']} | {v['n']} | {cell(v.get('rounds_paired'), 0)} | {cell(v['ratio'])} "
                   f"| {_interval(v['ratio_lo'], v['ratio_hi'])} | {cell(v.get('ratio_mean'))} "
                   f"| {_interval(v.get('ratio_mean_lo'), v.get('ratio_mean_hi'))} | {v['speed']} "
                   f"| {cell(v['waste'], 5)} | {cell(v['waste_limit'], 5)} "
                   f"| {v['waste_ok']} | {cell(v['torch_expandable_waste'], 5)} | {cell(v['maps_per_step'], 3)} "
                   f"| {v['equal']} | **{v['verdict']}** | {cell(v.get('procs_needed'), 0)} |")
    out += ["", "```", overall(verdicts), "```", ""]
    return "\n".join(out)


def write_summary(outdir, rows, allocators=None, comments=()):
    """samples.csv (equality filled in), summary.csv, verdict.csv, report.txt, zoo.md and
    the zoo figure's input; returns the printed table."""
    mark_equality(rows)
    samples = os.path.join(outdir, "samples.csv")
    write_csv(samples, SAMPLE_FIELDS, rows, comments, digits=9)
    # summarized as written, so that --summarize of a copied folder gives the same figures
    summary = summarize(read_dicts(samples), allocators)
    verdicts = verdict(summary)
    write_csv(os.path.join(outdir, "summary.csv"), SUMMARY_FIELDS, summary, comments)
    write_csv(os.path.join(outdir, "verdict.csv"), VERDICT_FIELDS, verdicts, comments)
    write_csv(os.path.join(outdir, "torch_zoo.summary.csv"), PLOT_FIELDS, summary, comments)
    text = table(summary, verdicts)
    with open(os.path.join(outdir, "report.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(outdir, "zoo.md"), "w") as f:
        f.write(markdown(summary, verdicts, comments))
    return text
