#!/usr/bin/env bash
# Runs every cmocka test binary in BUILD/tests, then the extra test targets that
# areas register in mk/*.mk (TEST_EXTRA_TARGETS; exit 0 = passed; exit 77, or a last
# line starting with SKIP, = skipped),
# and prints one closing line: "tests: N passed, N failed, N skipped".
# Usage: scripts/run-tests.sh BUILD_DIR [extra-target ...]
set -u
build=${1:?usage: run-tests.sh BUILD_DIR [extra-target ...]}
shift
passed=0 failed=0 skipped=0
failures=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count() { # the N in "[  WORD  ] N test(s)" of cmocka's summary
    grep -E "^\[  $1 *\] [0-9]+ test\(s\)" "$log" | tail -1 | sed -E 's/^\[[^]]*\] ([0-9]+).*/\1/'
}

for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    timeout 600 "$t" >"$log" 2>&1
    rc=$?
    p=$(count PASSED); f=$(count FAILED); s=$(count SKIPPED)
    p=${p:-0} f=${f:-0} s=${s:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1 # crashed, timed out or died before its summary
    fi
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    if [ "$f" -gt 0 ]; then
        failures+=("$name")
        echo "---- $name FAILED (exit $rc) ----"
        cat "$log"
    else
        printf '%-40s %3d passed, %d skipped\n' "$name" "$p" "$s"
        grep -E '^\[  SKIPPED \] [a-z_0-9]+$' "$log" | awk '!seen[$0]++' | sed 's/^/    /'
    fi
done

for target in "$@"; do
    make --no-print-directory "$target" >"$log" 2>&1
    rc=$?
    # A target skips by exiting 77 (make then reports "Error 77") or by ending with "SKIP ...".
    if { [ "$rc" -ne 0 ] && grep -q '\] Error 77' "$log"; } || { [ "$rc" -eq 0 ] && tail -1 "$log" | grep -q '^SKIP'; }; then
        rc=77
    fi
    case $rc in
    0) passed=$((passed + 1)); printf '%-40s passed\n' "make $target" ;;
    77) skipped=$((skipped + 1)); printf '%-40s skipped: %s\n' "make $target" "$(tail -1 "$log")" ;;
    *) failed=$((failed + 1)); failures+=("make $target"); echo "---- make $target FAILED (exit $rc) ----"; tail -40 "$log" ;;
    esac
done

[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
