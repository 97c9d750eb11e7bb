"""The one verdict vocabulary of vramlab, and its rules: scripts/compare, scripts/matrix,
the torch-bench (vramlab.torch.bench_stats) and the cold replay (vramlab.cold) all call it.

A call on one ratio B/A with its interval: same (the interval inside +-margin), faster /
slower for times, better / worse for other metrics with a better direction, changed for
one without, inconclusive (neither real nor within the margin); REGRESSION marks a real
change beyond the threshold in the bad direction. A check against a limit (a gate) ends
PASS (the interval's bad end within the threshold), FAIL (a regression) or INCONCLUSIVE;
a figure without an interval (a waste) is PASS or FAIL against its limit, n/a where it
is missing; several checks combine into FAIL if one fails, PASS if all pass, else
INCONCLUSIVE. judge_all gives compare's call of every metric of run A against run B.
docs/comparing.md, section "vramlab/verdict.py", has the rules in full."""
import math
import re

from vramlab import rankstats

TIME_UNITS = ("ns", "us", "ms", "s")
HIGHER_IS_BETTER = re.compile(r"(_per_s$|_gbps$|^largest_|_fit_|^ok_workers$|^neighbour_ok$|^overlap_fraction$)")
LOWER_IS_BETTER = re.compile(r"(^peak_.*_bytes$|^reserved_bytes$|^held_bytes$|^per_worker_bytes$|^device_used_bytes$|"
                             r"^history_bytes$|oom|corrupted|^wrong_|_over_|^stall_ratio|^slope_|^device_allocs|"
                             r"^segments$)")


# --- the vocabulary ------------------------------------------------------------------------
# A call on one ratio:
SAME, FASTER, SLOWER, BETTER, WORSE, CHANGED, INCONCLUSIVE = (
    "same", "faster", "slower", "better", "worse", "changed", "inconclusive")
CALLS = (SAME, FASTER, SLOWER, BETTER, WORSE, CHANGED, INCONCLUSIVE)
REGRESSION = "REGRESSION"  # beside a call: a real change beyond the threshold, the bad way
# The outcome of a check against a limit, and of several together:
PASS, FAIL, UNDECIDED = "PASS", "FAIL", "INCONCLUSIVE"
NA = "n/a"  # a check with nothing to judge (a figure not measured)
# The words stored runs from before this vocabulary wrote for a check (torch-bench's
# speed and waste_ok, cold.csv's call): read back as the outcome they meant.
LEGACY = {"ok": PASS, "slower": FAIL, "inconclusive": UNDECIDED, "at least as fast": PASS,
          "not resolved": UNDECIDED, "too few processes": UNDECIDED}


def direction(metric):
    """+1: higher is better; -1: lower is better; 0: neither."""
    if HIGHER_IS_BETTER.search(metric.name) or metric.unit in ("per_s", "gbps"):
        return 1
    if metric.unit in TIME_UNITS or LOWER_IS_BETTER.search(metric.name):
        return -1
    return 0


def is_time(metric):
    return metric.unit in TIME_UNITS or metric.unit in ("per_s", "gbps") or metric.name.endswith("_per_s")


def change_of(ratio):
    """Symmetric relative change: half the throughput is as large as twice the time."""
    if not (0 < ratio < math.inf):
        return math.inf
    return max(ratio, 1 / ratio) - 1


def within(lo, hi, margin):
    """Whether the interval [lo, hi] of a ratio lies inside [1 / (1 + margin), 1 + margin]."""
    return all(0 < x < math.inf and change_of(x) <= margin for x in (lo, hi))


def excludes_one(lo, hi):
    """Whether an interval of a ratio excludes 1: the change is real at the interval's
    level (a caller without a test of its own; compare has its corrected q-values)."""
    return lo is not None and hi is not None and (lo > 1 or hi < 1)


def is_worse(ratio, sense):
    """Whether ratio B/A lies on the bad side of 1 for a metric of direction sense."""
    return ratio < 1 if sense > 0 else ratio > 1


def call(ratio, lo, hi, real, sense, time=True, margin=0.05):
    """The call on one ratio B/A with its interval [lo, hi]: real (the test found a
    change) gives its direction's word, else same where the interval lies inside
    +-margin, else inconclusive."""
    if real:
        if sense == 0:
            return CHANGED
        worse = is_worse(ratio, sense)
        return (SLOWER if worse else FASTER) if time else (WORSE if worse else BETTER)
    return SAME if within(lo, hi, margin) else INCONCLUSIVE


def is_regression(ratio, real, sense, threshold):
    """A real change in the bad direction whose estimate is beyond threshold."""
    return bool(real) and sense != 0 and is_worse(ratio, sense) and change_of(ratio) > threshold


def check(ratio, lo, hi, sense=-1, threshold=0.05, real=None):
    """A ratio against its limit (a gate): FAIL on a regression (real: the interval
    excludes 1, unless the caller's test says), PASS where the interval's bad end lies
    within threshold of 1, else UNDECIDED; UNDECIDED without a ratio or an interval."""
    if ratio is None or lo is None or hi is None:
        return UNDECIDED
    real = excludes_one(lo, hi) if real is None else real
    if is_regression(ratio, real, sense, threshold):
        return FAIL
    bad_end = hi if sense < 0 else lo
    return PASS if 0 < bad_end < math.inf and (not is_worse(bad_end, sense) or change_of(bad_end) <= threshold) \
        else UNDECIDED


def limit_check(value, limit, sense=-1):
    """A figure without an interval against its limit: PASS within it (at most limit
    where lower is better, at least where higher is), FAIL beyond, NA without a value."""
    if value is None:
        return NA
    return PASS if (value <= limit if sense < 0 else value >= limit) else FAIL


def combine(outcomes):
    """Several checks that must all hold: FAIL where one fails, PASS where every one
    (at least one) passes, else UNDECIDED."""
    outcomes = list(outcomes)
    if FAIL in outcomes:
        return FAIL
    return PASS if outcomes and all(o == PASS for o in outcomes) else UNDECIDED


def outcome_of(word):
    """A check's outcome as written in a CSV, this vocabulary's or a stored run's older
    word (LEGACY); '' stays ''."""
    return LEGACY.get(word, word)


class Judgement:
    __slots__ = ("ratio", "lo", "hi", "p", "q", "mde", "noise", "reps_needed", "noise_known", "basis", "verdict",
                 "regression")

    def __init__(self):
        self.ratio, self.lo, self.hi = math.nan, math.nan, math.nan
        self.p, self.q, self.mde, self.noise = None, None, math.nan, math.nan
        self.reps_needed, self.basis, self.verdict, self.regression = None, "", "", False
        self.noise_known = False  # reps_needed comes from measured noise, not only the test's minimum


def _transform(a, b):
    """Log values when every value is positive (changes are ratios), else raw values."""
    if min(a + b) > 0:
        return [math.log(x) for x in a], [math.log(x) for x in b], True
    return list(a), list(b), False


def _as_ratio(shift, logged, base):
    if logged:
        return math.exp(shift) if math.isfinite(shift) else (math.inf if shift > 0 else 0.0)
    if base == 0:
        return 1.0 if shift == 0 else (math.inf if shift > 0 else -math.inf)
    return (base + shift) / base


def _reps_to_resolve(ta, tb, est, margin, alpha, power):
    """Repetitions per side that would resolve a metric: for an estimate inside the
    margin, the count at which a change of (margin - |estimate|) is found with this
    power, about what puts the interval inside the margin; beyond it, the count that
    finds the estimated change itself. None when the noise cannot say."""
    if not (math.isfinite(est) and math.isfinite(margin)) or margin <= 0 or min(len(ta), len(tb)) < 2:
        return None  # one process a side says nothing of the noise
    room = margin - abs(est) if abs(est) < margin else abs(est)
    return rankstats.reps_for_shift(ta, tb, room, alpha, power) if room > 0 else None


def judge_all(pairs, alpha=0.05, threshold=0.05, resolve=None, power=0.8):
    """pairs: [(metric A, metric B)]; returns one Judgement each, in order. resolve: the
    equivalence margin of 'same' (default: the threshold)."""
    margin_change = threshold if resolve is None else resolve
    out = [Judgement() for _ in pairs]
    tested = []
    for j, (ma, mb) in zip(out, pairs):
        a, b = ma.samples, mb.samples
        ta, tb, logged = _transform(a, b)
        base = rankstats.quantile_median(a)
        est, lo, hi = rankstats.hodges_lehmann(ta, tb, alpha)
        j.ratio, j.lo, j.hi = (_as_ratio(x, logged, base) for x in (est, lo, hi))
        if not logged and base == 0:  # counts that were 0 in A: no ratio, say the change
            j.ratio = math.inf if est > 0 else (1.0 if est == 0 else -math.inf)
        if len(set(a)) == 1 and set(a) == set(b):
            j.basis, j.verdict, j.ratio, j.lo, j.hi, j.mde, j.noise = "exact", SAME, 1.0, 1.0, 1.0, 0.0, 0.0
            continue
        sd = rankstats.pooled_sd(ta, tb)
        j.noise = sd if logged else (sd / abs(base) if base else math.nan)
        mde_shift = rankstats.min_detectable_shift(ta, tb, alpha, power)
        j.mde = change_of(_as_ratio(mde_shift, logged, base)) if math.isfinite(mde_shift) else math.inf
        margin = math.log1p(margin_change) if logged else margin_change * abs(base)
        j.reps_needed = _reps_to_resolve(ta, tb, est, margin, alpha, power)
        j.noise_known = j.reps_needed is not None
        if rankstats.min_p(len(a), len(b)) > alpha:
            j.basis, j.verdict = f"n={len(a)}/{len(b)}", INCONCLUSIVE
            floor = 2
            while rankstats.min_p(floor, floor) > alpha:
                floor += 1
            j.reps_needed = max(j.reps_needed or 0, floor)
            continue
        j.basis = "rank"
        j.p = rankstats.mann_whitney(ta, tb)
        tested.append(j)
    for j, q in zip(tested, rankstats.benjamini_hochberg([j.p for j in tested])):
        j.q = q
    for j, (ma, _) in zip(out, pairs):
        if j.basis != "rank":
            continue
        real, sense = j.q <= alpha, direction(ma)
        j.verdict = call(j.ratio, j.lo, j.hi, real, sense, is_time(ma), margin_change)
        j.regression = is_regression(j.ratio, real, sense, threshold)
    return out

