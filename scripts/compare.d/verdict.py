"""The verdict of scripts/compare for one metric of run A against run B.

Direction: times, bytes, OOM counts and ratios of reserved to allocated are better
when lower; throughputs (*_per_s, *_gbps) when higher.

Decided against the measured spread first:
  - with a spread on both sides (median with p25..p75, or hyperfine's per-run times):
    "same" when the two middle halves [p25, p75] overlap, or when the medians differ by
    less than --min-effect; otherwise faster/slower (better/worse for memory).
    Why a min-effect of 10% by default: the IQR is measured inside one process, and two
    processes of the same build differ by more than that. Measured on an H200 (same
    build run twice, 81 metrics, quick mode): medians moved by up to 9.6% with IQRs of
    2-3% (per-process offsets: clocks, memory placement), while a 20 us slower
    allocator moved them by 20x-57x;
  - without a spread, bytes and counts are deterministic (same seed, same trace): any
    difference beyond --exact-tolerance (1%) counts; a single timing (a cold first call,
    the wall time of one pass) is noisy, so it must differ by more than --noise
    (default 1.0: twice or half) to count.
A difference is a regression (non-zero exit) only when it is also beyond --threshold
in the bad direction: "slower" says it is real, the threshold says it matters."""
import math

HIGHER_IS_BETTER_UNITS = ("per_s", "gbps")
TIME_UNITS = ("ns", "us", "ms", "s")


def higher_is_better(metric):
    return metric.unit in HIGHER_IS_BETTER_UNITS or metric.name.endswith("_per_s")


def is_time(metric):
    return metric.unit in TIME_UNITS or higher_is_better(metric)


def judge(a, b, threshold, min_effect, noise, exact_tolerance):
    """Returns (ratio, basis, verdict, regression)."""
    if a.value == 0 and b.value == 0:
        return 1.0, "exact", "same", False
    if a.value == 0:
        ratio = math.inf
    else:
        ratio = b.value / a.value
    worse = (ratio < 1) if higher_is_better(a) else (ratio > 1)
    # Symmetric: half the throughput is as large a change as twice the time.
    change = max(ratio, 1 / ratio) - 1 if 0 < ratio < math.inf else math.inf
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
        real = change > exact_tolerance
    if not real:
        return ratio, basis, "same", False
    if is_time(a):
        verdict = "slower" if worse else "faster"
    else:
        verdict = "worse" if worse else "better"
    return ratio, basis, verdict, worse and change > threshold
