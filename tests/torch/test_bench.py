#!/usr/bin/env python3
"""Checks the live PyTorch benchmark's pure-Python parts on synthetic samples (no torch,
no GPU): the schedule, the median interval, equality marking, the summary and its
ratio interval, the verdict (pass, each way to fail, n/a), the CSV files, `bench.py
--summarize` on a copied results folder, `--dry-run` and its RMM skip, the gnuplot
figure (where gnuplot is installed), and split runs on stand-ins for torch and the
workloads: samples.csv written as processes end, a stop signal mid-process (exit 124,
the cut process absent), `--resume` (done processes skipped, failed ones run again,
one summary of all the parts). Run by `make test-torch-bench` (mk/torch_bench.mk). The speed, waste and equality
checks are in vramlab.verdict's words: PASS, FAIL, INCONCLUSIVE (once ok, slower, inconclusive).
Exit 0 passed, 1 failed."""
import csv
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TORCH = os.path.join(ROOT, "scripts", "vramlab", "torch")  # the modules under test
sys.path.insert(0, os.path.join(ROOT, "scripts"))  # the vramlab package, as scripts/vl has it
from vramlab import rankstats, verdict  # noqa: E402
from vramlab.results import number, read_dicts  # noqa: E402
from vramlab.torch import bench  # noqa: E402  (imports no torch at module level)
from vramlab.torch import bench_stats as bs  # noqa: E402
from vramlab.torch import zoo  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from pychecks import check, counts, skip  # noqa: E402

BENCH = [sys.executable, os.path.join(ROOT, "scripts", "vl"), "torch.bench"]  # as make torch-bench runs it
PASS, FAIL, INCONCLUSIVE = verdict.PASS, verdict.FAIL, verdict.UNDECIDED




def alive(pid):
    """Whether process pid still exists (signal 0 tests without sending)."""
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False

STANDIN_TORCH = """
__version__ = "0.0-standin"
class _NS:
    pass
version = _NS(); version.cuda = "0.0"
backends = _NS(); backends.cudnn = _NS(); backends.cuda = _NS()
for _n in ("enable_flash_sdp", "enable_mem_efficient_sdp", "enable_cudnn_sdp"):
    setattr(backends.cuda, _n, lambda on: None)
def use_deterministic_algorithms(on, warn_only=False):
    pass
class _Tensor:  # host_probe.py's in-place kernel
    def mul_(self, v): return self
def ones(n, device=None): return _Tensor()
class _C:
    @staticmethod
    def _cuda_getDriverVersion():
        return 13000
class cuda:
    used = [500]
    @staticmethod
    def is_available(): return True
    @staticmethod
    def synchronize(): pass
    @staticmethod
    def mem_get_info():
        cuda.used[0] += 25
        return 10000 - cuda.used[0], 10000
    @staticmethod
    def get_device_name(i): return "Stand-in GPU"
    stats_calls = [0]
    @staticmethod
    def memory_stats():  # device calls: 3 maps and 1 unmap between two readings
        cuda.stats_calls[0] += 1
        return {"allocated_bytes.all.peak": 2000, "reserved_bytes.all.peak": 3000, "requested_bytes.all.peak": 0,
                "num_device_alloc": 3 * cuda.stats_calls[0], "num_device_free": cuda.stats_calls[0]}
    class memory:
        class CUDAPluggableAllocator:
            def __init__(self, path, a, f): pass
        @staticmethod
        def change_current_allocator(a): pass
"""
STANDIN_WORKLOADS = """
import os, time
def run(size, seed, on_step, repeats=1):
    spec = os.environ.get("VRAMLAB_ALLOC") or os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or "default"
    if os.environ.get("VL_STANDIN_STARTED"):  # one line per process started: pid and spec
        with open(os.environ["VL_STANDIN_STARTED"], "a") as f:
            f.write(f"{os.getpid()} {spec}\\n")
    if os.environ.get("VL_STANDIN_FAIL") == spec:
        raise RuntimeError("stand-in failure under " + spec)
    pair = bool(os.environ.get("VRAMLAB_ALLOC_B"))
    for i in range(8 * repeats):
        base = float(os.environ.get("VL_STANDIN_SLEEP", "0.02"))
        if pair:  # steps 0, 3, 6 four times the others; B (units A B B A ...) 1.5 x slower
            base *= (4 if (i // repeats) % 3 == 0 else 1) * (1.5 if (0, 1, 1, 0)[i % 4] else 1)
        time.sleep(base)
        on_step(i)
    odd = os.environ.get("VRAMLAB_ALLOC") == "caching:segments=expandable"
    return [1.0, 2.0, 3.0 if not odd else 1.5]
from vramlab.torch import zoo  # the worker runs through scripts/vl: the package is on its path
RUN = {w.name: run for w in zoo.ZOO}
"""


# --- schedule: every pair once a round, allocators rotated ---
jobs = bench.schedule(["w1", "w2"], ["a", "b", "c"], 3)
check("schedule size", len(jobs) == 18, len(jobs))
check("round 1 order", [j[3] for j in jobs[:3]] == ["a", "b", "c"], jobs[:3])
check("round 2 rotated", [j[3] for j in jobs[6:9]] == ["b", "c", "a"], jobs[6:9])
check("order numbers", [j[1] for j in jobs] == list(range(18)), jobs)
check("each pair once per round", all(
    sorted((j[2], j[3]) for j in jobs if j[0] == r) == sorted((w, a) for w in ("w1", "w2") for a in "abc")
    for r in (1, 2, 3)))

# --- median interval ---
med, lo, hi, cov = bs.median_ci([5, 1, 4, 2, 3])
check("median of 5: min..max at 93.75%", (med, lo, hi) == (3, 1, 5) and abs(cov - 0.9375) < 1e-12, (med, lo, hi, cov))
med, lo, hi, cov = bs.median_ci(list(range(1, 21)))
check("median of 20: x(6)..x(15)", (lo, hi) == (6, 15) and cov >= 0.95, (lo, hi, cov))
check("median of none", bs.median_ci([]) == (None, None, None, None))
# waste is judged against 1.02: its CSV cell keeps the digits that decide it
check("CSV cells: waste 1.0201 stays above the limit, other figures 4 digits",
      bs.cells(("waste", "waste_max", "step_ms"), {"waste": 1.0201, "waste_max": 1.02014, "step_ms": 12.3456})
      == ["1.0201", "1.02014", "12.35"], bs.cells(("waste", "waste_max", "step_ms"),
                                                   {"waste": 1.0201, "waste_max": 1.02014, "step_ms": 12.3456}))

# --- results comparison ---
check("equal results", bs.compare_results([1.5, 2.0], [1.5, 2.0]) == (True, 0.0))
ex, rel = bs.compare_results([1.0, 2.0], [1.0, 2.002])
check("different results", not ex and abs(rel - 0.001) < 1e-6, rel)
check("different lengths", bs.compare_results([1.0], [1.0, 2.0]) == (False, math.inf))
check("results round trip", bs.parse_results(bs.format_results([0.1 + 0.2, 3, -7])) == [0.1 + 0.2, 3, -7])


# --- synthetic samples: 5 processes per allocator ---
# torch is the speed reference; vramlab-expandable is 0.5% slower than it, torch-expandable 4%
STEP = {"torch": 10.0, "torch-expandable": 10.4, "vramlab": 10.0, "vramlab-expandable": 10.05, "rmm-pool": 12.0}
WASTE = {"torch": 1.30, "torch-expandable": 1.05, "vramlab": 1.25, "vramlab-expandable": 1.01, "rmm-pool": 1.6}
MAPS = {"torch": (2.5, 0.5), "torch-expandable": (4.0, 1.0), "vramlab": (0.0, 0.0), "vramlab-expandable": (12.0, 11.0)}


def samples(workload="wA", slow=1.0, waste=None, results="1.5 2.25 3.0", bad_results=None, rounds=5, seed=7,
            noise=0.005, burst=1.0):
    """Synthetic processes; burst: vramlab-expandable's mean step over its median step
    against the others' (rare slow steps that leave the median where it was)."""
    rng = random.Random(seed)
    rows, k = [], 0
    for r in range(1, rounds + 1):
        for a in STEP:
            ms = STEP[a] * (slow if a == "vramlab-expandable" else 1.0) * (1 + rng.uniform(-noise, noise))
            alloc = 1_000_000_000
            w = (waste if waste is not None and a == "vramlab-expandable" else WASTE[a])
            maps, unmaps = MAPS.get(a, ("", ""))  # rmm-pool keeps no device-call counters: empty
            row = dict(run_id="t", round=r, order=k, workload=workload, allocator=a, spec=a, seed=1,
                       status="ok", step_ms_median=ms,
                       step_ms_mean=ms * 1.02 * (burst if a == "vramlab-expandable" else 1.0),
                       peak_reserved_bytes=int(alloc * w),
                       peak_allocated_bytes=alloc if a != "rmm-pool" else -1, peak_requested_bytes=alloc,
                       device_used_base_bytes=500 * 2**20, device_used_max_bytes=500 * 2**20 + int(alloc * w),
                       maps_per_step=maps, unmaps_per_step=unmaps,
                       results=bad_results if (bad_results and a == "vramlab-expandable") else results)
            if a.startswith("vramlab"):  # time inside the plugin per step (VRAMLAB_TIME=1)
                row["alloc_ms_median"] = 0.3 if a == "vramlab-expandable" else 0.1
                # the mean per process: bursts of relocation (expandable: 2.0 + the round)
                row["alloc_ms_mean"] = 2.0 + r if a == "vramlab-expandable" else 0.1
            rows.append(row)
            k += 1
    return rows


def by_alloc(summary):
    return {s_["allocator"]: s_ for s_ in summary}


rows = samples()
bs.mark_equality(rows)
check("equality marked", all(r["exact_equal"] == "yes" for r in rows), [r["exact_equal"] for r in rows][:5])
summary = bs.summarize(rows)
by = by_alloc(summary)
check("summary rows", len(summary) == len(STEP), len(summary))
# the reference is not compared with itself: no ratio, no speed call
check("the reference has no ratio", by["torch"]["ratio"] is None and by["torch"]["ratio_hi"] is None
      and by["torch"]["speed"] == "" and by["torch"]["ratio_basis"] == "the reference", by["torch"])
te = by["torch-expandable"]
check("ratio of torch-expandable: 1.04, its interval excludes 1.03", abs(te["ratio"] - 1.04) < 0.006
      and 1.03 < te["ratio_lo"] < 1.04 < te["ratio_hi"] < 1.05 and te["speed"] == FAIL, te)
check("ratio of vramlab classic: 1.00 within 1%", abs(by["vramlab"]["ratio"] - 1) < 0.01
      and by["vramlab"]["ratio_hi"] < 1.03 and by["vramlab"]["speed"] == PASS, by["vramlab"])
check("ratio of rmm-pool ~ 1.2", abs(by["rmm-pool"]["ratio"] - 1.2) < 0.02 and by["rmm-pool"]["ratio_lo"] > 1.15,
      by["rmm-pool"])
check("rmm-pool waste over requested", by["rmm-pool"]["waste_basis"] == "requested"
      and abs(by["rmm-pool"]["waste"] - 1.6) < 1e-9, by["rmm-pool"])
check("expandable waste over allocated", by["vramlab-expandable"]["waste_basis"] == "allocated", by["vramlab-expandable"])
check("5 of 5 equal", by["vramlab-expandable"]["equal"] == "5/5")
check("interval coverage recorded", abs(by["torch"]["step_ms_ci"] - 0.9375) < 1e-12, by["torch"]["step_ms_ci"])
check("maps and unmaps per step summarized", by["vramlab-expandable"]["maps_per_step"] == 12.0
      and by["vramlab-expandable"]["unmaps_per_step"] == 11.0 and by["vramlab"]["maps_per_step"] == 0.0
      and by["torch"]["maps_per_step"] == 2.5, by["vramlab-expandable"])
check("allocator time: the median over processes of their medians and of their means",
      by["vramlab-expandable"]["alloc_ms"] == 0.3 and by["vramlab-expandable"]["alloc_ms_mean"] == 5.0
      and by["torch"]["alloc_ms_mean"] is None, by["vramlab-expandable"])
check("counters an allocator does not keep: empty, not 0", by["rmm-pool"]["maps_per_step"] is None
      and by["rmm-pool"]["unmaps_per_step"] is None and by["torch"]["alloc_ms"] is None, by["rmm-pool"])
check("device memory taken: max - base", by["vramlab-expandable"]["device_used_bytes"] == int(1e9 * 1.01),
      by["vramlab-expandable"]["device_used_bytes"])
v = bs.verdict(summary)
check("pass", v[0]["verdict"] == "PASS" and v[0]["speed"] == PASS and v[0]["waste_ok"] == PASS, v)
check("allocator time summarized", by["vramlab-expandable"]["alloc_ms"] == 0.3, by["vramlab-expandable"])
check("allocator time over torch's step", abs(v[0]["alloc_share"] - 0.3 / by["torch"]["step_ms"]) < 1e-12, v[0])
check("allocator time in the report", f" {0.3 / by['torch']['step_ms']:.2%} " in bs.table(summary, v),
      bs.table(summary, v))
check("overall PASS", bs.overall(v).startswith("overall: PASS: 1 of 1 pass"), bs.overall(v))

# one process lacks a counter: the figure is not summarized from the others
part = samples()
next(r for r in part if r["allocator"] == "vramlab-expandable")["maps_per_step"] = ""
check("a counter some processes lack: empty", by_alloc(bs.summarize(part))["vramlab-expandable"]["maps_per_step"]
      is None)

# --- per-step device calls from cumulative counters (bench.py's worker) ---
# readings[0] before step 0, readings[i + 1] after step i; 2 warm-up steps, then 3 timed
check("per-step maps from counters", bs.per_step([None, 5, 9, 12, 18, 21], 2) == 4.0,
      bs.per_step([None, 5, 9, 12, 18, 21], 2))
check("per-step maps: an unknown reading at either end: None, not 0",
      bs.per_step([None, 5, 9, None], 2) is None and bs.per_step([None, 5, 9, 12], 0) is None
      and bs.per_step([3, None, None, 9], 0) == 2.0, [bs.per_step([None, 5, 9, None], 2)])
check("per-step maps: no timed step", bs.per_step([1, 2], 1) is None)
check("counter delta", bs.counter_delta(7, 19) == 12 and bs.counter_delta(None, 19) is None
      and bs.counter_delta(7, None) is None and bs.counter_delta(0, 0) == 0)


# --- the ratio's interval: the Hodges-Lehmann shift and the rank-sum (Moses) interval ---
def exact_rank_sum_p(a, b):
    """The two-sided exact rank-sum p-value by enumerating every split (no ties): an
    implementation independent of rankstats', for small samples."""
    import itertools
    pooled = sorted(a + b)
    rank = {x: i + 1 for i, x in enumerate(pooled)}
    observed = sum(rank[x] for x in a)
    mean = len(a) * (len(pooled) + 1) / 2
    sums = [sum(c) for c in itertools.combinations(range(1, len(pooled) + 1), len(a))]
    return sum(abs(s_ - mean) >= abs(observed - mean) - 1e-9 for s_ in sums) / len(sums)


def inverts_the_test(ref, other, lo, hi, p_of, alpha=0.05):
    """The Moses interval is the set of log shifts the rank-sum test does not reject:
    just inside each end the shifted samples are not rejected, just outside they are."""
    la, lb = [math.log(x) for x in ref], [math.log(x) for x in other]
    eps = 1e-9

    def p(shift):
        return p_of([x + shift for x in la], lb)
    llo, lhi = math.log(lo), math.log(hi)
    return p(llo + eps) > alpha and p(lhi - eps) > alpha and p(llo - eps) <= alpha and p(lhi + eps) <= alpha


rng = random.Random(11)
ref4 = [10 * (1 + rng.uniform(-0.03, 0.03)) for _ in range(4)]
oth4 = [10.4 * (1 + rng.uniform(-0.03, 0.03)) for _ in range(4)]
est, lo, hi, p = bs.ratio_between(ref4, oth4)
diffs = sorted(math.log(y) - math.log(x) for x in ref4 for y in oth4)
check("4 against 4: the interval is min..max of the 16 log differences (97.1%)",
      abs(math.log(lo) - diffs[0]) < 1e-12 and abs(math.log(hi) - diffs[-1]) < 1e-12, (lo, hi, diffs))
check("4 against 4: the estimate is the median log difference",
      abs(math.log(est) - (diffs[7] + diffs[8]) / 2) < 1e-12, est)
check("4 against 4: the interval inverts the exact rank-sum test", inverts_the_test(ref4, oth4, lo, hi,
                                                                                     exact_rank_sum_p), (lo, hi))
ref8 = [10 * (1 + rng.uniform(-0.05, 0.05)) for _ in range(8)]
oth8 = [10.2 * (1 + rng.uniform(-0.05, 0.05)) for _ in range(8)]
est8, lo8, hi8, p8 = bs.ratio_between(ref8, oth8)
check("8 against 8: the interval inverts the exact rank-sum test", inverts_the_test(ref8, oth8, lo8, hi8,
                                                                                     exact_rank_sum_p), (lo8, hi8))
check("8 against 8: p-value against the enumeration", abs(p8 - exact_rank_sum_p(
    [math.log(x) for x in ref8], [math.log(x) for x in oth8])) < 1e-12, p8)
try:
    from scipy.stats import mannwhitneyu
except ImportError:
    mannwhitneyu = None
if mannwhitneyu is None:
    skip("interval and p-value against scipy.stats.mannwhitneyu", "scipy not importable")
else:
    def scipy_p(a, b):
        return mannwhitneyu(a, b, alternative="two-sided", method="exact").pvalue
    check("p-value equals scipy's exact Mann-Whitney", abs(p8 - scipy_p(ref8, oth8)) < 1e-9, (p8, scipy_p(ref8, oth8)))
    check("4 against 4: interval inverts scipy's test", inverts_the_test(ref4, oth4, lo, hi, scipy_p), (lo, hi))
    check("8 against 8: interval inverts scipy's test", inverts_the_test(ref8, oth8, lo8, hi8, scipy_p), (lo8, hi8))
est3, lo3, hi3, _ = bs.ratio_between(ref4[:3], oth4[:3])
check("3 against 3: an estimate, no 95% interval", est3 is not None and lo3 is None and hi3 is None, (lo3, hi3))
check("no reference: no ratio", bs.ratio_between([], oth4) == (None, None, None, None))

# processes needed for +-3%: the formula against the pooled variance of statistics, and
# the rank interval it sizes, simulated at a ratio of 1
import statistics  # noqa: E402
la8, lb8 = [math.log(x) for x in ref8], [math.log(x) for x in oth8]
pooled = ((len(la8) - 1) * statistics.variance(la8) + (len(lb8) - 1) * statistics.variance(lb8)) / (len(la8) + len(lb8) - 2)
want = math.ceil(2 * (1.959963984540054 * math.sqrt(pooled) / math.log(1.03)) ** 2 / (3 / math.pi))
check("procs_needed: 2 (z s / ln 1.03)^2 / (3/pi), s pooled", bs.procs_needed(ref8, oth8) == max(2, want),
      (bs.procs_needed(ref8, oth8), want))
check("procs_needed: none with one process a side", bs.procs_needed(ref8[:1], oth8) is None)
sim = random.Random(5)
n_sim = bs.procs_needed([math.exp(sim.gauss(0, 0.05)) for _ in range(400)], [math.exp(sim.gauss(0, 0.05)) for _ in range(400)])
widths = []
for _ in range(200):
    a = [100 * math.exp(sim.gauss(0, 0.05)) for _ in range(n_sim)]
    b = [100 * math.exp(sim.gauss(0, 0.05)) for _ in range(n_sim)]
    _, lo_s, hi_s, _ = bs.ratio_between(a, b)
    widths.append((math.log(hi_s) - math.log(lo_s)) / 2)
half = statistics.median(widths)
check(f"procs_needed ({n_sim} a side at s = 0.05): the rank interval's half-width is about ln 1.03",
      abs(half / math.log(1.03) - 1) < 0.15, (half, math.log(1.03)))

# the speed call against 1.03
# the speed check against 1.03 (vramlab.verdict.check: a ratio with its interval)
def speed(ratio, lo, hi):
    return bs.speed_of([(ratio, lo, hi)])


check("speed: upper end <= 1.03 is PASS", speed(1.0, 0.95, 1.03) == PASS)
check("speed: lower end above 1.03 is FAIL", speed(1.1, 1.031, 1.2) == FAIL)
check("speed: across 1.03 is INCONCLUSIVE", speed(1.01, 1.0, 1.031) == INCONCLUSIVE
      and speed(None, None, None) == INCONCLUSIVE)
# one set of rules with compare: a real slowdown (the interval above 1) whose estimate is
# beyond 3% fails, as compare calls it a REGRESSION at --threshold 0.03
check("speed: a real slowdown beyond 3% FAILs though its interval reaches below 1.03",
      speed(1.04, 1.01, 1.07) == FAIL and speed(1.02, 1.01, 1.07) == INCONCLUSIVE)

check("speed_of: every interval must hold", bs.speed_of(((1.0, 0.99, 1.01), (1.0, 0.99, 1.02))) == PASS
      and bs.speed_of(((1.0, 0.99, 1.01), (1.02, 1.00, 1.05))) == INCONCLUSIVE
      and bs.speed_of(((1.0, 0.99, 1.01), (1.05, 1.04, 1.06))) == FAIL
      and bs.speed_of(((1.0, 0.99, 1.01), (None, None, None))) == INCONCLUSIVE and bs.speed_of(()) == INCONCLUSIVE)

# --- the verdict: each way to fail, inconclusive, the pairs ignored ---
# the median step the same, the mean 6% longer (rare slow steps): the mean's interval fails it
v = bs.verdict(bs.summarize(bs.mark_equality(samples(burst=1.06))))
check("equal medians, a 6% longer mean step: slower", v[0]["speed"] == FAIL and v[0]["verdict"] == "FAIL"
      and v[0]["ratio_hi"] < 1.03 and v[0]["ratio_mean_lo"] > 1.03 and abs(v[0]["ratio_mean"] - 1.06) < 0.01, v)
v = bs.verdict(bs.summarize(bs.mark_equality([{k: x for k, x in r.items() if k != "step_ms_mean"}
                                              for r in samples()])))
check("no mean step recorded: speed inconclusive, not ok", v[0]["speed"] == INCONCLUSIVE
      and v[0]["ratio_mean"] is None and v[0]["ratio_hi"] < 1.03, v)
v = bs.verdict(bs.summarize(bs.mark_equality(samples(slow=1.05))))
check("5% slower fails speed", v[0]["speed"] == FAIL and v[0]["verdict"] == "FAIL", v)
# the waste's limit: PyTorch expandable's (1.05 here) + 0.005; 1.02 where the run has none
v = bs.verdict(bs.summarize(bs.mark_equality(samples(waste=1.056))))
check("waste 1.056 against PyTorch expandable's 1.05 fails", v[0]["waste_ok"] == "FAIL" and v[0]["verdict"] == "FAIL"
      and abs(v[0]["waste_limit"] - 1.055) < 1e-12, v)
v = bs.verdict(bs.summarize(bs.mark_equality(samples(waste=1.054))))
check("waste 1.054 against PyTorch expandable's 1.05 passes", v[0]["waste_ok"] == PASS and v[0]["verdict"] == "PASS", v)
no_texp = lambda rows: [r for r in rows if r["allocator"] != "torch-expandable"]  # noqa: E731
v = bs.verdict(bs.summarize(bs.mark_equality(no_texp(samples(waste=1.03)))))
check("no PyTorch expandable in the run: waste 1.03 fails", v[0]["waste_ok"] == "FAIL" and v[0]["verdict"] == "FAIL"
      and v[0]["waste_limit"] == bs.WASTE_LIMIT and v[0]["torch_expandable_waste"] is None, v)
v = bs.verdict(bs.summarize(bs.mark_equality(no_texp(samples(waste=1.0199)))))
check("no PyTorch expandable in the run: waste 1.0199 passes", v[0]["waste_ok"] == PASS and v[0]["verdict"] == "PASS", v)
v = bs.verdict(bs.summarize(bs.mark_equality(samples(bad_results="1.5 2.25 3.1"))))
check("different results fail", v[0]["equal"] == "FAIL" and v[0]["verdict"] == "FAIL", v)
# 3% slower, +-4% between processes: the interval straddles 1.03
v = bs.verdict(bs.summarize(bs.mark_equality(samples(slow=1.03, noise=0.04, seed=3))))
check("an interval across 1.03: INCONCLUSIVE", v[0]["speed"] == INCONCLUSIVE and v[0]["verdict"] == "INCONCLUSIVE"
      and v[0]["ratio_lo"] < 1.03 < v[0]["ratio_hi"], v)
check("overall INCONCLUSIVE names the workload", bs.overall(v) == "overall: INCONCLUSIVE: 0 of 1 pass; "
      "inconclusive: wA", bs.overall(v))
v = bs.verdict(bs.summarize(bs.mark_equality(samples(rounds=3))))
check("3 processes: no interval, INCONCLUSIVE", v[0]["speed"] == INCONCLUSIVE and v[0]["ratio_hi"] is None
      and v[0]["verdict"] == "INCONCLUSIVE", v)
v = bs.verdict(bs.summarize(bs.mark_equality(samples(rounds=4))))
check("4 processes: an interval, PASS", v[0]["ratio_hi"] is not None and v[0]["verdict"] == "PASS", v)
# --- complete_rounds: the complete rounds of a time-boxed run ---
from vramlab.torch import complete_rounds  # noqa: E402
rows = samples(rounds=4)
cut = [r for r in rows if not (r["round"] == 3 and r["allocator"] == "torch")]  # round 3 lacks one pair
check("complete rounds: up to the first incomplete one", complete_rounds.complete_rounds(cut) == 2)
check("complete rounds: all of them", complete_rounds.complete_rounds(rows) == 4)
check("complete rounds: a failed process is not a sample", complete_rounds.complete_rounds(
    [dict(r, status="failed") if r["round"] == 1 and r["allocator"] == "vramlab" else r for r in rows]) == 0)
with tempfile.TemporaryDirectory() as d:
    bench_stats_rows = [dict(r, exact_equal="", max_rel_diff="") for r in cut]
    bs.write_csv(os.path.join(d, "samples.csv"), bs.SAMPLE_FIELDS, bench_stats_rows, ["run_id: t", "rounds: 4"])
    out = os.path.join(d, "rounds")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "vl"), "torch.complete_rounds", d, out],
                       capture_output=True, text=True, cwd="/")
    kept = read_dicts(os.path.join(out, "samples.csv")) if os.path.exists(os.path.join(out, "samples.csv")) else []
    check("complete_rounds.py: rounds 1-2 kept, COMPLETE written", p.returncode == 0 and len(kept) == 10
          and os.path.exists(os.path.join(out, "COMPLETE")) and "1-2 of 4 planned" in p.stdout, p.stdout + p.stderr)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "vl"), "torch.complete_rounds", d, out],
                       capture_output=True, text=True, cwd="/")
    check("complete_rounds.py: an existing OUT is refused", p.returncode == 2 and "exists" in p.stderr, p.stderr)

# --- the ratio adjusted for the host probe (a diagnostic beside the verdict) ---
def verdict_of(rows, workload="wA"):
    return {x["workload"]: x for x in bs.verdict(bs.summarize(bs.mark_equality(rows)))}[workload]


# --- round pairing: from 6 rounds the ratio is taken within rounds (signed-rank) ---
def drifting(rounds, slow, seed, drift=0.25, noise=0.01):
    """Two allocators whose step times drift together over the rounds (the VM slows by up
    to drift), each process off by +-noise; expandable slow x the other."""
    rng = random.Random(seed)
    rows = []
    for r in range(1, rounds + 1):
        host = 1 + drift * rng.random()
        for a in ("torch", "vramlab-expandable"):
            ms = 10.0 * host * (slow if a == "vramlab-expandable" else 1.0) * (1 + rng.uniform(-noise, noise))
            rows.append(dict(run_id="t", round=r, order=len(rows), workload="wA", allocator=a, spec=a, seed=1,
                             status="ok", step_ms_median=ms, step_ms_mean=ms * 1.02, peak_reserved_bytes=1010,
                             peak_allocated_bytes=1000, results="1"))
    return rows


v = verdict_of(drifting(10, 1.0, 5))
check("drift between rounds: round-paired, resolved within 3%", v["speed"] == PASS and v["rounds_paired"] == 10
      and 0.98 < v["ratio_lo"] <= 1.0 <= v["ratio_hi"] < 1.02 and v["verdict"] == "PASS", v)
s10 = {x["allocator"]: x for x in bs.summarize(bs.mark_equality(drifting(10, 1.0, 5)))}["vramlab-expandable"]
check("drift: the between-process interval kept beside it, wider and across 1.03",
      s10["ratio_between_lo"] < 0.95 and s10["ratio_between_hi"] > 1.05 and "round-paired" in s10["ratio_basis"]
      and "10 of 10 processes" in s10["ratio_basis"] and abs(s10["ratio_ci"] - (1 - 2 * 25 / 1024)) < 1e-12, s10)
check("drift: a signed-rank p-value, no difference", s10["ratio_p"] is not None and s10["ratio_p"] > 0.05, s10)
v = verdict_of(drifting(10, 1.06, 5))
check("drift, 6% slower: round-paired, slower", v["speed"] == FAIL and v["ratio_lo"] > 1.03
      and v["verdict"] == "FAIL", v)
v = verdict_of(drifting(5, 1.0, 5))
check("5 rounds: between processes (no 95% signed-rank interval), inconclusive under drift",
      v["rounds_paired"] == 5 and v["speed"] == INCONCLUSIVE, v)
rows = drifting(8, 1.0, 5)
rows = [r for r in rows if not (r["round"] == 2 and r["allocator"] == "torch")]
s7 = {x["allocator"]: x for x in bs.summarize(bs.mark_equality(rows))}["vramlab-expandable"]
check("a round without its reference process: the other 7 paired", s7["rounds_paired"] == 7
      and "7 of 8 processes" in s7["ratio_basis"], s7)
rows = drifting(8, 1.0, 5) + [dict(drifting(1, 1.0, 6)[1], order=99)]  # a second process of round 1
s2 = {x["allocator"]: x for x in bs.summarize(bs.mark_equality(rows))}["vramlab-expandable"]
check("two processes of one side in one round: nothing paired, between processes", s2["rounds_paired"] == 0
      and s2["ratio_basis"].startswith("between processes"), s2)
# A/A under drift: the round-paired interval keeps its level (no shift, 400 runs of 8 rounds)
covered = 0
for seed in range(400):
    got = {x["allocator"]: x for x in bs.summarize(bs.mark_equality(drifting(8, 1.0, 1000 + seed, noise=0.03)))}
    e = got["vramlab-expandable"]
    covered += e["ratio_lo"] <= 1.0 <= e["ratio_hi"]
check("A/A under drift: the round-paired interval covers 1 in >= 93% of runs", covered / 400 >= 0.93,
      f"{covered / 400:.3f}")

# host speed moves step times +-20% between processes (slope 1 on logs); expandable is 1%
# slower: the unadjusted interval cannot resolve 3%, the adjusted one must, around 1.01
rows = samples(rounds=8, noise=0.0)
rng = random.Random(3)
for r in rows:
    probe = rng.uniform(7.0, 11.0)
    r["probe_launch_us_steps"] = probe
    f = (probe / 9.0) * (1.01 if r["allocator"] == "vramlab-expandable" else 1.0) / (
        1.0 if r["allocator"] != "vramlab-expandable" else 1.005) * rng.lognormvariate(0, 0.002)
    r["step_ms_median"], r["step_ms_mean"] = 10.0 * f, 10.2 * f
v = verdict_of(rows)
check("unadjusted: host speed hides 1%", v["speed"] == INCONCLUSIVE, v)
check("adjusted: the ratio back to 1.01 / 1.005, resolved", abs(v["ratio_adj"] - 1.01 / 1.005) < 0.003
      and v["ratio_adj_lo"] < v["ratio_adj"] < v["ratio_adj_hi"] and v["ratio_adj_hi"] - v["ratio_adj_lo"] < 0.01
      and v["speed_adj"] == PASS and v["adj_sd"] < v["adj_sd_raw"] / 10, v)
check("the verdict ignores the adjusted ratio", v["verdict"] != "PASS", v["verdict"])
check("its calibration: label shuffles rarely exclude 1", v["adj_shuffled_excl"] is not None
      and v["adj_shuffled_excl"] <= 0.15, v["adj_shuffled_excl"])
# a real 20% difference, shuffled away: the shuffles' share is a property of the noise, not the shift
big = [dict(r, step_ms_median=r["step_ms_median"] * (1.2 if r["allocator"] == "vramlab-expandable" else 1))
       for r in rows]
vb = verdict_of(big)
check("a 20% shift: the adjusted interval excludes 1, the shuffles still mostly do not",
      vb["ratio_adj_lo"] > 1.1 and vb["adj_shuffled_excl"] <= 0.15, vb)
check("the report shows it apart", "adjusted for the host probe (diagnostic" in bs.table(
    bs.summarize(bs.mark_equality(rows)), [v]))
rows[3]["probe_launch_us_steps"] = ""
v = verdict_of(rows)
check("a process without a probe: no adjusted ratio", v["ratio_adj"] is None and v["speed_adj"] == "", v)

v = bs.verdict(bs.summarize(bs.mark_equality([r for r in samples() if r["allocator"] != "torch"])))
check("no torch column: no ratio, INCONCLUSIVE", v[0]["ratio"] is None and v[0]["verdict"] == "INCONCLUSIVE", v)
v = bs.verdict(bs.summarize(bs.mark_equality([r for r in samples() if r["allocator"] != "torch-expandable"])))
check("no torch-expandable column: still judged", v[0]["verdict"] == "PASS"
      and v[0]["torch_expandable_waste"] is None, v)

# a reference that does not reproduce itself: a difference within its own spread is "PASS~"
noisy = samples()
for r in noisy:
    if r["allocator"] == "torch" and r["round"] == 2:
        r["results"] = "1.5 2.25 3.003"
    if r["allocator"] == "vramlab-expandable" and r["round"] == 3:
        r["results"] = "1.5 2.25 3.001"
v = bs.verdict(bs.summarize(bs.mark_equality(noisy)))
check("within the reference's own spread", v[0]["equal"] == bs.EQUAL_WITHIN_REFERENCE == "PASS~" and v[0]["verdict"] == "PASS", v)

# --define: one more plugin allocator
check("define adds", bench.define("hole=caching:segments=expandable,split=hole") == ""
      and bench.ALLOCATORS["hole"] == ({"VRAMLAB_ALLOC": "caching:segments=expandable,split=hole"}, True))
check("define again, same spec", bench.define("hole=caching:segments=expandable,split=hole") == "")
for bad in ("hole", "=caching", "hole=", "a,b=caching", "torch=caching", "h o=caching"):
    check(f"define {bad!r} refused", bench.define(bad) != "", bad)

# --- pairs: both allocators in one process ---
check("pair resolves", bench.resolve("vramlab+vramlab-expandable") == ""
      and bench.ALLOCATORS["vramlab+vramlab-expandable"][0] == {"VRAMLAB_ALLOC": "caching",
                                                                "VRAMLAB_ALLOC_B": "caching:segments=expandable"})
check("pair spec", bench.spec_of("vramlab+vramlab-expandable") == "caching + caching:segments=expandable")
for bad in ("torch+vramlab", "vramlab+rmm-async", "vramlab+vramlab", "vramlab+nothing", "nothing"):
    check(f"pair {bad!r} refused", bench.resolve(bad) != "", bad)


class BallastPlugin:
    """vl_torch_stat's stand-in: A's allocated bytes, or a negative 'unknown'."""
    def __init__(self, held):
        self.held, self.asked = held, []

    def vl_torch_stat(self, device, name):
        self.asked.append((device, name))
        return self.held


class BallastTorch:
    uint8 = "uint8"

    def __init__(self, free=1 << 40):
        self.made = []
        outer = self

        class _Cuda:
            @staticmethod
            def mem_get_info():
                return outer.free, 1 << 41
        self.free, self.cuda = free, _Cuda()

    def empty(self, n, dtype=None, device=None):
        self.made.append((n, dtype, device))
        return ("tensor", n)


# B's ballast: as many bytes as A holds when B starts, on the GPU; none when unknown or 0
pl, tc = BallastPlugin(123456), BallastTorch()
check("ballast as large as A's allocated", bench.hold_ballast(pl, tc) == ("tensor", 123456)
      and tc.made == [(123456, "uint8", "cuda")] and pl.asked == [(0, b"allocated_bytes")], (pl.asked, tc.made))
# more than is free: refused with the reason, nothing asked of B (whose NULL PyTorch would
# not check: an illegal memory access, seen on an H200 with the workload "big")
tc = BallastTorch(free=100000)
try:
    bench.hold_ballast(BallastPlugin(123456), tc)
    refused = ""
except SystemExit as e:
    refused = str(e)
check("a ballast beyond free memory is refused with the reason", "cannot run as a pair" in refused
      and tc.made == [], (refused, tc.made))
for held in (-1, 0):
    tc = BallastTorch()
    check(f"no ballast when A's allocated is {held}", bench.hold_ballast(BallastPlugin(held), tc) is None
          and tc.made == [], tc.made)


def with_pairs(rows, ratios, workload="wA"):
    """rows plus one vramlab+vramlab-expandable row per round with the given in-process ratios."""
    out = list(rows)
    for i, q in enumerate(ratios):
        out.append(dict(run_id="t", round=i + 1, order=1000 + i, workload=workload, allocator=bs.PAIR,
                        spec="caching + caching:segments=expandable", seed=1, status="ok", step_ms_median=10.0,
                        step_ms_median_b=10.0 * q, paired_ratio=q, results="1.5 2.25 3.0"))
    return out


# between processes too noisy to tell (+-8%), inside processes within 1%
rng = random.Random(3)
noisy_rows = samples(rounds=6)
for r in noisy_rows:
    if r["allocator"] in ("torch", "vramlab-expandable"):
        r["step_ms_median"] *= 1 + rng.uniform(-0.08, 0.08)
summary = bs.summarize(bs.mark_equality(with_pairs(noisy_rows, [1.004, 0.998, 1.006, 1.001, 1.009, 0.997])))
by = by_alloc(summary)
p_ = by[bs.PAIR]
# 6 processes: the signed-rank interval is min..max (coverage 1 - 2/64); the estimate is the
# median (11th) of the 21 pairwise geometric means, sqrt(1.004 x 1.001) = 1.0024989
check("pair summary: signed-rank over the in-process ratios", abs(p_["ratio"] - 1.0024988778) < 1e-9
      and abs(p_["ratio_lo"] - 0.997) < 1e-12 and abs(p_["ratio_hi"] - 1.009) < 1e-12
      and abs(p_["ratio_ci"] - 0.96875) < 1e-12 and "in-process" in p_["ratio_basis"]
      and p_["waste"] is None and p_["step_ms_b"] is not None, p_)
check("pair without totals (older runs): no ratio of means", p_["ratio_mean"] is None, p_)
# totals carry rare slow steps that the per-step median does not: the pair's ratio_mean
tot_rows = with_pairs(samples(rounds=6), [1.0] * 6)
for r, t in zip([r for r in tot_rows if r["allocator"] == bs.PAIR], [1.10, 1.12, 1.09, 1.11, 1.13, 1.10]):
    r["paired_total_ratio"] = t
p_ = by_alloc(bs.summarize(bs.mark_equality(tot_rows)))[bs.PAIR]
check("pair summary: ratio_mean from the timed totals, signed-rank", p_["ratio"] == 1.0
      and abs(p_["ratio_mean_lo"] - 1.09) < 1e-12 and abs(p_["ratio_mean_hi"] - 1.13) < 1e-12
      and 1.10 < p_["ratio_mean"] < 1.12, p_)
v = bs.verdict(summary)
check("the verdict never uses the pairs: a tight pair leaves a wide interval inconclusive",
      v[0]["speed"] == INCONCLUSIVE and v[0]["ratio_hi"] == by["vramlab-expandable"]["ratio_hi"]
      and v[0]["ratio_hi"] > bs.SPEED_LIMIT, v)
v = bs.verdict(bs.summarize(bs.mark_equality(with_pairs(samples(rounds=6), [1.04, 1.05, 1.045, 1.06, 1.035, 1.05]))))
check("the verdict never uses the pairs: slow pairs do not fail a fast allocator", v[0]["verdict"] == "PASS", v)

# a failed process is counted, not summarized
failed = samples()
failed[2].update(status="failed", error="exit 1: boom", step_ms_median="")
s = {x["allocator"]: x for x in bs.summarize(bs.mark_equality(failed))}
check("failed counted", s["vramlab"]["failed"] == 1 and s["vramlab"]["n"] == 4, s["vramlab"])

# --- the zoo: two halves, every workload once, the schedule interleaved ---
names = [w.name for w in zoo.ZOO]
check("at least 12 zoo workloads", len(names) >= 12 and len(set(names)) == len(names), names)
check("the split covers every zoo workload exactly once",
      sorted(zoo.ZOO_TUNE + zoo.ZOO_CONFIRM) == sorted(names) and not set(zoo.ZOO_TUNE) & set(zoo.ZOO_CONFIRM),
      (zoo.ZOO_TUNE, zoo.ZOO_CONFIRM))
check("the defaults' four workloads are in the tuning half",
      {"transformer", "resnet50", "gpt2", "moe"} <= set(zoo.ZOO_TUNE), zoo.ZOO_TUNE)
check("each half mixes categories", all(len({zoo.BY_NAME[w].category for w in h}) >= 5
                                        for h in (zoo.ZOO_TUNE, zoo.ZOO_CONFIRM)))
check("halves by name", zoo.half_of("vit") == "confirm" and zoo.half_of("moe") == "tune" and zoo.half_of("x") == "")
check("quick workloads are zoo workloads", set(zoo.QUICK) <= set(names), zoo.QUICK)


def run_keys():
    """The keys of workloads.py's RUN, read without importing it (it imports torch)."""
    import ast
    tree = ast.parse(open(os.path.join(TORCH, "workloads.py")).read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "RUN" for t in node.targets):
            return [k.value for k in node.value.keys]
    return []


check("workloads.py runs every zoo workload and the extras, nothing else",
      sorted(run_keys()) == sorted(names + [w.name for w in zoo.EXTRAS]), run_keys())
check("the extras are in neither half nor in the whole zoo",
      not {w.name for w in zoo.EXTRAS} & set(zoo.HALVES["all"] + zoo.ZOO_TUNE + zoo.ZOO_CONFIRM)
      and all(zoo.half_of(w.name) == zoo.EXTRA for w in zoo.EXTRAS), zoo.EXTRAS)
jobs = bench.schedule(["w1", "w2"], ["a", "b", "c", "d"], 4)
positions = {a: sorted(j[1] % 4 for j in jobs if j[2] == "w1" and j[3] == a) for a in "abcd"}
check("interleaved: over 4 rounds every allocator runs in every position once",
      all(p == [0, 1, 2, 3] for p in positions.values()), positions)
check("interleaved: a workload's allocators run back to back in each round",
      all({j[3] for j in jobs[i:i + 4]} == set("abcd") for i in range(0, len(jobs), 4)), jobs)

# --- files: write, then --summarize a copy of the folder gives the same summary ---
tmp = tempfile.mkdtemp()
try:
    both = samples("transformer") + samples("resnet50", waste=1.06, seed=8) \
        + with_pairs(samples("gpt2", seed=9), [1.01, 0.99, 1.0, 1.02, 1.0], "gpt2") \
        + samples("moe", slow=1.05, seed=10)  # gpt2's pair row: no waste, in the figure too
    text = bs.write_summary(tmp, both, None, ["device: synthetic", "git: test"])
    for name in ("samples.csv", "summary.csv", "verdict.csv", "report.txt"):
        check(f"{name} written", os.path.getsize(os.path.join(tmp, name)) > 0)
    with open(os.path.join(tmp, "summary.csv")) as f:
        head = [next(f) for _ in range(3)]
    check("conditions as comments", head[0] == "# device: synthetic\n" and head[2].startswith("half,workload,allocator"),
          head)
    got = read_dicts(os.path.join(tmp, "samples.csv"))
    check("samples read back", len(got) == len(both) and got[0]["exact_equal"] == "yes", got[0])
    verdicts = {r["workload"]: r["verdict"] for r in read_dicts(os.path.join(tmp, "verdict.csv"))}
    check("verdict.csv", verdicts == dict(transformer="PASS", resnet50="FAIL", gpt2="PASS", moe="FAIL"), verdicts)
    check("report has the verdict table and the overall line", "verdict of vramlab-expandable" in text
          and text.splitlines()[-1] == "overall: FAIL: 2 of 4 pass; fail: resnet50, moe", text)
    md = open(os.path.join(tmp, "zoo.md")).read()
    md_rows = [ln for ln in md.splitlines() if ln.startswith("| tune | ")]
    check("zoo.md: a row per workload and allocator, the half as a column, then the verdict",
          len(md_rows) == len(both) // 5 + 4 and "| tune | moe | 5 |" in md and "**FAIL**" in md
          and "overall: FAIL: 2 of 4 pass" in md and "- device: synthetic" in md, md)
    check("zoo.md: a pair's ratio is marked B/A", "| tune | gpt2 | vramlab+vramlab-expandable | 5 | 10 | B/A " in md,
          [ln for ln in md_rows if "+" in ln])
    rmm_row = next(ln for ln in md_rows if "| rmm-pool |" in ln)
    check("zoo.md: unknown counters are empty cells", [c.strip() for c in rmm_row.split("|")[11:14]] == ["", "", ""], rmm_row)

    copy = os.path.join(tmp, "copied")
    os.makedirs(copy)
    shutil.copy(os.path.join(tmp, "samples.csv"), copy)
    p = subprocess.run(BENCH + ["--summarize", copy],
                       capture_output=True, text=True)
    check("--summarize exit 0", p.returncode == 0, p.stderr + p.stdout)
    with open(os.path.join(tmp, "summary.csv")) as a, open(os.path.join(copy, "summary.csv")) as b:
        check("--summarize reproduces summary.csv", a.read() == b.read())
    check("--summarize keeps the conditions", "# device: synthetic" in open(os.path.join(copy, "summary.csv")).read())
    for name in ("torch_bench.summary.csv", "torch_zoo.summary.csv"):
        check(f"plot input {name} written", os.path.getsize(os.path.join(copy, name)) > 0)
    zoo_rows = read_dicts(os.path.join(copy, "torch_zoo.summary.csv"))
    check("the zoo figure's input has no field with a comma (its awk splits on commas)",
          zoo_rows and all("," not in v for r in zoo_rows for v in r.values())
          and list(zoo_rows[0]) == list(bs.PLOT_FIELDS), zoo_rows[:1])
    if shutil.which("gnuplot"):
        for prog, name in (("torch_bench", "torch_bench.summary.csv"), ("torch_zoo", "torch_zoo.summary.csv")):
            png = os.path.join(copy, "plots", f"{prog}.png")
            check(f"{prog} figure rendered by --summarize", os.path.exists(png) and os.path.getsize(png) > 10_000,
                  p.stdout + p.stderr)
            # plots.sh keeps gnuplot's messages only when it fails: render again here, where a
            # warning (an empty curve, a bad column) is seen too
            out_png = os.path.join(tmp, f"{prog}.direct.png")
            g = subprocess.run(["gnuplot", "-c", os.path.join("plots", f"{prog}.gp"),
                                out_png, os.path.join(copy, name), "x"], cwd=ROOT, capture_output=True, text=True)
            check(f"{prog}: gnuplot renders without a message", g.returncode == 0 and g.stderr == ""
                  and os.path.getsize(out_png) > 10_000, g.stderr)
            # and the check can fail: an input without a workload row is an error, not an empty figure
            header_only = os.path.join(tmp, f"{prog}.empty.csv")
            with open(os.path.join(copy, name)) as src, open(header_only, "w") as dst:
                dst.write("".join(ln for ln in src if ln.startswith("#") or ln.startswith("half,")))
            g = subprocess.run(["gnuplot", "-c", os.path.join("plots", f"{prog}.gp"),
                                out_png, header_only, "x"], cwd=ROOT, capture_output=True, text=True)
            check(f"{prog}: no workload rows is an error", g.returncode != 0 and "no workload rows" in g.stderr,
                  (g.returncode, g.stderr))
        # a summary from before the zoo (no half column; ratios against vramlab classic) is refused
        old_layout = os.path.join(tmp, "old.summary.csv")
        with open(os.path.join(copy, "torch_bench.summary.csv"), newline="") as src, \
                open(old_layout, "w", newline="") as dst:
            w_ = csv.writer(dst, lineterminator="\n")
            for row in csv.reader(ln for ln in src if not ln.startswith("#")):
                w_.writerow(row[1:])
        g = subprocess.run(["gnuplot", "-c", os.path.join("plots", "torch_bench.gp"),
                            out_png, old_layout, "x"], cwd=ROOT, capture_output=True, text=True)
        check("torch_bench: a summary from before the zoo is refused", g.returncode != 0
              and "before the zoo" in g.stderr, (g.returncode, g.stderr))
    else:
        skip("figures", "gnuplot not installed")

    # --dry-run needs neither torch nor a GPU; without the RMM shim the rmm-* columns are skipped
    p = subprocess.run(BENCH + ["--dry-run", "--rounds", "1",
                        "--workloads", "moe", "--plugin", os.path.join(tmp, "libvramlab_caching.so"),
                        "--allocators", "torch,torch-expandable,vramlab,rmm-pool,vramlab-expandable,rmm-async"],
                       capture_output=True, text=True)
    lines = p.stdout.splitlines()
    check("dry run", p.returncode == 0 and [ln.split()[5] for ln in lines if ln.startswith("round")]
          == ["torch", "torch-expandable", "vramlab", "vramlab-expandable"], p.stdout + p.stderr)
    check("rmm skipped with a reason", lines and lines[0].startswith("skipped rmm-pool,rmm-async: no RMM shim"),
          lines[:1])
    def dry_workloads(*more):
        q = subprocess.run(BENCH + ["--dry-run", "--rounds", "1",
                            "--allocators", "torch", *more], capture_output=True, text=True)
        return [m.group(1) for m in (re.match(r"round \d+ #\s*\d+ (\S+)", ln) for ln in q.stdout.splitlines()) if m]

    check("--zoo tune", dry_workloads("--zoo", "tune") == list(zoo.ZOO_TUNE), dry_workloads("--zoo", "tune"))
    check("--zoo confirm", dry_workloads("--zoo", "confirm") == list(zoo.ZOO_CONFIRM))
    check("the whole zoo by default", dry_workloads() == [w.name for w in zoo.ZOO], dry_workloads())
    check("--quick: a few", dry_workloads("--quick") == list(zoo.QUICK), dry_workloads("--quick"))
    check("--quick --zoo all: the whole zoo", dry_workloads("--quick", "--zoo", "all") == [w.name for w in zoo.ZOO])
    check("--workloads over --zoo", dry_workloads("--zoo", "tune", "--workloads", "vit,big") == ["vit", "big"])
    p = subprocess.run(BENCH + ["--dry-run", "--zoo", "half"],
                       capture_output=True, text=True)
    check("--zoo of another name: exit 2", p.returncode == 2, p.returncode)
    p = subprocess.run(BENCH + ["--dry-run", "--allocators", "nope"],
                       capture_output=True, text=True)
    check("unknown allocator: exit 2", p.returncode == 2, p.returncode)

    # make torch-bench skips visibly (last line "SKIP torch-bench: ...", status 0) without
    # torch or without a GPU: stand-in torch modules force both cases anywhere
    for case, body, why in (("no-torch", "raise ImportError('stand-in')\n", "no torch for python3"),
                            ("no-gpu", "class cuda:\n    @staticmethod\n    def is_available():\n"
                                       "        return False\n", "no CUDA device")):
        fake = os.path.join(tmp, case, "torch")
        os.makedirs(fake)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write(body)
        env = dict(os.environ, PYTHONPATH=os.path.dirname(fake))
        env.pop("MAKEFLAGS", None)
        p = subprocess.run(["make", "-C", ROOT, "--no-print-directory", "torch-bench", "TORCH_BENCH_DEPS="],
                           capture_output=True, text=True, env=env)
        last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
        check(f"make torch-bench skips ({case})", p.returncode == 0 and last == f"SKIP torch-bench: {why}",
              f"rc={p.returncode} {p.stdout}{p.stderr}")

    # make torch-bench passes ZOO= on as --zoo
    p = subprocess.run(["make", "-C", ROOT, "--no-print-directory", "-n", "torch-bench", "TORCH_BENCH_DEPS=",
                        "ZOO=confirm"], capture_output=True, text=True,
                       env={k: v for k, v in os.environ.items() if k != "MAKEFLAGS"})
    check("make torch-bench ZOO=confirm", p.returncode == 0 and "--zoo 'confirm'" in p.stdout, p.stdout + p.stderr)

    # make torch-bench passes RESUME=1 (and not RESUME=0) on as --resume
    for val, want in (("1", True), ("0", False)):
        p = subprocess.run(["make", "-C", ROOT, "--no-print-directory", "-n", "torch-bench", "TORCH_BENCH_DEPS=",
                            "RUN=x", f"RESUME={val}"], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "MAKEFLAGS"})
        check(f"make torch-bench RESUME={val}", p.returncode == 0 and ("--resume" in p.stdout) == want
              and "--run-id 'x'" in p.stdout, p.stdout + p.stderr)

    # The whole driver on stand-ins for torch and the workloads (no GPU): processes per
    # round, JSON back, samples with equality, summary, conditions, figure. The plugin's
    # vl_torch_stat is the real one (built by make plugin), unopened: counters unknown.
    fake = os.path.join(tmp, "standin")
    os.makedirs(os.path.join(fake, "torch"))
    with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
        f.write(STANDIN_TORCH)
    with open(os.path.join(fake, "standin_workloads.py"), "w") as f:
        f.write(STANDIN_WORKLOADS)
    plugin = os.path.join(ROOT, "build", "lib", "libvramlab_caching.so")
    if os.path.exists(plugin):
        env = dict(os.environ, PYTHONPATH=fake, VL_BENCH_WORKLOADS="standin_workloads")
        p = subprocess.run(BENCH + ["--out", tmp, "--run-id", "e2e",
                            "--rounds", "2", "--workloads", "transformer,moe", "--plugin", plugin,
                            "--define", "hole=caching:segments=expandable,split=hole",
                            "--allocators", "torch,torch-expandable,vramlab,vramlab-expandable,hole,vramlab+hole"],
                           capture_output=True, text=True, env=env)
        run = os.path.join(tmp, "e2e")
        check("stand-in run exit 0", p.returncode == 0, p.stdout + p.stderr)
        got = read_dicts(os.path.join(run, "samples.csv")) if os.path.exists(os.path.join(run, "samples.csv")) else []
        check("24 samples", len(got) == 24, len(got))
        check("every process has its host probes", all(number(r.get(k)) is not None for r in got if r["status"] == "ok"
              for k in ("probe_launch_us_before", "probe_launch_us_after", "probe_python_us",
                                "probe_launch_us_steps")), got[:1])
        if got:
            by = {(r["round"], r["workload"], r["allocator"]): r for r in got}
            r = by[("1", "moe", "torch")]
            check("torch sample", r["status"] == "ok" and 15 < float(r["step_ms_median"]) < 100
                  and r["steps"] == "8" and r["steps_timed"] == "4" and r["spec"] == "default"
                  and r["peak_reserved_bytes"] == "3000" and r["peak_allocated_bytes"] == "2000"
                  and r["peak_requested_bytes"] == "" and r["stats_from"] == "torch.cuda.memory_stats"
                  and int(r["device_used_max_bytes"]) > int(r["device_used_base_bytes"])
                  and r["exact_equal"] == "yes", r)
            # read before the first step and after each: 3 maps and 1 unmap per step, 9 readings
            check("torch sample: the steps' time within the process's", 0.15 < float(r["steps_s"])
                  < float(r["process_s"]), r)
            check("torch sample: device calls per step from memory_stats' counters", r["maps_per_step"] == "3"
                  and r["unmaps_per_step"] == "1" and r["maps_total"] == "27" and r["unmaps_total"] == "9", r)
            r = by[("1", "transformer", "torch-expandable")]
            check("torch-expandable sample", r["spec"] == "expandable_segments:True" and r["steps_timed"] == "3", r)
            r = by[("2", "moe", "vramlab-expandable")]
            check("plugin sample", r["spec"] == "caching:segments=expandable" and r["peak_reserved_bytes"] == ""
                  and r["stats_from"] == "vramlab via vl_torch_stat" and r["exact_equal"] == "no"
                  and r["max_rel_diff"] == "0.5", r)
            check("no allocator time from an unopened plugin", r["alloc_ms_median"] == "", r)
            check("no device calls from an unopened plugin: empty, not 0", r["maps_per_step"] == ""
                  and r["unmaps_per_step"] == "" and r["maps_total"] == "" and r["unmaps_total"] == "", r)
            r = by[("1", "moe", "hole")]
            check("--define'd allocator sample", r["status"] == "ok"
                  and r["spec"] == "caching:segments=expandable,split=hole", r)
            r = by[("1", "moe", "vramlab+hole")]
            check("pair sample", r["status"] == "ok" and r["spec"] == "caching + caching:segments=expandable,split=hole"
                  and float(r["paired_ratio"]) > 0 and float(r["step_ms_median_b"]) > 0
                  and r["peak_reserved_bytes"] == "" and "paired" in r["stats_from"]
                  and r["steps"] == "16" and r["results"] == "" and r["exact_equal"] == ""
                  and r["maps_per_step"] == "", r)
            # B 1.5 x slower on every step, steps of two sizes: the same step's two runs compared
            check("pair ratio", 1.3 < float(r["paired_ratio"]) < 1.7, r)
            # the per-step times stay in the process's log folder, with who served each step
            import json
            with open(os.path.join(run, "logs", "r1.moe.vramlab+hole.json")) as fh:
                js = json.load(fh)
            steps_all, served = js.get("step_ms_all") or [], js.get("served_by") or []
            check("per-step times kept", len(steps_all) == 16 and len(served) == 16
                  and served[:4] == list(bench.PAIR_ORDER) and all(x > 0 for x in steps_all), js)
            if len(steps_all) == 16:  # 8 steps run twice; the timed ones are the last steps_timed
                first = 8 - int(js["steps_timed"])
                a_ms = [x for u, (x, k) in enumerate(zip(steps_all, served)) if k == 0 and u // 2 >= first]
                check("per-step times give the row's figures back",
                      abs(rankstats.quantile_median(a_ms) - js["step_ms_median"]) < 1e-9, (a_ms, js))
            check("rotated order", [by[("2", "moe", a)]["order"] for a in ("torch-expandable", "torch")]
                  == ["18", "23"], [(k, v["order"]) for k, v in by.items() if k[0] == "2"])
        zoo_md = open(os.path.join(run, "zoo.md")).read() if os.path.exists(os.path.join(run, "zoo.md")) else ""
        # the stand-in's expandable results differ from torch's: FAIL, whatever the speed (2 rounds: no interval)
        check("stand-in run: zoo.md with its verdict", "| tune | moe | vramlab-expandable |" in zoo_md
              and re.search(r"\| tune \| moe \| 2 \| 2 \| [0-9.]+ \|  \| [0-9.]+ \|  \| INCONCLUSIVE \|", zoo_md)
              and "overall: FAIL: 0 of 2 pass; fail: transformer, moe" in zoo_md, zoo_md[-1500:])
        cond = open(os.path.join(run, "conditions.txt")).read() if os.path.exists(run) else ""
        # the whole zoo at size tiny, one round, the verdict's two columns: every process runs
        p = subprocess.run(BENCH + ["--out", tmp, "--run-id", "quick",
                            "--quick", "--zoo", "all", "--allocators", "torch,vramlab-expandable", "--rounds", "1",
                            "--plugin", plugin], capture_output=True, text=True, env=env)
        got = read_dicts(os.path.join(tmp, "quick", "samples.csv")) if p.returncode in (0, 1) else []
        check("--quick --zoo all: a sample per workload and allocator, all ok", p.returncode == 0
              and sorted((r["workload"], r["allocator"]) for r in got if r["status"] == "ok")
              == sorted((w.name, a) for w in zoo.ZOO for a in ("torch", "vramlab-expandable"))
              and all(r["steps_timed"] == str(8 - bench.TINY_WARMUP) for r in got), p.stdout[-2000:] + p.stderr)
        verdict_rows = read_dicts(os.path.join(tmp, "quick", "verdict.csv")) if got else []
        check("--quick --zoo all: a verdict per workload, with its half", [(r["half"], r["workload"]) for r in verdict_rows]
              == [(w.half, w.name) for w in zoo.ZOO], verdict_rows)
        check("conditions", "device: Stand-in GPU" in cond and "torch: 0.0-standin" in cond and "git: " in cond, cond)
    else:
        skip("the stand-in runs through the plugin", "no build/lib/libvramlab_caching.so (make plugin)")

    # --- split runs: the incremental samples.csv, a stop signal, --resume (stand-ins, no plugin) ---
    standin_env = dict(os.environ, PYTHONPATH=fake, VL_BENCH_WORKLOADS="standin_workloads")
    for k in ("VL_STANDIN_FAIL", "VL_STANDIN_SLEEP", "VL_STANDIN_STARTED"):
        standin_env.pop(k, None)
    started = os.path.join(tmp, "started.txt")

    def bench_cmd(run_id, *more):
        return BENCH + ["--out", tmp, "--run-id", run_id,
                "--plugin", os.path.join(tmp, "no-plugin.so"), *more]

    def starts():
        return open(started).read().splitlines() if os.path.exists(started) else []

    def keys(path):
        return [(r["round"], r["workload"], r["allocator"], r["status"]) for r in read_dicts(path)]

    # load_samples / latest: a torn last line is dropped; a later attempt replaces the earlier in place
    torn = os.path.join(tmp, "torn.csv")
    with open(torn, "w") as f:
        f.write("# c\nround,workload,allocator,status,error\n1,moe,torch,failed,x\n1,moe,vramlab,ok,\n"
                "1,moe,torch,ok,\n2,moe,torch,o")
    rows, comments = bench.load_samples(torn)
    check("torn last line dropped", len(rows) == 3 and comments == ["c"], rows)
    check("latest attempt in place", [(r["allocator"], r["status"]) for r in bench.latest(rows)]
          == [("torch", "ok"), ("vramlab", "ok")], bench.latest(rows))
    check("no samples.csv", bench.load_samples(os.path.join(tmp, "none.csv")) == ([], []))

    # 1. a run with failed processes, then --resume: only the failed ones run again
    two = ["--rounds", "2", "--workloads", "moe", "--allocators", "torch,torch-expandable"]
    p = subprocess.run(bench_cmd("res", *two), capture_output=True, text=True,
                       env=dict(standin_env, VL_STANDIN_FAIL="expandable_segments:True", VL_STANDIN_STARTED=started))
    res = os.path.join(tmp, "res")
    check("failed processes: exit 1", p.returncode == 1, p.stdout + p.stderr)
    check("failed processes: no COMPLETE", not os.path.exists(os.path.join(res, "COMPLETE")), os.listdir(res))
    check("4 samples, 2 failed", sorted(keys(os.path.join(res, "samples.csv"))) == sorted(
        [("1", "moe", "torch", "ok"), ("2", "moe", "torch", "ok"), ("1", "moe", "torch-expandable", "failed"),
         ("2", "moe", "torch-expandable", "failed")]), keys(os.path.join(res, "samples.csv")))
    p = subprocess.run(bench_cmd("res", *two), capture_output=True, text=True, env=standin_env)
    check("an existing run without --resume: exit 2", p.returncode == 2 and "--resume" in p.stderr, p.stderr)
    p = subprocess.run(bench_cmd("res", "--dry-run", "--resume", *two), capture_output=True, text=True,
                       env=standin_env)
    check("dry run marks the done processes", p.stdout.count("(done)") == 2
          and all(("(done)" in ln) == (" torch " in ln + " ") for ln in p.stdout.splitlines()), p.stdout)
    n0 = len(starts())
    p = subprocess.run(bench_cmd("res", "--resume", *two), capture_output=True, text=True,
                       env=dict(standin_env, VL_STANDIN_STARTED=started, VL_GIT_REV="resumedrev"))
    check("resume: exit 0", p.returncode == 0, p.stdout + p.stderr)
    again = [ln.split()[1] for ln in starts()[n0:]]
    check("resume runs only the failed ones", again == ["expandable_segments:True"] * 2, starts()[n0:])
    got = read_dicts(os.path.join(res, "samples.csv"))
    check("resumed samples: one ok row per job, in schedule order",
          [(r["round"], r["allocator"], r["status"]) for r in got]
          == [("1", "torch", "ok"), ("1", "torch-expandable", "ok"), ("2", "torch-expandable", "ok"),
              ("2", "torch", "ok")], [(r["round"], r["allocator"], r["status"], r["order"]) for r in got])
    check("merged rows have equality", all(r["exact_equal"] == "yes" for r in got), got)
    summ = {r["allocator"]: r for r in read_dicts(os.path.join(res, "summary.csv"))}
    check("summary of the merged rows", summ.get("torch", {}).get("n") == "2"
          and summ.get("torch-expandable", {}).get("n") == "2"
          and summ["torch-expandable"]["failed"] == "0", summ)
    cond = open(os.path.join(res, "conditions.txt")).read()
    check("a line per part, with its git revision", "part 1: date " in cond
          and "part 2: date " in cond and "git resumedrev" in cond and "2 failed ones again" in cond
          and "warning: part 2 ran with git resumedrev" in cond, cond)
    check("complete", "bench: complete: all 4 processes" in p.stdout, p.stdout)
    check("complete: COMPLETE written", open(os.path.join(res, "COMPLETE")).read().endswith("processes=4\n"),
          os.listdir(res))
    logs = os.listdir(os.path.join(res, "logs"))
    check("the failed attempts' logs kept", len([x for x in logs if x.startswith("r1.moe.torch-expandable.")
                                                  and x.endswith(".log")]) == 2, logs)
    copy = os.path.join(tmp, "res-copy")
    os.makedirs(copy)
    shutil.copy(os.path.join(res, "samples.csv"), copy)
    p = subprocess.run(BENCH + ["--summarize", copy],
                       capture_output=True, text=True)
    with open(os.path.join(res, "summary.csv")) as a, open(os.path.join(copy, "summary.csv")) as b:
        check("--summarize of a resumed run reproduces summary.csv", p.returncode == 0 and a.read() == b.read(),
              p.stdout + p.stderr)

    # 2. SIGTERM to the process group (as timeout(1) sends) in the middle of the third process:
    # the two finished ones are in samples.csv, the cut one is not; exit 124; --resume finishes it
    four = ["--rounds", "2", "--workloads", "transformer,moe", "--allocators", "torch,torch-expandable"]
    os.remove(started)
    d = subprocess.Popen(bench_cmd("cut", *four), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=dict(standin_env, VL_STANDIN_SLEEP="0.4", VL_STANDIN_STARTED=started),
                         start_new_session=True)
    t_end = time.monotonic() + 60
    while len(starts()) < 3 and time.monotonic() < t_end and d.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    os.killpg(d.pid, signal.SIGTERM)
    out, _ = d.communicate(timeout=60)
    cut = os.path.join(tmp, "cut")
    check("stopped: exit 124", d.returncode == 124, out)
    got = keys(os.path.join(cut, "samples.csv"))
    check("the finished processes are in samples.csv, the cut one is not",
          got == [("1", "transformer", "torch", "ok"), ("1", "transformer", "torch-expandable", "ok")], (got, out))
    cut_pid = int(starts()[2].split()[0])
    check("the cut process is gone", not alive(cut_pid), cut_pid)
    cond = open(os.path.join(cut, "conditions.txt")).read()
    check("conditions say stopped", "stopped by SIGTERM" in cond and "skipped (the rest): stopped by SIGTERM: "
          "6 of 8" in cond, cond)
    check("summary of the part written", os.path.exists(os.path.join(cut, "summary.csv")), os.listdir(cut))
    check("stopped: no COMPLETE", not os.path.exists(os.path.join(cut, "COMPLETE")), os.listdir(cut))

    # a row appended as each process ends: after the first row, before the run's end
    os.remove(started)
    d = subprocess.Popen(bench_cmd("inc", *two), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=dict(standin_env, VL_STANDIN_SLEEP="0.3", VL_STANDIN_STARTED=started),
                         start_new_session=True)
    while len(starts()) < 2 and time.monotonic() < t_end + 60 and d.poll() is None:
        time.sleep(0.05)
    got = keys(os.path.join(tmp, "inc", "samples.csv"))
    check("incremental samples.csv", got == [("1", "moe", "torch", "ok")], got)
    os.kill(d.pid, signal.SIGINT)  # the driver alone (Ctrl-C as the only signal): it ends the worker
    out, _ = d.communicate(timeout=60)
    check("SIGINT: exit 124, one row", d.returncode == 124 and len(keys(os.path.join(tmp, "inc", "samples.csv")))
          == 1, out)
    cut_pid = int(starts()[1].split()[0])
    time.sleep(0.2)
    check("the driver terminated its worker", not alive(cut_pid), cut_pid)

    os.remove(started)
    p = subprocess.run(bench_cmd("cut", "--resume", *four), capture_output=True, text=True,
                       env=dict(standin_env, VL_STANDIN_STARTED=started))
    check("resume after a stop: exit 0", p.returncode == 0, p.stdout + p.stderr)
    check("the remaining 6 processes ran", len(starts()) == 6, starts())
    got = keys(os.path.join(cut, "samples.csv"))
    check("all 8 samples ok, once each", len(got) == 8 and len(set(got)) == 8
          and all(k[3] == "ok" for k in got), got)
    check("resumed to the end: COMPLETE", os.path.exists(os.path.join(cut, "COMPLETE")), os.listdir(cut))
    cond = open(os.path.join(cut, "conditions.txt")).read()
    check("resumed conditions", "part 2: date " in cond and "6 processes run" in cond
          and "skipped (the rest)" not in cond, cond)
    summ = read_dicts(os.path.join(cut, "summary.csv"))
    check("summary over both parts", len(summ) == 4 and all(r["n"] == "2" for r in summ), summ)
finally:
    shutil.rmtree(tmp)

checks, failures, skips = counts()
print(f"{'FAILED' if failures else 'passed'}: {checks - failures} of {checks} checks passed, "
      f"{failures} failed, {skips} skipped")
sys.exit(1 if failures else 0)
