#!/usr/bin/env bash
# Tests of scripts/compare on synthetic results folders (tests/compare/make-runs.py):
# same build -> everything "same", exit 0; a slowed allocator -> "slower", REGRESSION,
# metadata differences printed, exit 1; an improvement -> "faster", exit 0; more
# reserved memory -> "worse", exit 1; usage errors -> exit 2. Run by `make test-compare`.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 tests/compare/make-runs.py "$tmp" || { echo "FAIL: make-runs.py"; exit 1; }
failures=0
check() { # description, expected exit code, command... ; output in $tmp/out
    local what=$1 want=$2
    shift 2
    "$@" >"$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $what: exit $rc, expected $want"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1))
    fi
}
expect() { # description, pattern that must appear in $tmp/out
    grep -qE -- "$2" "$tmp/out" || { echo "FAIL: $1: no '$2' in:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1)); }
}
reject() { # description, pattern that must not appear
    ! grep -qE -- "$2" "$tmp/out" || { echo "FAIL: $1: unexpected '$2' in:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1)); }
}
cmp=scripts/compare

check "same build" 0 $cmp --no-plots "$tmp/base" "$tmp/same"
expect "same build" "0 shown"
expect "same build" "metadata: the same"
expect "same build" "no regression"
reject "same build" "slower|faster|REGRESSION"
[ -s "$tmp/compare-base-vs-same/compare.csv" ] || { echo "FAIL: no compare.csv"; failures=$((failures + 1)); }
rows=$(grep -vc '^#' "$tmp/compare-base-vs-same/compare.csv")
# 3 sizes x (alloc, free medians + first_alloc + ooms) + churn (allocs, batch_op, 2 peaks) + 2 x kernels + hyperfine + header = 20
[ "$rows" -eq 20 ] || { echo "FAIL: compare.csv has $rows lines, expected 20"; failures=$((failures + 1)); }

check "slowed allocator" 1 $cmp --no-plots "$tmp/base" "$tmp/slow"
expect "slowed allocator" "driver +A: 580.159.04"
expect "slowed allocator" "B: 590.10"
expect "slowed allocator" "git_revision"
expect "slowed allocator" "size_bytes=512 +alloc_median_ns +47000 +75200 +1.600 +iqr +slower REGRESSION"
expect "slowed allocator" "kernels_median_per_s .* slower REGRESSION"
expect "slowed allocator" "alloc_latency --alloc raw --quick +wall_median_s .* slower REGRESSION"
expect "slowed allocator" "regressed beyond 5%"
reject "slowed allocator" "free_median.*slower"

check "slowed allocator under a huge threshold" 0 $cmp --no-plots --threshold 10 "$tmp/base" "$tmp/slow"
expect "slowed allocator under a huge threshold" "slower"

check "improvement" 0 $cmp --no-plots "$tmp/base" "$tmp/faster"
expect "improvement" "alloc_median_ns .* faster"

check "more reserved memory" 1 $cmp --no-plots "$tmp/base" "$tmp/mem"
expect "more reserved memory" "peak_reserved_bytes .* exact +worse REGRESSION"

check "missing folder" 2 $cmp "$tmp/base" "$tmp/nope"
check "bad option" 2 $cmp --threshold x "$tmp/base" "$tmp/same"
mkdir -p "$tmp/empty"
check "empty folder" 2 $cmp "$tmp/base" "$tmp/empty"

if command -v gnuplot >/dev/null; then
    check "plots" 1 $cmp --out "$tmp/plots" "$tmp/base" "$tmp/slow"
    [ -s "$tmp/plots/compare.png" ] || { echo "FAIL: no compare.png"; failures=$((failures + 1)); }
    [ -s "$tmp/plots/overlay-alloc_latency.png" ] || { echo "FAIL: no overlay-alloc_latency.png"; failures=$((failures + 1)); }
fi

if [ "$failures" -gt 0 ]; then
    echo "test-compare: $failures failure(s)"
    exit 1
fi
echo "test-compare: passed"
