#!/usr/bin/env python3
"""make test-vramlab: the vramlab package (scripts/vramlab/) on its own, no GPU: the one
verdict vocabulary (compare's calls, the checks of the torch-bench and the cold replay,
and that the checks keep the rules they had before the one vocabulary, but where a
regression now fails as compare calls one), the one number formatter against each form it
replaced, the one CSV reader against csv.DictReader, the launchers from another working
directory and through a symlink, and the package's own rules: no file under scripts/
edits sys.path (but scripts/report, scripts/findings and their folders, not yet folded
in), module docstrings of at most 15 lines. Exit 0 passed, 1 failed."""
import ast
import csv
import math
import os
import random
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(ROOT, "scripts")
sys.path.insert(0, SCRIPTS)  # the vramlab package, as scripts/'s launchers have it
from vramlab import fmt, rankstats, results, verdict  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from pychecks import check, counts  # noqa: E402


# --- the vocabulary: compare's calls ------------------------------------------------------
V = verdict
check("a real slowdown is slower, a real speed-up faster", V.call(1.2, 1.1, 1.3, True, -1) == V.SLOWER
      and V.call(0.8, 0.7, 0.9, True, -1) == V.FASTER)
check("memory: worse and better", V.call(1.2, 1.1, 1.3, True, -1, time=False) == V.WORSE
      and V.call(0.8, 0.7, 0.9, True, -1, time=False) == V.BETTER)
check("throughput, higher is better: a lower one is slower", V.call(0.8, 0.7, 0.9, True, +1) == V.SLOWER)
check("no better direction: changed", V.call(1.2, 1.1, 1.3, True, 0) == V.CHANGED)
check("not real: same inside the margin, else inconclusive", V.call(1.01, 0.98, 1.04, False, -1, margin=0.05) == V.SAME
      and V.call(1.01, 0.9, 1.1, False, -1, margin=0.05) == V.INCONCLUSIVE)
check("a regression: real, the bad way, beyond the threshold", V.is_regression(1.06, True, -1, 0.05)
      and not V.is_regression(1.04, True, -1, 0.05) and not V.is_regression(1.06, False, -1, 0.05)
      and not V.is_regression(0.9, True, -1, 0.05) and not V.is_regression(1.5, True, 0, 0.05)
      and V.is_regression(0.9, True, +1, 0.05))

# --- the checks: the torch-bench's speed and the cold replay, and their rules before ------


def old_speed(lo, hi, limit=1.03):
    """bench_stats.speed_call before the one vocabulary."""
    if hi is not None and hi <= limit:
        return "ok"
    if lo is not None and lo > limit:
        return "slower"
    return "inconclusive"


def old_cold(lo_log, hi_log):
    """cold.ratio's call before the one vocabulary, on the log scale."""
    return "at least as fast" if lo_log >= 0 else "slower" if hi_log < 0 else "not resolved"


rng = random.Random(7)
moved, band = [], 0
for _ in range(20000):
    lo, hi = sorted(math.exp(rng.uniform(-0.1, 0.1)) for _ in range(2))
    r = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    new = V.check(r, lo, hi, sense=-1, threshold=1.03 - 1)
    in_band = 1 < lo <= 1.03 < r  # a real slowdown beyond 3% whose interval reaches below 1.03
    band += in_band
    if new != (V.FAIL if in_band else V.outcome_of(old_speed(lo, hi))):
        moved.append((r, lo, hi, new))
check("speed: the check keeps the old rule, but a regression's band now FAILs", not moved and band > 0, moved[:3])
check("speed: 1.03 exactly is within", V.check(1.0, 0.97, 1.03, threshold=1.03 - 1) == V.PASS)
moved = []
for _ in range(20000):
    lo, hi = sorted(rng.uniform(-0.3, 0.3) for _ in range(2))
    est = rng.uniform(lo, hi)
    new = V.check(math.exp(est), math.exp(lo), math.exp(hi), sense=+1, threshold=0)
    if new != V.outcome_of(old_cold(lo, hi)):
        moved.append((est, lo, hi, new))
check("cold: the check is the old call at threshold 0, higher is better", not moved, moved[:3])
check("no interval: INCONCLUSIVE", V.check(1.0, None, None) == V.UNDECIDED and V.check(None, None, None) == V.UNDECIDED)
check("a figure against its limit", V.limit_check(1.02, 1.02) == V.PASS and V.limit_check(1.0201, 1.02) == V.FAIL
      and V.limit_check(None, 1.02) == V.NA and V.limit_check(5, 4, sense=+1) == V.PASS)
check("checks combine", V.combine([V.PASS, V.PASS]) == V.PASS and V.combine([V.PASS, V.UNDECIDED]) == V.UNDECIDED
      and V.combine([V.UNDECIDED, V.FAIL]) == V.FAIL and V.combine([]) == V.UNDECIDED)
check("stored runs' words read back", [V.outcome_of(w) for w in ("ok", "slower", "inconclusive", "at least as fast",
                                                                  "not resolved", "too few processes", "PASS", "")]
      == [V.PASS, V.FAIL, V.UNDECIDED, V.PASS, V.UNDECIDED, V.UNDECIDED, V.PASS, ""])

# --- the one number formatter against the five it replaced ---------------------------------


def old_compare(v):
    if v is None:
        return ""
    if abs(v) >= 1e6 or (abs(v) < 1e-2 and v != 0):
        return f"{v:.4g}"
    return f"{v:.6g}"


def old_bench(x, digits=4):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return ""
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}g}" if abs(x) < 1e6 else str(int(round(x)))


def old_csv(x):
    return f"{x:.6g}" if x is not None and math.isfinite(x) else ""


def old_spec(x, spec=".3f"):
    return "" if x is None else format(x, spec)


values = [None, 0, 0.0, 7, -3, 1e-9, 0.00999, 0.01, 1.0201, 12.3456, 999999.4, 1e6, 123456789.0, -2.5e-3,
          math.inf, -math.inf, math.nan] + [rng.uniform(-1e7, 1e7) for _ in range(300)]
bad = [(x, "compare") for x in values if fmt.number(x) != old_compare(x)]
bad += [(x, d, "bench") for x in values for d in (0, 3, 4, 5, 6, 9) if fmt.number(x, d) != old_bench(x, d)]
bad += [(x, "csv") for x in values if fmt.number(x, ".6g", nonfinite="") != old_csv(x)]
bad += [(x, s, "spec") for x in values for s in (".3f", ".4f", ".5g", ".1f") if fmt.number(x, s) != old_spec(x, s)]
check("fmt.number reproduces compare's, the bench's, the CSVs' and the format-spec forms", not bad, bad[:5])

# --- the one CSV reader -----------------------------------------------------------------------
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "t.csv")
    text = '# git: abc\n# device: x\na,b,c\n1,"x, y",3\n\n4,5\n6,7,8,9\n# late: z\n'
    with open(path, "w") as f:
        f.write(text)
    comments = []
    meta, header, rows = results.read_csv(path, comments)
    want = list(csv.DictReader(line for line in text.splitlines(keepends=True) if not line.startswith("#")))
    check("read_csv: metadata, header, rows; the '#' lines whole", meta == {"git": "abc", "device": "x", "late": "z"}
          and header == ["a", "b", "c"] and rows[0] == ["1", "x, y", "3"]
          and comments == ["# git: abc\n", "# device: x\n", "# late: z\n"], (meta, header, rows, comments))
    check("read_dicts: as csv.DictReader has them", results.read_dicts(path) == want, (results.read_dicts(path), want))
    try:
        results.read_csv(os.path.join(d, "none.csv"))
        refused = ""
    except results.BadInput as e:
        refused = str(e)
    check("read_csv: a missing file is BadInput, named", "none.csv" in refused, refused)

# --- the launchers: from any working directory, through a symlink -------------------------
LAUNCHERS = [n for n in sorted(os.listdir(SCRIPTS)) if os.path.isfile(os.path.join(SCRIPTS, n))
             and open(os.path.join(SCRIPTS, n), errors="replace").readline().startswith("#!/usr/bin/env python3")]
check("the Python executables of scripts/", {"compare", "findings", "matrix", "peer-tables", "replay-sweep", "report",
                                             "torch-snapshot-to-csv", "vl"} <= set(LAUNCHERS), LAUNCHERS)
env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
with tempfile.TemporaryDirectory() as d:
    for name in LAUNCHERS:
        p = subprocess.run([os.path.join(SCRIPTS, name), "--help"], cwd=d, capture_output=True, text=True, env=env)
        # starts, imports and answers (peer-tables has no --help: its usage, exit 2)
        check(f"scripts/{name} --help from another folder", "Traceback" not in p.stderr
              and (p.returncode == 0 or p.returncode == 2 and "usage" in p.stderr), (p.returncode, p.stderr[-300:]))
    link = os.path.join(d, "bin")
    os.makedirs(link)
    for name in ("compare", "vl"):
        os.symlink(os.path.join(SCRIPTS, name), os.path.join(link, name))
    p = subprocess.run([os.path.join(link, "compare"), "--help"], cwd=d, capture_output=True, text=True, env=env)
    check("a symlink to scripts/compare runs it (its real folder is on the path)", p.returncode == 0
          and p.stdout.startswith("usage: compare"), p.stderr[-300:])
    p = subprocess.run([os.path.join(link, "vl"), "torch.bench", "--dry-run", "--rounds", "1", "--workloads", "moe",
                        "--allocators", "torch"], cwd=d, capture_output=True, text=True, env=env)
    check("scripts/vl torch.bench through a symlink, elsewhere", p.returncode == 0 and " moe " in p.stdout,
          (p.returncode, p.stdout, p.stderr[-300:]))
    p = subprocess.run([os.path.join(SCRIPTS, "vl"), "no_such_module"], cwd=d, capture_output=True, text=True, env=env)
    check("scripts/vl: an unknown module, exit 2, named", p.returncode == 2 and "no_such_module" in p.stderr, p.stderr)
    p = subprocess.run([os.path.join(SCRIPTS, "vl"), "noise"], cwd=d, capture_output=True, text=True, env=env)
    check("scripts/vl noise: its own usage, exit 2", p.returncode == 2 and "usage: scripts/vl noise" in p.stderr,
          p.stderr)

# --- the package's own rules ---------------------------------------------------------------
editing = []
for folder, dirs, files in os.walk(SCRIPTS):
    dirs[:] = [x for x in dirs if x != "__pycache__"]
    for f in files:
        p = os.path.join(folder, f)
        rel = os.path.relpath(p, SCRIPTS)
        try:
            text = open(p).read()
        except (UnicodeDecodeError, OSError):
            continue
        if re.search(r"sys\.path(\.(insert|append|extend)\s*\(|\s*(\[[^\]]*\])?\s*[+]?=)", text):
            editing.append(rel)
check("no file under scripts/ edits sys.path", not editing, editing)
long_docs = []
for folder, dirs, files in os.walk(os.path.join(SCRIPTS, "vramlab")):
    for f in files:
        if f.endswith(".py"):
            doc = ast.get_docstring(ast.parse(open(os.path.join(folder, f)).read()), clean=False) or ""
            if len(doc.splitlines()) > 15:
                long_docs.append((f, len(doc.splitlines())))
check("module docstrings of at most 15 lines", not long_docs, long_docs)

# --- fastpath: the pair medians of complete rounds only ------------------------------------
from vramlab import fastpath  # noqa: E402
with tempfile.TemporaryDirectory() as d:
    for k, (c10, direct, complete) in enumerate([(700, 40, True), (720, 44, True), (1, 1, False)], 1):
        rep = os.path.join(d, f"rep-{k}")
        os.makedirs(rep)
        for name, v in (("c10", c10), ("direct_classic", direct)):
            with open(os.path.join(rep, f"alloc_latency.{name}.csv"), "w") as f:
                f.write(f"# git_revision: abc\nsize_bytes,pair_median_ns\n512,{v}\n2097152,\n")
        if complete:
            with open(os.path.join(rep, results.COMPLETE_MARK), "w") as f:
                f.write("complete\n")
    got = fastpath.summarize(fastpath.pair_medians(d, 512))
    check("fastpath: a median and range per configuration, an incomplete round left out",
          got == [("c10", 2, 710.0, 700.0, 720.0), ("direct_classic", 2, 42.0, 40.0, 44.0)], got)
    check("fastpath: an unknown pair_median_ns is no sample", fastpath.pair_medians(d, 2097152) == {},
          fastpath.pair_medians(d, 2097152))
    check("fastpath: by default every size the complete rounds measured", fastpath.sizes_measured(d) == [512],
          fastpath.sizes_measured(d))
    p = subprocess.run([os.path.join(SCRIPTS, "vl"), "fastpath", d, "--size", "512", "--size", "2097152"],
                       capture_output=True, text=True)
    check("fastpath: a size no process measured says so", p.returncode == 0
          and "pair_median_ns at 2097152 B: no process measured this size" in p.stdout, (p.returncode, p.stdout))
    p = subprocess.run([os.path.join(SCRIPTS, "vl"), "fastpath", os.path.join(d, "none")], capture_output=True, text=True)
    check("fastpath: a folder without rounds fails, saying so", p.returncode == 1 and "no complete" in p.stderr,
          (p.returncode, p.stderr))

# --- fastpath against another build (FAST_BASE): NAME / base_NAME paired by round ---------
with tempfile.TemporaryDirectory() as d:
    for k in range(1, 9):  # the new build half as fast as the base in every round; round 8 lacks the base
        rep = os.path.join(d, f"rep-{k}")
        os.makedirs(rep)
        for name, v in (("plugin_expandable", 30 + k), ("base_plugin_expandable", 2 * (30 + k))):
            if name.startswith("base_") and k == 8:
                continue
            with open(os.path.join(rep, f"alloc_latency.{name}.csv"), "w") as f:
                f.write(f"size_bytes,pair_median_ns\n512,{v}\n")
        with open(os.path.join(rep, results.COMPLETE_MARK), "w") as f:
            f.write("complete\n")
    got = fastpath.against_base(fastpath.pair_by_round(d, 512))
    check("fastpath: NAME / base_NAME over the rounds that ran both",
          len(got) == 1 and got[0][:2] == ("plugin_expandable", 7) and all(abs(x - 0.5) < 1e-9 for x in got[0][2:]), got)

# --- the median's distribution-free interval, against the binomial by hand ----------------
# 16 values: P(B(16, 1/2) <= 3) = (1 + 16 + 120 + 560) / 2^16 <= 0.025 < P(B <= 4): the 4th and 13th
check("median_interval: 16 values, the 4th and the 13th", rankstats.median_interval(range(1, 17))
      == (8.5, 4, 13, 1 - 2 * 697 / 2 ** 16), rankstats.median_interval(range(1, 17)))
check("median_interval: 8 values, min..max covering 1 - 2/2^8", rankstats.median_interval([5, 1, 8, 2, 7, 3, 6, 4])
      == (4.5, 1, 8, 1 - 2 / 2 ** 8))
check("median_interval: no values", rankstats.median_interval([]) is None)

checks, failures, _ = counts()
print(f"test-vramlab: {checks - failures} passed, {failures} failed, 0 skipped")
sys.exit(1 if failures else 0)
