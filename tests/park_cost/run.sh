#!/usr/bin/env bash
# Tests of scripts/park-cost (make test-park-cost, part of make test; no GPU), on the
# simulated device: one round over the fixed-shape language model's first steps
# (tests/fixtures/zoo/lm-fixed.trace) writes the pair and replay rows of both SPECs with
# and without parking, finds the same decisions in every pass (exit 0) and says so; a
# result folder that exists, no trace, a bad --rounds or an unknown argument is a usage
# error (exit 2) that writes nothing. And tests/gpu/allocator_verdict.sh, which measures
# the same on a GPU: an unknown part is a usage error (exit 2); without a GPU it says so in
# one line and exits 77.
set -u
cd "$(dirname "$0")/../.."
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
cost=scripts/park-cost
mkdir -p "$tmp/zoo" "$tmp/empty" && cp tests/fixtures/zoo/lm-fixed.trace "$tmp/zoo/"

check "one round" 0 $cost --traces "$tmp/zoo" --rounds 1 --quick --out "$tmp/o1"
expect "one round" 'decisions \(map calls, waste per pass\) equal with and without parking: yes'
expect "one round" 'caching:segments=expandable: lm-fixed [0-9.]+; median [0-9.]+'
rows() { grep -c "$2" "$tmp/o1/$1" || true; }
[ "$(rows replay.csv ',lm-fixed,')" = 12 ] && passes=$((passes + 1)) ||
    { echo "FAIL: replay.csv: $(rows replay.csv ',lm-fixed,') rows of lm-fixed, expected 12 (2 SPECs x park 0/1 x 3 passes)"; failures=$((failures + 1)); }
for park in 0 1; do
    n=$(awk -F, -v p=$park 'NR > 1 && $0 ~ /"caching",/ && $3 == p' "$tmp/o1/pair.csv" | wc -l)
    [ "$n" -ge 2 ] && passes=$((passes + 1)) ||
        { echo "FAIL: pair.csv: $n rows of classic with park=$park"; failures=$((failures + 1)); }
done
[ -s "$tmp/o1/conditions.txt" ] && grep -q 'not GPU time' "$tmp/o1/conditions.txt" && passes=$((passes + 1)) ||
    { echo "FAIL: conditions.txt does not say the times are not GPU times"; failures=$((failures + 1)); }

check "an existing result folder" 2 $cost --traces "$tmp/zoo" --rounds 1 --out "$tmp/o1"
expect "an existing result folder" 'exists: a result never overwrites another'
check "no trace" 2 $cost --traces "$tmp/empty" --out "$tmp/o2"
check "bad rounds" 2 $cost --traces "$tmp/zoo" --rounds 0 --out "$tmp/o3"
check "unknown argument" 2 $cost --traces "$tmp/zoo" --round 1 --out "$tmp/o4"
for o in o2 o3 o4; do
    [ ! -e "$tmp/$o" ] && passes=$((passes + 1)) || { echo "FAIL: a usage error wrote $o"; failures=$((failures + 1)); }
done

verdict=tests/gpu/allocator_verdict.sh
check "allocator_verdict: unknown part" 2 env OUT="$tmp/v1" $verdict pair bogus
expect "allocator_verdict: unknown part" "unknown part 'bogus'"
check "allocator_verdict: COLD_ROUNDS not a count" 2 env OUT="$tmp/v2" COLD_ROUNDS=x $verdict cold
expect "allocator_verdict: COLD_ROUNDS not a count" "COLD_ROUNDS must be a count, not 'x'"
skipped=0
if nvidia-smi -L >/dev/null 2>&1; then
    skipped=1 # with a GPU it would measure: left to the GPU runs
else
    check "allocator_verdict: no GPU" 77 env OUT="$tmp/v2" $verdict
    [ "$(wc -l <"$tmp/out")" = 1 ] && [ ! -e "$tmp/v2" ] && passes=$((passes + 1)) ||
        { echo "FAIL: allocator_verdict without a GPU: not one line, or it wrote $tmp/v2"; failures=$((failures + 1)); }
fi

checks_report test-park-cost $skipped
[ "$failures" -eq 0 ]
