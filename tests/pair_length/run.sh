#!/usr/bin/env bash
# make test-pair-length (part of make test; no GPU): the caching allocator's cache-hit
# alloc+free pair stays short, counted in instructions by valgrind's callgrind (the same
# count on any machine with the same compiler, unlike a time): tests/pair_length/pair_loop
# runs 0 and N pairs under each SPEC, and (count(N) - count(0)) / N must stay within
# MAX_PAIR_INSTRUCTIONS. A skip, said so, without valgrind or under sanitizers.
#   tests/pair_length/run.sh PAIR_LOOP [san]
set -u
cd "$(dirname "$0")/../.."
. tests/support/checks.sh
loop=$1
MAX_PAIR_INSTRUCTIONS=250 # this loop: 191 for both SPECs with the inline pair (lib/caching/fast.h), ~407 before it
N=100000
if [ "${2:-}" = san ] || ! command -v valgrind >/dev/null; then
    echo "SKIP test-pair-length: $([ "${2:-}" = san ] && echo "a sanitized build, which valgrind cannot run" ||
        echo "no valgrind (apt-get install valgrind)")"
    checks_report test-pair-length 1
    exit 0
fi
# instructions SPEC PAIRS: the program's whole count, from callgrind's summary line
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$loop" "$1" "$2" 2>&1 |
        awk '/Collected :/ { print $NF; found = 1 } END { exit !found }'
}
for spec in caching caching:segments=expandable; do
    if ! base=$(instructions "$spec" 0) || ! full=$(instructions "$spec" $N); then
        echo "FAIL: $spec: valgrind gave no instruction count"; failures=$((failures + 1)); continue
    fi
    per=$(((full - base) / N))
    if [ "$per" -gt 0 ] && [ "$per" -le $MAX_PAIR_INSTRUCTIONS ]; then
        passes=$((passes + 1))
        echo "test-pair-length: $spec: $per instructions a pair (at most $MAX_PAIR_INSTRUCTIONS)"
    else
        echo "FAIL: $spec: $per instructions a pair, more than $MAX_PAIR_INSTRUCTIONS (or none)"; failures=$((failures + 1))
    fi
done
check "pair_loop refuses a bad count" 2 "$loop" caching -1
checks_report test-pair-length
[ "$failures" -eq 0 ]
