#!/usr/bin/env bash
# The broken-allocator check (make test-broken-allocator): DIR/split/TEST is TEST linked
# against a caching allocator with a deliberate fault (overlapping blocks after a split),
# DIR/control/TEST the same link without it. The check passes only when every faulty
# build FAILS through its own assertions (cmocka's "[  FAILED  ]", not a crash alone)
# and every control build passes (so the failure is the fault's, not the link's).
#   tests/broken_allocator/run.sh DIR TEST...
cd "$(dirname "$0")/../.." || exit 2
[ $# -ge 2 ] || { echo "usage: $0 DIR TEST..." >&2; exit 2; }
dir=$1; shift
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
# Fewer random operations than `make test`'s own run: the fault shows within the first few.
export VL_PROPTEST_OPS=${VL_PROPTEST_OPS:-20000}
for t in "$@"; do
    check "$t, control build (no fault)" 0 timeout 120 "$dir/control/$t"
    timeout 120 "$dir/split/$t" >"$tmp/out" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        echo "FAIL: $t passed against an allocator that hands out overlapping blocks: the tests do not catch it"
        failures=$((failures + 1))
    elif [ "$rc" -ge 124 ]; then
        echo "FAIL: $t against the faulty allocator: exit $rc (timed out or killed), not a test failure"
        failures=$((failures + 1))
    else
        expect "$t catches the overlapping blocks with its own assertions" '^\[  FAILED  \] [0-9]+ test'
    fi
done
checks_report test-broken-allocator
[ "$failures" -eq 0 ]
