"""The live PyTorch benchmark's statistics, verdict and CSV files (scripts/torch/bench.py),
in plain Python: no torch, numpy or GPU, so `make test` checks them on synthetic rows.

One sample is one process: one workload run once under one allocator. Per
(workload, allocator) the summary gives
  step_ms        the median over processes of each process's median step time, with a
                 distribution-free interval for that median (order statistics; with
                 fewer than 6 processes the widest, min..max, whose coverage is below
                 95%: step_ms_ci says the coverage reached);
  ratio          step time against vramlab classic (VL_REFERENCE): the Hodges-Lehmann
                 shift of log step times, exp'd, with its Moses 95% interval
                 (scripts/compare.d/rankstats.py), and the Mann-Whitney p-value;
  alloc_ms       time inside the allocator's entry points per step (plugin allocators,
                 VRAMLAB_TIME=1: host clock around each vl_alloc / vl_free), the median
                 over processes of each process's median over its timed steps: measured
                 inside one process, it does not carry the process-to-process spread of
                 step times, so it resolves allocator differences that step times cannot
                 (it does not see costs the allocator causes on the device);
  pairs          A+B rows (both allocators in one process, each step run twice, once
                 by each): ratio is the median over processes of each process's
                 B-over-A step ratio (median over steps of the same step's two times), with
                 the order-statistics interval of that median (ratio_basis says so, and
                 its coverage); step_ms is A's, step_ms_b B's; no waste (mixed peaks);
  waste          peak reserved / peak allocated per process (peak requested where the
                 allocator keeps no allocated figure: waste_basis says which), median,
                 min and max over processes;
  equality       processes whose results (losses, token sums) equal bit for bit those of
                 the first PyTorch-default process of the same seed, and the largest
                 relative difference; ref_rel_diff is how far PyTorch-default processes
                 differ among themselves (non-deterministic kernels), the yardstick.

Acceptance, per workload, for vramlab expandable (VL_EXPANDABLE):
  speed   the upper end of its ratio interval against classic <= 1.03;
  waste   its median waste <= 1.02 and below PyTorch expandable's median waste;
  equal   every process's results equal the reference's, or (when the reference
          itself does not reproduce) differ no more than reference processes do.
PASS needs all three; n/a where a figure is missing.
"""
import csv
import io
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compare.d"))
import rankstats  # noqa: E402

REFERENCE = "torch"                  # numerical reference: PyTorch's default allocator
VL_REFERENCE = "vramlab"             # speed reference: vramlab classic
VL_EXPANDABLE = "vramlab-expandable"
TORCH_EXPANDABLE = "torch-expandable"
PAIR = f"{VL_REFERENCE}+{VL_EXPANDABLE}"  # the in-process speed check of expandable
SPEED_LIMIT = 1.03
WASTE_LIMIT = 1.02

SAMPLE_FIELDS = (
    "run_id", "round", "order", "workload", "allocator", "spec", "seed", "status", "error",
    "steps", "steps_timed", "step_ms_median", "step_ms_mean", "alloc_ms_median", "process_s",
    "step_ms_median_b", "alloc_ms_median_b", "paired_ratio",
    "peak_allocated_bytes", "peak_reserved_bytes", "peak_requested_bytes", "stats_from",
    "device_used_base_bytes", "device_used_max_bytes", "device_used_end_bytes",
    "results", "exact_equal", "max_rel_diff",
)
SUMMARY_FIELDS = (
    "workload", "allocator", "spec", "n", "failed",
    "step_ms", "step_ms_lo", "step_ms_hi", "step_ms_ci",
    "ratio", "ratio_lo", "ratio_hi", "ratio_p", "ratio_ci", "ratio_basis", "step_ms_b", "alloc_ms_b",
    "alloc_ms", "alloc_ms_lo", "alloc_ms_hi",
    "peak_reserved_bytes", "peak_allocated_bytes", "peak_requested_bytes",
    "waste", "waste_min", "waste_max", "waste_basis",
    "device_used_max_bytes", "equal", "max_rel_diff", "ref_rel_diff",
)
VERDICT_FIELDS = ("workload", "ratio_hi", "paired_hi", "speed", "alloc_ms_more", "waste", "torch_expandable_waste", "waste_ok",
                  "equal", "verdict")


# --- small helpers ------------------------------------------------------------------------------

def num(v):
    """A CSV cell as a float; None for empty, unknown (< 0 counters) or unparsable."""
    if v is None or v == "":
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


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


def fmt(x, digits=4):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return ""
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}g}" if abs(x) < 1e6 else str(int(round(x)))


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
        ref_steps = [math.log(x) for x in (num(r.get("step_ms_median")) for r in ok_of.get(VL_REFERENCE, []))
                     if x and x > 0]
        ref_rels = [num(r.get("max_rel_diff")) for r in ok_of.get(REFERENCE, [])]
        ref_rel = max((x for x in ref_rels if x is not None), default=None)
        for a in order:
            all_rows = groups.get((w, a), [])
            if not all_rows:
                continue
            ok = ok_of[a]
            steps = [x for x in (num(r.get("step_ms_median")) for r in ok) if x and x > 0]
            med, lo, hi, cov = median_ci(steps)
            s = dict(workload=w, allocator=a, spec=all_rows[0].get("spec", ""), n=len(ok),
                     failed=len(all_rows) - len(ok), step_ms=med, step_ms_lo=lo, step_ms_hi=hi,
                     step_ms_ci=cov)
            s.update(ratio=None, ratio_lo=None, ratio_hi=None, ratio_p=None, ratio_ci=None, ratio_basis="",
                     step_ms_b=None,
                     alloc_ms_b=None)
            pr = [x for x in (num(r.get("paired_ratio")) for r in ok) if x and x > 0]
            if pr:  # a pair: B against A inside each process
                rmed, rlo, rhi, rcov = paired_ci(pr)
                sb = [x for x in (num(r.get("step_ms_median_b")) for r in ok) if x and x > 0]
                ab = [x for x in (num(r.get("alloc_ms_median_b")) for r in ok) if x is not None and x >= 0]
                s.update(ratio=rmed, ratio_lo=rlo, ratio_hi=rhi, ratio_ci=rcov,
                         ratio_basis=f"in-process pairs, signed-rank over {len(pr)} processes",
                         step_ms_b=rankstats.quantile_median(sb) if sb else None,
                         alloc_ms_b=rankstats.quantile_median(ab) if ab else None)
            elif steps and ref_steps:
                logs = [math.log(x) for x in steps]
                est, rlo, rhi = rankstats.hodges_lehmann(ref_steps, logs)
                s.update(ratio=math.exp(est), ratio_lo=math.exp(rlo) if math.isfinite(rlo) else None,
                         ratio_hi=math.exp(rhi) if math.isfinite(rhi) else None,
                         ratio_p=rankstats.mann_whitney(ref_steps, logs) if a != VL_REFERENCE else None,
                         ratio_ci=0.95, ratio_basis=f"between processes, against {VL_REFERENCE}, Hodges-Lehmann")
            am = [x for x in (num(r.get("alloc_ms_median")) for r in ok) if x is not None and x >= 0]
            amed, alo, ahi, _ = median_ci(am)
            s.update(alloc_ms=amed, alloc_ms_lo=alo, alloc_ms_hi=ahi)
            for key in ("peak_reserved_bytes", "peak_allocated_bytes", "peak_requested_bytes",
                        "device_used_max_bytes"):
                vals = [x for x in (counter(r.get(key)) for r in ok) if x is not None]
                s[key] = rankstats.quantile_median(vals) if len(vals) == len(ok) and vals else None
            wastes = [waste_of(r) for r in ok]
            wv = [x for x, _ in wastes if x is not None]
            s.update(waste=rankstats.quantile_median(wv) if wv and len(wv) == len(ok) else None,
                     waste_min=min(wv) if wv else None, waste_max=max(wv) if wv else None,
                     waste_basis="/".join(sorted({b for _, b in wastes if b})))
            eq = [r.get("exact_equal") for r in ok if r.get("exact_equal") in ("yes", "no")]
            rels = [num(r.get("max_rel_diff")) for r in ok if r.get("max_rel_diff") not in (None, "")]
            s.update(equal=f"{eq.count('yes')}/{len(eq)}" if eq else "",
                     max_rel_diff=max((x if x is not None else math.inf) for x in rels) if rels else None,
                     ref_rel_diff=ref_rel)
            out.append(s)
    # A run without a classic column (speed from the pairs only): X's ratio to classic is
    # that of the pair vramlab+X, so that the figure can place X.
    by = {(s["workload"], s["allocator"]): s for s in out}
    for s in out:
        pair = by.get((s["workload"], f"{VL_REFERENCE}+{s['allocator']}"))
        if s["ratio"] is None and pair and pair["ratio"] is not None:
            s.update({k: pair[k] for k in ("ratio", "ratio_lo", "ratio_hi", "ratio_ci")},
                     ratio_basis=f"from the pair {pair['allocator']}: " + pair["ratio_basis"])
    return out


def verdict(summary):
    """One row per workload: the acceptance check of vramlab expandable."""
    by = {(s["workload"], s["allocator"]): s for s in summary}
    rows = []
    for w in dict.fromkeys(s["workload"] for s in summary):
        e, t = by.get((w, VL_EXPANDABLE)), by.get((w, TORCH_EXPANDABLE))
        c, pair = by.get((w, VL_REFERENCE)), by.get((w, PAIR))
        v = dict(workload=w, ratio_hi=None, paired_hi=None, speed="n/a", alloc_ms_more=None, waste=None,
                 torch_expandable_waste=None, waste_ok="n/a", equal="n/a", verdict="n/a")
        if e is None or e["n"] == 0:
            rows.append(v)
            continue
        v["ratio_hi"] = e["ratio_hi"]
        # the paired interval counts where it reaches 95% (6 processes or more)
        if pair and pair["ratio_hi"] is not None and (pair["ratio_ci"] or 0) >= 0.95:
            v["paired_hi"] = pair["ratio_hi"]
        if c and e.get("alloc_ms") is not None and c.get("alloc_ms") is not None and c.get("step_ms"):
            # the allocator time expandable adds per step, as a share of classic's step
            v["alloc_ms_more"] = (e["alloc_ms"] - c["alloc_ms"]) / c["step_ms"]
        # The narrower of the two intervals judges (the more precise measurement of the
        # same ratio), never the more favourable one.
        hi = e["ratio_hi"]
        if v["paired_hi"] is not None and (hi is None or e["ratio_lo"] is None or
                                           v["paired_hi"] / pair["ratio_lo"] < hi / e["ratio_lo"]):
            hi = v["paired_hi"]
        if hi is not None:
            v["speed"] = "ok" if hi <= SPEED_LIMIT else "FAIL"
        v["waste"] = e["waste"]
        v["torch_expandable_waste"] = t["waste"] if t else None
        if e["waste"] is not None and v["torch_expandable_waste"] is not None:
            v["waste_ok"] = "ok" if e["waste"] <= WASTE_LIMIT and e["waste"] < t["waste"] else "FAIL"
        if e["equal"]:
            yes, n = (int(x) for x in e["equal"].split("/"))
            if yes == n:
                v["equal"] = "ok"
            elif e["ref_rel_diff"] is not None and e["max_rel_diff"] is not None \
                    and e["max_rel_diff"] <= e["ref_rel_diff"] and e["ref_rel_diff"] > 0:
                v["equal"] = "ok~"  # differs, but no more than the reference from itself
            else:
                v["equal"] = "FAIL"
        checks = (v["speed"], v["waste_ok"], v["equal"])
        if "FAIL" in checks:
            v["verdict"] = "FAIL"
        elif "n/a" not in checks:
            v["verdict"] = "PASS"
        rows.append(v)
    return rows


# --- files and tables ------------------------------------------------------------------------------

def cells(fields, row, digits=4):
    """A row's CSV cells: strings as they are (read back from a CSV), numbers through fmt."""
    return [fmt(row.get(k), digits) if not isinstance(row.get(k), str) else row.get(k) for k in fields]


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


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def table(summary, verdicts):
    """The printed report: the summary per workload, then the verdict."""
    def x(v, d=4):
        return "-" if v is None else fmt(v, d)

    lines = [f"{'workload':12} {'allocator':20} {'n':>2} {'step ms':>9} {'[interval]':>19} "
             f"{'x classic':>9} {'[95% HL]':>17} {'alloc ms':>8} {'waste':>7} {'res GiB':>8} {'equal':>6}"]
    for s in summary:
        res = s["peak_reserved_bytes"]
        lines.append(
            f"{s['workload']:12} {s['allocator']:20} {s['n']:>2} {x(s['step_ms']):>9} "
            f"{'[' + x(s['step_ms_lo']) + ', ' + x(s['step_ms_hi']) + ']':>19} {x(s['ratio']):>9} "
            f"{'[' + x(s['ratio_lo']) + ', ' + x(s['ratio_hi']) + ']':>17} {x(s.get('alloc_ms'), 3):>8} "
            f"{x(s['waste'], 5):>7} "  # 1.0215, not 1.02: the limit is 1.02
            f"{x(res / 2**30 if res is not None else None, 3):>8} {s['equal'] or '-':>6}"
            + (f"  ({s['failed']} failed)" if s["failed"] else ""))
    lines.append("")
    lines.append(f"acceptance of {VL_EXPANDABLE}: ratio to classic <= {SPEED_LIMIT} (upper end of the 95% "
                 f"interval between processes, or of {PAIR}'s paired interval), waste <= {WASTE_LIMIT} and "
                 f"below {TORCH_EXPANDABLE}'s, results equal; "
                 "alloc+: the allocator time it adds per step, over classic's step time (not judged)")
    lines.append(f"{'workload':12} {'ratio hi':>9} {'paired hi':>9} {'speed':>6} {'alloc+':>7} {'waste':>7} "
                 f"{'torch-exp':>9} {'waste':>6} {'equal':>6} {'verdict':>7}")
    for v in verdicts:
        more = v.get("alloc_ms_more")
        lines.append(f"{v['workload']:12} {x(v['ratio_hi']):>9} {x(v.get('paired_hi')):>9} {v['speed']:>6} "
                     f"{(f'{more:+.2%}' if more is not None else '-'):>7} {x(v['waste'], 5):>7} "
                     f"{x(v['torch_expandable_waste'], 5):>9} {v['waste_ok']:>6} {v['equal']:>6} {v['verdict']:>7}")
    return "\n".join(lines)


def write_summary(outdir, rows, allocators=None, comments=()):
    """samples.csv (equality filled in), summary.csv, verdict.csv; returns the printed table."""
    mark_equality(rows)
    samples = os.path.join(outdir, "samples.csv")
    write_csv(samples, SAMPLE_FIELDS, rows, comments, digits=9)
    # summarized as written, so that --summarize of a copied folder gives the same figures
    summary = summarize(read_csv(samples), allocators)
    verdicts = verdict(summary)
    write_csv(os.path.join(outdir, "summary.csv"), SUMMARY_FIELDS, summary, comments)
    write_csv(os.path.join(outdir, "verdict.csv"), VERDICT_FIELDS, verdicts, comments)
    text = table(summary, verdicts)
    with open(os.path.join(outdir, "report.txt"), "w") as f:
        f.write(text + "\n")
    return text
