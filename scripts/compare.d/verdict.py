"""The verdict of scripts/compare for every metric of run A against run B.

The unit of sampling is the process: a metric's samples are its values in separate
processes (the repetitions of a repeated run, hyperfine's timed runs). Spread inside
one process (p25..p75 of a median) says nothing about the process-to-process noise,
which on a VM can put the same program at 450 ns in one process and 750 ns in the
next, so it is not used.

Per metric:
  1. values that are all equal on both sides: "same" (exact);
  2. too few repetitions for the rank test to ever reach --alpha (fewer than 4 per
     side): "inconclusive", with the repetitions it would need;
  3. the Mann-Whitney rank-sum test (rankstats.py) gives a p-value; the p-values of all
     metrics tested are corrected together (Benjamini-Hochberg: the expected share of
     false discoveries among the metrics reported changed stays <= --alpha);
  4. q <= alpha: faster / slower (better / worse for memory; "changed" where neither
     direction is better), with the ratio B/A
     estimated by Hodges-Lehmann on log values and its 1 - alpha interval;
  5. otherwise "same" only when the 1 - alpha interval of the ratio lies wholly inside
     [1 / (1 + margin), 1 + margin] (an equivalence rule; the margin is --resolve, by
     default --threshold), else "inconclusive", with the repetitions per side that
     would resolve it (reps_needed). The table and compare.csv also give the smallest
     change the runs could have detected with 80% power (mde, for the metric tested
     alone; Noether's formula on the measured noise, checked by simulation in
     tests/compare/test_stats.py).
A change is a regression (exit 1) when it is real (4.) and its estimated size is beyond
--threshold in the bad direction.

Direction (direction()): times, memory held or reserved, OOMs, corrupted elements and
waste ratios are better when lower; throughputs and the largest allocation that fits
when higher. A real change of a metric with no better direction (memory free on the
device, the program's own allocated bytes) is "changed" and never a regression."""
import math
import re

import rankstats

TIME_UNITS = ("ns", "us", "ms", "s")
HIGHER_IS_BETTER = re.compile(r"(_per_s$|_gbps$|^largest_|_fit_|^ok_workers$|^neighbour_ok$|^overlap_fraction$)")
LOWER_IS_BETTER = re.compile(r"(^peak_.*_bytes$|^reserved_bytes$|^held_bytes$|^per_worker_bytes$|^device_used_bytes$|"
                             r"^history_bytes$|oom|corrupted|^wrong_|_over_|^stall_ratio|^slope_|^device_allocs|"
                             r"^segments$)")


def direction(metric):
    """+1: higher is better; -1: lower is better; 0: neither."""
    if HIGHER_IS_BETTER.search(metric.name) or metric.unit in ("per_s", "gbps"):
        return 1
    if metric.unit in TIME_UNITS or LOWER_IS_BETTER.search(metric.name):
        return -1
    return 0


def is_time(metric):
    return metric.unit in TIME_UNITS or metric.unit in ("per_s", "gbps") or metric.name.endswith("_per_s")


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


def change_of(ratio):
    """Symmetric relative change: half the throughput is as large as twice the time."""
    if not (0 < ratio < math.inf):
        return math.inf
    return max(ratio, 1 / ratio) - 1


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
            j.basis, j.verdict, j.ratio, j.lo, j.hi, j.mde, j.noise = "exact", "same", 1.0, 1.0, 1.0, 0.0, 0.0
            continue
        sd = rankstats.pooled_sd(ta, tb)
        j.noise = sd if logged else (sd / abs(base) if base else math.nan)
        mde_shift = rankstats.min_detectable_shift(ta, tb, alpha, power)
        j.mde = change_of(_as_ratio(mde_shift, logged, base)) if math.isfinite(mde_shift) else math.inf
        margin = math.log1p(margin_change) if logged else margin_change * abs(base)
        j.reps_needed = _reps_to_resolve(ta, tb, est, margin, alpha, power)
        j.noise_known = j.reps_needed is not None
        if rankstats.min_p(len(a), len(b)) > alpha:
            j.basis, j.verdict = f"n={len(a)}/{len(b)}", "inconclusive"
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
        if j.q <= alpha:
            sense = direction(ma)
            worse = (j.ratio < 1) if sense > 0 else (j.ratio > 1)
            if sense == 0:
                j.verdict = "changed"
            elif is_time(ma):
                j.verdict = "slower" if worse else "faster"
            else:
                j.verdict = "worse" if worse else "better"
            j.regression = sense != 0 and worse and change_of(j.ratio) > threshold
        elif within(j.lo, j.hi, margin_change):
            j.verdict = "same"
        else:
            j.verdict = "inconclusive"
    return out


def within(lo, hi, margin):
    """Whether the interval [lo, hi] of a ratio lies inside [1 / (1 + margin), 1 + margin]."""
    return all(0 < x < math.inf and change_of(x) <= margin for x in (lo, hi))
