"""Cold replay against PyTorch's expandable segments: the first pass's ops/s per process,
from the cold.csv that tests/gpu/allocator_verdict.sh writes (one row per process and
pass: round, trace, alloc, pass, ops_per_s, reserved_over_allocated), and the ratio of a
SPEC's to PyTorch's between processes: the Hodges-Lehmann estimate on the log scale with
its 95% interval, and the call the verdict script makes of it ("at least as fast" where
the interval's lower end is at least 1, "slower" where its upper end is below 1)."""
import math
import statistics
import sys
from collections import defaultdict

import rankstats
import vlresults

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
    to bound the interval (call: "too few processes")."""
    a, b = rate.get((trace, spec)), rate.get((trace, base))
    if not a or not b:
        return None
    est, lo, hi = rankstats.hodges_lehmann([math.log(x) for x in b], [math.log(x) for x in a])
    bounded = math.isfinite(lo)
    call = ("at least as fast" if lo >= 0 else "slower" if hi < 0 else "not resolved") if bounded \
        else "too few processes"
    return dict(n=len(a), median=statistics.median(a), base_median=statistics.median(b), estimate=math.exp(est),
                lo=math.exp(lo) if bounded else None, hi=math.exp(hi) if bounded else None, call=call)
