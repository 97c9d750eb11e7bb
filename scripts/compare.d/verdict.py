"""The verdict of scripts/compare for one metric of run A against run B.

Direction: times, bytes, OOM counts and ratios of reserved to allocated are better
when lower; throughputs (*_per_s, *_gbps) when higher.

Decided against the measured spread first:
  - with a spread on both sides (median with p25..p75, or hyperfine's per-run times):
    "same" when the two middle halves [p25, p75] overlap or the medians differ by less
    than --min-effect (a floor below which nobody cares, default 2%); otherwise
    faster/slower (or better/worse for memory);
  - without a spread (a single number): bytes and counts are deterministic, so any
    difference beyond --min-effect counts; a single timing is noisy, so it must differ
    by more than --noise (default 25%) to count.
A difference is a regression (non-zero exit) only when it is also beyond --threshold
in the bad direction: "slower" says it is real, the threshold says it matters."""
import math

HIGHER_IS_BETTER_UNITS = ("per_s", "gbps")
TIME_UNITS = ("ns", "us", "ms", "s")


def higher_is_better(metric):
    return metric.unit in HIGHER_IS_BETTER_UNITS or metric.name.endswith("_per_s")


def is_time(metric):
    return metric.unit in TIME_UNITS or higher_is_better(metric)


def judge(a, b, threshold, min_effect, noise):
    """Returns (ratio, basis, verdict, regression)."""
    if a.value == 0 and b.value == 0:
        return 1.0, "exact", "same", False
    if a.value == 0:
        ratio = math.inf
    else:
        ratio = b.value / a.value
    worse = (ratio < 1) if higher_is_better(a) else (ratio > 1)
    change = abs(ratio - 1) if math.isfinite(ratio) else math.inf
    spread = None not in (a.lo, a.hi, b.lo, b.hi)
    if spread:
        basis = "iqr"
        overlap = a.lo <= b.hi and b.lo <= a.hi
        real = not overlap and change > min_effect
    elif is_time(a):
        basis = "single"
        real = change > max(noise, min_effect)
    else:
        basis = "exact"
        real = change > min_effect
    if not real:
        return ratio, basis, "same", False
    if is_time(a):
        verdict = "slower" if worse else "faster"
    else:
        verdict = "worse" if worse else "better"
    return ratio, basis, verdict, worse and change > threshold
