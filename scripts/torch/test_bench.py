#!/usr/bin/env python3
"""Checks the live PyTorch benchmark's pure-Python parts on synthetic samples (no torch,
no GPU): the schedule, the median interval, equality marking, the summary and its
ratio interval, the verdict (pass, each way to fail, n/a), the CSV files, `bench.py
--summarize` on a copied results folder, `--dry-run` and its RMM skip, the gnuplot
figure (where gnuplot is installed), and split runs on stand-ins for torch and the
workloads: samples.csv written as processes end, a stop signal mid-process (exit 124,
the cut process absent), `--resume` (done processes skipped, failed ones run again,
one summary of all the parts). Run by `make test-torch-bench` (mk/torch_bench.mk).
Exit 0 passed, 1 failed."""
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (imports no torch at module level)
import bench_stats as bs  # noqa: E402

failures = 0



def alive(pid):
    """Whether process pid still exists (signal 0 tests without sending)."""
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False

def check(what, ok, detail=""):
    global failures
    if not ok:
        failures += 1
        print(f"FAIL {what}: {detail}")


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
    @staticmethod
    def memory_stats():
        return {"allocated_bytes.all.peak": 2000, "reserved_bytes.all.peak": 3000, "requested_bytes.all.peak": 0}
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
RUN = dict(transformer=run, moe=run)
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

# --- results comparison ---
check("equal results", bs.compare_results([1.5, 2.0], [1.5, 2.0]) == (True, 0.0))
ex, rel = bs.compare_results([1.0, 2.0], [1.0, 2.002])
check("different results", not ex and abs(rel - 0.001) < 1e-6, rel)
check("different lengths", bs.compare_results([1.0], [1.0, 2.0]) == (False, math.inf))
check("results round trip", bs.parse_results(bs.format_results([0.1 + 0.2, 3, -7])) == [0.1 + 0.2, 3, -7])


# --- synthetic samples: 5 processes per allocator, two workloads ---
STEP = {"torch": 10.0, "torch-expandable": 10.4, "vramlab": 10.0, "vramlab-expandable": 10.05, "rmm-pool": 12.0}
WASTE = {"torch": 1.30, "torch-expandable": 1.05, "vramlab": 1.25, "vramlab-expandable": 1.01, "rmm-pool": 1.6}


def samples(workload="wA", slow=1.0, waste=None, results="1.5 2.25 3.0", bad_results=None, rounds=5, seed=7):
    rng = random.Random(seed)
    rows, k = [], 0
    for r in range(1, rounds + 1):
        for a in STEP:
            ms = STEP[a] * (slow if a == "vramlab-expandable" else 1.0) * (1 + rng.uniform(-0.005, 0.005))
            alloc = 1_000_000_000
            w = (waste if waste is not None and a == "vramlab-expandable" else WASTE[a])
            row = dict(run_id="t", round=r, order=k, workload=workload, allocator=a, spec=a, seed=1,
                       status="ok", step_ms_median=ms, peak_reserved_bytes=int(alloc * w),
                       peak_allocated_bytes=alloc if a != "rmm-pool" else -1, peak_requested_bytes=alloc,
                       results=bad_results if (bad_results and a == "vramlab-expandable") else results)
            if a.startswith("vramlab"):  # time inside the plugin per step (VRAMLAB_TIME=1)
                row["alloc_ms_median"] = 0.3 if a == "vramlab-expandable" else 0.1
            rows.append(row)
            k += 1
    return rows


rows = samples()
bs.mark_equality(rows)
check("equality marked", all(r["exact_equal"] == "yes" for r in rows), [r["exact_equal"] for r in rows][:5])
summary = bs.summarize(rows)
by = {s["allocator"]: s for s in summary}
check("summary rows", len(summary) == len(STEP), len(summary))
check("ratio of classic ~ 1", abs(by["vramlab"]["ratio"] - 1) < 0.01, by["vramlab"]["ratio"])
check("ratio of rmm-pool ~ 1.2", abs(by["rmm-pool"]["ratio"] - 1.2) < 0.02 and by["rmm-pool"]["ratio_lo"] > 1.15,
      by["rmm-pool"])
check("rmm-pool waste over requested", by["rmm-pool"]["waste_basis"] == "requested"
      and abs(by["rmm-pool"]["waste"] - 1.6) < 1e-9, by["rmm-pool"])
check("expandable waste over allocated", by["vramlab-expandable"]["waste_basis"] == "allocated", by["vramlab-expandable"])
check("5 of 5 equal", by["vramlab-expandable"]["equal"] == "5/5")
check("interval coverage recorded", abs(by["torch"]["step_ms_ci"] - 0.9375) < 1e-12, by["torch"]["step_ms_ci"])
v = bs.verdict(summary)
check("pass", v[0]["verdict"] == "PASS" and v[0]["speed"] == "ok" and v[0]["waste_ok"] == "ok", v)

check("allocator time summarized", by["vramlab-expandable"]["alloc_ms"] == 0.3 and by["torch"]["alloc_ms"] is None,
      by["vramlab-expandable"])
check("allocator time added, over classic's step", abs(v[0]["alloc_ms_more"] - 0.2 / by["vramlab"]["step_ms"]) < 1e-12,
      v[0])
check("allocator time in the report", "+2.00%" in bs.table(summary, v), bs.table(summary, v))

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

    def __init__(self):
        self.made = []

    def empty(self, n, dtype=None, device=None):
        self.made.append((n, dtype, device))
        return ("tensor", n)


# B's ballast: as many bytes as A holds when B starts, on the GPU; none when unknown or 0
pl, tc = BallastPlugin(123456), BallastTorch()
check("ballast as large as A's allocated", bench.hold_ballast(pl, tc) == ("tensor", 123456)
      and tc.made == [(123456, "uint8", "cuda")] and pl.asked == [(0, b"allocated_bytes")], (pl.asked, tc.made))
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


# between processes too noisy to tell (+-8%), inside processes within 1%: the pair decides
rng = random.Random(3)
noisy_rows = samples(rounds=6)
for r in noisy_rows:
    if r["allocator"] in ("vramlab", "vramlab-expandable"):
        r["step_ms_median"] *= 1 + rng.uniform(-0.08, 0.08)
summary = bs.summarize(bs.mark_equality(with_pairs(noisy_rows, [1.004, 0.998, 1.006, 1.001, 1.009, 0.997])))
by = {s_["allocator"]: s_ for s_ in summary}
p_ = by[bs.PAIR]
# 6 processes: the signed-rank interval is min..max (coverage 1 - 2/64); the estimate is the
# median (11th) of the 21 pairwise geometric means, sqrt(1.004 x 1.001) = 1.0024989
check("pair summary: signed-rank over the in-process ratios", abs(p_["ratio"] - 1.0024988778) < 1e-9
      and abs(p_["ratio_lo"] - 0.997) < 1e-12 and abs(p_["ratio_hi"] - 1.009) < 1e-12
      and abs(p_["ratio_ci"] - 0.96875) < 1e-12
      and p_["waste"] is None and p_["step_ms_b"] is not None, p_)
v = bs.verdict(summary)
check("pair gives the speed verdict", abs(v[0]["paired_hi"] - 1.009) < 1e-12 and v[0]["speed"] == "ok"
      and (v[0]["ratio_hi"] or 0) > bs.SPEED_LIMIT, v)
v = bs.verdict(bs.summarize(bs.mark_equality(with_pairs(noisy_rows, [1.04, 1.05, 1.045, 1.06, 1.035]))))
check("5 pairs: below 95% coverage, not used", v[0]["paired_hi"] is None, v)
# no classic column: expandable's ratio (the figure's x) comes from the pair, and says so
no_classic = [r for r in noisy_rows if r["allocator"] != "vramlab"]
summary = bs.summarize(bs.mark_equality(with_pairs(no_classic, [1.004, 0.998, 1.006, 1.001, 1.009, 0.997])))
by = {s_["allocator"]: s_ for s_ in summary}
e_ = by["vramlab-expandable"]
check("no classic column: ratio from the pair", abs(e_["ratio"] - 1.0024988778) < 1e-9
      and abs(e_["ratio_hi"] - 1.009) < 1e-12
      and "from the pair" in e_["ratio_basis"] and by["torch"]["ratio"] is None, e_)
v = bs.verdict(summary)
check("no classic column: the pair judges speed", v[0]["speed"] == "ok" and abs(v[0]["paired_hi"] - 1.009) < 1e-12, v)
v = bs.verdict(bs.summarize(bs.mark_equality(with_pairs(samples(rounds=6), [1.04, 1.05, 1.045, 1.06, 1.035, 1.05]))))
check("pair slower than 3% but wider than the between-process interval: the narrower one judges (ok)",
      v[0]["paired_hi"] == 1.06 and v[0]["speed"] == "ok", v)
# between processes: expandable 5% faster, +-4% noise (a wide interval below 1.03); the
# pairs say 4-5% slower, tightly: the narrower interval judges, not the kinder one
rng = random.Random(5)
wide = samples(slow=0.95, rounds=6)
for r in wide:
    if r["allocator"] in ("vramlab", "vramlab-expandable"):
        r["step_ms_median"] *= 1 + rng.uniform(-0.04, 0.04)
v = bs.verdict(bs.summarize(bs.mark_equality(with_pairs(wide, [1.04, 1.05, 1.045, 1.046, 1.042, 1.05]))))
check("a narrow pair interval above 1.03 fails though the wide one is below it",
      v[0]["ratio_hi"] <= bs.SPEED_LIMIT and v[0]["paired_hi"] == 1.05 and v[0]["speed"] == "FAIL", v)

v = bs.verdict(bs.summarize(bs.mark_equality(samples(slow=1.05))))
check("5% slower fails speed", v[0]["speed"] == "FAIL" and v[0]["verdict"] == "FAIL", v)
v = bs.verdict(bs.summarize(bs.mark_equality(samples(waste=1.03))))
check("waste 1.03 fails", v[0]["waste_ok"] == "FAIL" and v[0]["verdict"] == "FAIL", v)
v = bs.verdict(bs.summarize(bs.mark_equality(samples(waste=1.06))))
check("waste above torch-expandable fails", v[0]["waste_ok"] == "FAIL", v)
v = bs.verdict(bs.summarize(bs.mark_equality(samples(bad_results="1.5 2.25 3.1"))))
check("different results fail", v[0]["equal"] == "FAIL" and v[0]["verdict"] == "FAIL", v)

# a reference that does not reproduce itself: a difference within its own spread is "ok~"
noisy = samples()
for r in noisy:
    if r["allocator"] == "torch" and r["round"] == 2:
        r["results"] = "1.5 2.25 3.003"
    if r["allocator"] == "vramlab-expandable" and r["round"] == 3:
        r["results"] = "1.5 2.25 3.001"
v = bs.verdict(bs.summarize(bs.mark_equality(noisy)))
check("within the reference's own spread", v[0]["equal"] == "ok~", v)

# n/a: no torch-expandable column, or too few processes for an interval
v = bs.verdict(bs.summarize(bs.mark_equality([r for r in samples() if r["allocator"] != "torch-expandable"])))
check("no torch-expandable: n/a", v[0]["waste_ok"] == "n/a" and v[0]["verdict"] == "n/a", v)
v = bs.verdict(bs.summarize(bs.mark_equality(samples(rounds=2))))
check("2 processes: no interval, speed n/a", v[0]["speed"] == "n/a" and v[0]["ratio_hi"] is None, v)

# a failed process is counted, not summarized
failed = samples()
failed[2].update(status="failed", error="exit 1: boom", step_ms_median="")
s = {x["allocator"]: x for x in bs.summarize(bs.mark_equality(failed))}
check("failed counted", s["vramlab"]["failed"] == 1 and s["vramlab"]["n"] == 4, s["vramlab"])

# --- files: write, then --summarize a copy of the folder gives the same summary ---
tmp = tempfile.mkdtemp()
try:
    both = samples("transformer") + samples("resnet50", waste=1.03, seed=8) \
        + with_pairs(samples("gpt2", seed=9), [1.01, 0.99, 1.0, 1.02, 1.0], "gpt2") \
        + samples("moe", slow=1.05, seed=10)  # gpt2's pair row: no waste, in the figure too
    text = bs.write_summary(tmp, both, None, ["device: synthetic", "git: test"])
    for name in ("samples.csv", "summary.csv", "verdict.csv", "report.txt"):
        check(f"{name} written", os.path.getsize(os.path.join(tmp, name)) > 0)
    with open(os.path.join(tmp, "summary.csv")) as f:
        head = [next(f) for _ in range(3)]
    check("conditions as comments", head[0] == "# device: synthetic\n" and head[2].startswith("workload,allocator"),
          head)
    got = bs.read_csv(os.path.join(tmp, "samples.csv"))
    check("samples read back", len(got) == len(both) and got[0]["exact_equal"] == "yes", got[0])
    verdicts = {r["workload"]: r["verdict"] for r in bs.read_csv(os.path.join(tmp, "verdict.csv"))}
    check("verdict.csv", verdicts == dict(transformer="PASS", resnet50="FAIL", gpt2="PASS", moe="FAIL"), verdicts)
    check("report has the verdict table", "acceptance of vramlab-expandable" in text and "FAIL" in text, text)

    copy = os.path.join(tmp, "copied")
    os.makedirs(copy)
    shutil.copy(os.path.join(tmp, "samples.csv"), copy)
    p = subprocess.run([sys.executable, os.path.join(HERE, "bench.py"), "--summarize", copy],
                       capture_output=True, text=True)
    check("--summarize exit 0", p.returncode == 0, p.stderr + p.stdout)
    with open(os.path.join(tmp, "summary.csv")) as a, open(os.path.join(copy, "summary.csv")) as b:
        check("--summarize reproduces summary.csv", a.read() == b.read())
    check("--summarize keeps the conditions", "# device: synthetic" in open(os.path.join(copy, "summary.csv")).read())
    check("plot input copied", os.path.exists(os.path.join(copy, "torch_bench.summary.csv")))
    if shutil.which("gnuplot"):
        png = os.path.join(copy, "plots", "torch_bench.png")
        check("figure rendered", os.path.exists(png) and os.path.getsize(png) > 10_000, p.stdout + p.stderr)
        log = os.path.join(copy, "plots", "torch_bench.log")
        check("no gnuplot errors", not os.path.exists(log), open(log).read() if os.path.exists(log) else "")
    else:
        print("gnuplot not installed: figure not checked")

    # --dry-run needs neither torch nor a GPU; without the RMM shim the rmm-* columns are skipped
    p = subprocess.run([sys.executable, os.path.join(HERE, "bench.py"), "--dry-run", "--rounds", "1",
                        "--workloads", "moe", "--plugin", os.path.join(tmp, "libvramlab_caching.so"),
                        "--allocators", "torch,torch-expandable,vramlab,rmm-pool,vramlab-expandable,rmm-async"],
                       capture_output=True, text=True)
    lines = p.stdout.splitlines()
    check("dry run", p.returncode == 0 and [ln.split()[5] for ln in lines if ln.startswith("round")]
          == ["torch", "torch-expandable", "vramlab", "vramlab-expandable"], p.stdout + p.stderr)
    check("rmm skipped with a reason", lines and lines[0].startswith("skipped rmm-pool,rmm-async: no RMM shim"),
          lines[:1])
    p = subprocess.run([sys.executable, os.path.join(HERE, "bench.py"), "--dry-run", "--allocators", "nope"],
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

    # make torch-bench passes RESUME=1 (and not RESUME=0) on as --resume
    for val, want in (("1", True), ("0", False)):
        p = subprocess.run(["make", "-C", ROOT, "--no-print-directory", "-n", "torch-bench", "TORCH_BENCH_DEPS=",
                            "RUN=x", f"RESUME={val}"], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "MAKEFLAGS"})
        check(f"make torch-bench RESUME={val}", p.returncode == 0 and ("--resume" in p.stdout) == want
              and "--run-id x" in p.stdout, p.stdout + p.stderr)

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
        p = subprocess.run([sys.executable, os.path.join(HERE, "bench.py"), "--out", tmp, "--run-id", "e2e",
                            "--rounds", "2", "--workloads", "transformer,moe", "--plugin", plugin,
                            "--define", "hole=caching:segments=expandable,split=hole",
                            "--allocators", "torch,torch-expandable,vramlab,vramlab-expandable,hole,vramlab+hole"],
                           capture_output=True, text=True, env=env)
        run = os.path.join(tmp, "e2e")
        check("stand-in run exit 0", p.returncode == 0, p.stdout + p.stderr)
        got = bs.read_csv(os.path.join(run, "samples.csv")) if os.path.exists(os.path.join(run, "samples.csv")) else []
        check("24 samples", len(got) == 24, len(got))
        if got:
            by = {(r["round"], r["workload"], r["allocator"]): r for r in got}
            r = by[("1", "moe", "torch")]
            check("torch sample", r["status"] == "ok" and 15 < float(r["step_ms_median"]) < 100
                  and r["steps"] == "8" and r["steps_timed"] == "4" and r["spec"] == "default"
                  and r["peak_reserved_bytes"] == "3000" and r["peak_allocated_bytes"] == "2000"
                  and r["peak_requested_bytes"] == "" and r["stats_from"] == "torch.cuda.memory_stats"
                  and int(r["device_used_max_bytes"]) > int(r["device_used_base_bytes"])
                  and r["exact_equal"] == "yes", r)
            r = by[("1", "transformer", "torch-expandable")]
            check("torch-expandable sample", r["spec"] == "expandable_segments:True" and r["steps_timed"] == "3", r)
            r = by[("2", "moe", "vramlab-expandable")]
            check("plugin sample", r["spec"] == "caching:segments=expandable" and r["peak_reserved_bytes"] == ""
                  and r["stats_from"] == "vramlab via vl_torch_stat" and r["exact_equal"] == "no"
                  and r["max_rel_diff"] == "0.5", r)
            check("no allocator time from an unopened plugin", r["alloc_ms_median"] == "", r)
            r = by[("1", "moe", "hole")]
            check("--define'd allocator sample", r["status"] == "ok"
                  and r["spec"] == "caching:segments=expandable,split=hole", r)
            r = by[("1", "moe", "vramlab+hole")]
            check("pair sample", r["status"] == "ok" and r["spec"] == "caching + caching:segments=expandable,split=hole"
                  and float(r["paired_ratio"]) > 0 and float(r["step_ms_median_b"]) > 0
                  and r["peak_reserved_bytes"] == "" and "paired" in r["stats_from"]
                  and r["steps"] == "16" and r["results"] == "" and r["exact_equal"] == "", r)
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
                      abs(bs.rankstats.quantile_median(a_ms) - js["step_ms_median"]) < 1e-9, (a_ms, js))
            check("rotated order", [by[("2", "moe", a)]["order"] for a in ("torch-expandable", "torch")]
                  == ["18", "23"], [(k, v["order"]) for k, v in by.items() if k[0] == "2"])
        cond = open(os.path.join(run, "conditions.txt")).read() if os.path.exists(run) else ""
        check("conditions", "device: Stand-in GPU" in cond and "torch: 0.0-standin" in cond and "git: " in cond, cond)
    else:
        print("no build/lib/libvramlab_caching.so (make plugin): stand-in run not checked")

    # --- split runs: the incremental samples.csv, a stop signal, --resume (stand-ins, no plugin) ---
    standin_env = dict(os.environ, PYTHONPATH=fake, VL_BENCH_WORKLOADS="standin_workloads")
    for k in ("VL_STANDIN_FAIL", "VL_STANDIN_SLEEP", "VL_STANDIN_STARTED"):
        standin_env.pop(k, None)
    started = os.path.join(tmp, "started.txt")

    def bench_cmd(run_id, *more):
        return [sys.executable, os.path.join(HERE, "bench.py"), "--out", tmp, "--run-id", run_id,
                "--plugin", os.path.join(tmp, "no-plugin.so"), *more]

    def starts():
        return open(started).read().splitlines() if os.path.exists(started) else []

    def keys(path):
        return [(r["round"], r["workload"], r["allocator"], r["status"]) for r in bs.read_csv(path)]

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
    got = bs.read_csv(os.path.join(res, "samples.csv"))
    check("resumed samples: one ok row per job, in schedule order",
          [(r["round"], r["allocator"], r["status"]) for r in got]
          == [("1", "torch", "ok"), ("1", "torch-expandable", "ok"), ("2", "torch-expandable", "ok"),
              ("2", "torch", "ok")], [(r["round"], r["allocator"], r["status"], r["order"]) for r in got])
    check("merged rows have equality", all(r["exact_equal"] == "yes" for r in got), got)
    summ = {r["allocator"]: r for r in bs.read_csv(os.path.join(res, "summary.csv"))}
    check("summary of the merged rows", summ.get("torch", {}).get("n") == "2"
          and summ.get("torch-expandable", {}).get("n") == "2"
          and summ["torch-expandable"]["failed"] == "0", summ)
    cond = open(os.path.join(res, "conditions.txt")).read()
    check("a line per part, with its git revision", "part 1: date " in cond
          and "part 2: date " in cond and "git resumedrev" in cond and "2 failed ones again" in cond
          and "warning: part 2 ran with git resumedrev" in cond, cond)
    check("complete", "bench: complete: all 4 processes" in p.stdout, p.stdout)
    logs = os.listdir(os.path.join(res, "logs"))
    check("the failed attempts' logs kept", len([x for x in logs if x.startswith("r1.moe.torch-expandable.")
                                                  and x.endswith(".log")]) == 2, logs)
    copy = os.path.join(tmp, "res-copy")
    os.makedirs(copy)
    shutil.copy(os.path.join(res, "samples.csv"), copy)
    p = subprocess.run([sys.executable, os.path.join(HERE, "bench.py"), "--summarize", copy],
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
    cond = open(os.path.join(cut, "conditions.txt")).read()
    check("resumed conditions", "part 2: date " in cond and "6 processes run" in cond
          and "skipped (the rest)" not in cond, cond)
    summ = bs.read_csv(os.path.join(cut, "summary.csv"))
    check("summary over both parts", len(summ) == 4 and all(r["n"] == "2" for r in summ), summ)
finally:
    shutil.rmtree(tmp)

print(f"{'FAILED' if failures else 'passed'}: {failures} failure(s)")
sys.exit(1 if failures else 0)
