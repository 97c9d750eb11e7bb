"""Cold replay against PyTorch's expandable segments: the first pass's ops/s per process,
from the cold.csv that tests/gpu/allocator_verdict.sh writes (one row per process and
pass: round, trace, alloc, pass, ops_per_s, reserved_over_allocated), and the ratio of a
SPEC's to PyTorch's between processes: the Hodges-Lehmann estimate on the log scale with
its 95% interval, and its check against "at least as fast" (vramlab.verdict.check, higher
is better, threshold 0): PASS where the interval's lower end is at least 1, FAIL where
its upper end is below 1, INCONCLUSIVE otherwise or without an interval."""
import math
import statistics
from collections import defaultdict

from vramlab import rankstats, verdict
from vramlab import results as vlresults

TORCH = "torch:expandable_segments=1"


def read(path):
    """(its '#' metadata, {(trace, alloc): [ops/s of each process's first pass]}) of one cold.csv."""
    meta, header, rows = vlresults.read_csv(path)
    col = {name: i for i, name in enumerate(header)}
    rate = defaultdict(list)
    for r in rows:
        if r[col["pass"]] == "1" and r[col["ops_per_s"]]:
            rate[(r[col["trace"]], r[col["alloc"]])].append(float(r[col["ops_per_s"]]))
    return meta, rate


def first_pass_rates(path):
    """{(trace, alloc): [ops/s of each process's first pass]}."""
    return read(path)[1]


def ratio(rate, trace, spec, base=TORCH):
    """dict(n, median, base_median, estimate, lo, hi, call) of spec against base on trace,
    or None where either has no process. lo/hi are None where the processes are too few
    to bound the interval (call: INCONCLUSIVE)."""
    a, b = rate.get((trace, spec)), rate.get((trace, base))
    if not a or not b:
        return None
    est, lo, hi = rankstats.hodges_lehmann([math.log(x) for x in b], [math.log(x) for x in a])
    bounded = math.isfinite(lo)
    lo, hi = (math.exp(lo), math.exp(hi)) if bounded else (None, None)
    return dict(n=len(a), median=statistics.median(a), base_median=statistics.median(b), estimate=math.exp(est),
                lo=lo, hi=hi, call=verdict.check(math.exp(est), lo, hi, sense=1, threshold=0))
