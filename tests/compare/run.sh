#!/usr/bin/env bash
# Tests of scripts/compare (make test-compare, part of make test; no GPU):
#  - its statistics on synthetic samples with bimodal per-process noise (test_stats.py:
#    exact p-values, the A/A error rate over many trials, the power at a 20% shift,
#    interval coverage);
#  - the whole command on synthetic results folders (make-runs.py): repeated runs of
#    one build -> everything "same", exit 0; alloc x1.2 -> "slower" at every size,
#    REGRESSION, exit 1, free not slower, the clock difference warned about; faster ->
#    exit 0; more reserved memory -> "worse", exit 1; single runs -> "inconclusive" and
#    never a regression, even for a 1.6x slower allocator; a short row is reported, not
#    dropped silently; usage errors -> exit 2; scripts/ab and bench.sh --repeat on the
#    simulated device.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 tests/compare/make-runs.py "$tmp" || { echo "FAIL: make-runs.py"; exit 1; }
. tests/support/checks.sh
cmp=scripts/compare

python3 tests/compare/test_stats.py >"$tmp/stats.log" 2>&1 || { echo "FAIL: test_stats.py"; cat "$tmp/stats.log"; failures=$((failures + 1)); }

check "repeated runs of one build" 0 $cmp --no-plots "$tmp/r-a" "$tmp/r-b"
expect "repeated runs of one build" "29 metrics compared: 29 same"
expect "repeated runs of one build" "20 repetitions"
expect "repeated runs of one build" "machine state: the same"
reject "repeated runs of one build" "slower|faster|REGRESSION|inconclusive"
[ -s "$tmp/compare-r-a-vs-r-b/compare.csv" ] || { echo "FAIL: no compare.csv"; failures=$((failures + 1)); }
[ -s "$tmp/compare-r-a-vs-r-b/samples.csv" ] || { echo "FAIL: no samples.csv"; failures=$((failures + 1)); }
rows=$(grep -vc '^#' "$tmp/compare-r-a-vs-r-b/compare.csv")
# 6 sizes x (alloc, free medians, first_alloc, ooms) + churn (allocs, batch_op, 2 peaks) + hyperfine + header = 30
[ "$rows" -eq 30 ] || { echo "FAIL: compare.csv has $rows lines, expected 30"; failures=$((failures + 1)); }

check "alloc 20% slower" 1 $cmp --no-plots "$tmp/r-a" "$tmp/r-slow"
for size in 512 8192 131072 2097152 33554432 1073741824; do
    expect "alloc 20% slower, size $size" "size_bytes=$size +alloc_median_ns .* 1\.[12][0-9]* \[1\.[0-9]+, 1\.[0-9]+\] .* slower REGRESSION"
done
reject "alloc 20% slower" "free_median.*(slower|faster)"
expect "alloc 20% slower" "gpu0_sm_clock_mhz"
expect "alloc 20% slower" "WARNING: differs by more than 5%"
expect "alloc 20% slower" "regressed beyond 5%"

check "alloc 20% slower under a 50% threshold" 0 $cmp --no-plots --threshold 0.5 "$tmp/r-a" "$tmp/r-slow"
expect "alloc 20% slower under a 50% threshold" "slower"

check "faster" 0 $cmp --no-plots "$tmp/r-a" "$tmp/r-fast"
expect "faster" "alloc_median_ns .* faster"

check "more reserved memory" 1 $cmp --no-plots "$tmp/r-a" "$tmp/r-mem"
expect "more reserved memory" "peak_reserved_bytes .* worse REGRESSION"

check "single runs of one build" 0 $cmp --no-plots "$tmp/base" "$tmp/same"
expect "single runs of one build" "one repetition on at least one side"
expect "single runs of one build" "inconclusive \(the rank test needs >= 4 reps/side\)"
reject "single runs of one build" "slower|faster|REGRESSION"

check "single runs, 1.6x slower" 0 $cmp --no-plots "$tmp/base" "$tmp/slow"
expect "single runs, 1.6x slower" "driver +A: 580.159.04"
expect "single runs, 1.6x slower" "B: 590.10"
expect "single runs, 1.6x slower" "git_revision"
reject "single runs, 1.6x slower" "REGRESSION"

check "a short row" 0 $cmp --no-plots "$tmp/r-a" "$tmp/r-bad"
expect "a short row" "malformed row in B, not compared: rep-2/alloc_latency.plugin.csv: data row 7 has 3 fields"

check "missing folder" 2 $cmp "$tmp/r-a" "$tmp/nope"
check "bad option" 2 $cmp --threshold x "$tmp/r-a" "$tmp/r-b"
check "bad alpha" 2 $cmp --alpha 2 "$tmp/r-a" "$tmp/r-b"
mkdir -p "$tmp/empty"
check "empty folder" 2 $cmp "$tmp/r-a" "$tmp/empty"

if command -v gnuplot >/dev/null; then
    check "plots" 1 $cmp --out "$tmp/plots" "$tmp/r-a" "$tmp/r-slow"
    for png in compare.png strip-alloc_latency.png strip-random_churn.png overlay-alloc_latency.png; do
        [ -s "$tmp/plots/$png" ] || { echo "FAIL: no $png"; failures=$((failures + 1)); }
    done
fi

# The runners, on the simulated device (no GPU needed): bench.sh --repeat and scripts/ab.
if [ -x build/bin/replay ]; then
    check "bench.sh --repeat 2" 0 scripts/bench.sh --repeat 2 --only replay --out "$tmp/rep" --no-plots
    for f in rep-1/manifest.csv rep-2/manifest.csv rep-1/machine.txt summary.csv; do
        [ -s "$tmp/rep/$f" ] || { echo "FAIL: bench.sh --repeat wrote no $f"; failures=$((failures + 1)); }
    done
    if command -v gnuplot >/dev/null; then
        check "plots of a repeated run" 0 timeout 120 scripts/plots.sh "$tmp/rep"
        for f in plots/spread.png rep-1/plots/replay.png rep-2/plots/replay.png; do
            [ -s "$tmp/rep/$f" ] || { echo "FAIL: plots.sh wrote no $f for a repeated run"; failures=$((failures + 1)); }
        done
    fi
    check "bench.sh --repeat 0" 2 scripts/bench.sh --repeat 0 --out "$tmp/rep0"
    check "ab, A/A noise on sim" 0 scripts/ab --noise --pairs 4 --only random_churn --out "$tmp/ab" "alloc=caching"
    expect "ab, A/A noise on sim" "pair 4/4 \(B A\)"
    expect "ab, A/A noise on sim" "noise at 4 pairs"
    for f in A/rep-4/manifest.csv B/rep-1/manifest.csv compare/compare.csv noise.csv ab.txt; do
        [ -s "$tmp/ab/$f" ] || { echo "FAIL: ab wrote no $f"; failures=$((failures + 1)); }
    done
    check "ab, bad setting" 2 scripts/ab --pairs 2 "alloc" "alloc=caching"
    check "ab, unknown key" 2 scripts/ab --pairs 2 "color=red" "alloc=caching"
    check "ab, bad pairs" 2 scripts/ab --pairs 0 "alloc=raw" "alloc=caching"
else
    echo "SKIP-PART: build/bin not built: bench.sh --repeat and scripts/ab not exercised"
fi

if [ "$failures" -gt 0 ]; then
    echo "test-compare: $failures failure(s)"
    exit 1
fi
echo "test-compare: passed"
