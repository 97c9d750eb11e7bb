#!/usr/bin/env bash
# `make test`'s runner: every cmocka test binary in BUILD/tests and every script suite
# that areas register in mk/*.mk (TEST_EXTRA_TARGETS), run in parallel (JOBS at a time,
# default: every core), each into its own log. Then, in a fixed order, one line per
# program with its own counts, the reason of each skip, the log of each failure, and one
# closing line: "tests: N passed, N failed, N skipped", after the five slowest items.
#
# Counts: a cmocka binary's from its summary; a script suite's from its last line of the
# form "... P passed, F failed, S skipped" (tests/support/checks.sh writes one). A suite
# that reports no counts counts as one, and says so. A suite skips by exiting 77 (make
# then reports "Error 77") or by ending with a line "SKIP ...". A program that dies
# before its summary (crash, timeout: TEST_TIMEOUT seconds, default 600) is a failure.
# On a machine with a GPU, the items that test the GPU itself (GPU_EXCLUSIVE: they fill
# the device, measure device-wide free memory or time kernels) run first, one at a time,
# never beside any other item (run beside each other they saw each other's memory: a
# leak check fired, cuBLAS found no memory); then the rest, JOBS at a time. One at a
# time they are the critical path, so they start first. The slowest line gives each
# item's own run time.
# Usage: scripts/run-tests.sh [--targets-only] BUILD_DIR [extra-target ...]
#   --targets-only  the named suites alone, no test binaries (make test-heavy)
#   VL_TEST_GPU=1|0 runs as on a machine with a GPU or without one (default: nvidia-smi)
set -u
binaries=1
[ "${1:-}" = --targets-only ] && { binaries=0; shift; }
build=${1:?usage: run-tests.sh [--targets-only] BUILD_DIR [extra-target ...]}
shift
jobs=${JOBS:-$(nproc)}
timeout_s=${TEST_TIMEOUT:-600}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# Each tests the GPU path itself. Not here: test_oom_report (the simulated device alone)
# and the tooling suites (test-peer-tables, test-compare, test-failmodes,
# test_untrusted_input), whose programs are shown no GPU, as in CI.
#   test_backends_gpu, test_device_cuda: fill the device, compare device-wide free memory
#   test_threads_caching: device-wide free memory after trim (its sim part takes <1 s)
#   test_torch_plugin: the plugin's allocations on the device (its argument checks take <1 s)
#   test_scenario_b_stall_probe: a busy kernel's device time
#   test-gpu-torch: PyTorch training on both allocators
GPU_EXCLUSIVE=" test_backends_gpu test_device_cuda test_threads_caching test_torch_plugin test_scenario_b_stall_probe test-gpu-torch "
gpu=${VL_TEST_GPU:-}
if [ -z "$gpu" ]; then
    gpu=0
    command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU' && gpu=1
fi

items=()
for t in "$build"/tests/test_*; do
    [ "$binaries" = 1 ] && [ -x "$t" ] && items+=("bin $t")
done
for target in "$@"; do items+=("make $target"); done
first=() rest=() # the run order: GPU_EXCLUSIVE items first; the report keeps the order of items
for item in "${items[@]}"; do
    case "$GPU_EXCLUSIVE" in *" $(basename "${item#* }") "*) first+=("$item") ;; *) rest+=("$item") ;; esac
done

# run_one KIND WHAT: runs one item, its output into $logs/NAME.log, its status into
# NAME.rc, its run time in seconds into NAME.secs.
run_one() {
    local kind=$1 what=$2 name start=$SECONDS
    name=$(basename "$what")
    if [ "$kind" = bin ]; then
        timeout "$timeout_s" "$what" >"$logs/$name.log" 2>&1
    else
        timeout "$timeout_s" make --no-print-directory "$what" >"$logs/$name.log" 2>&1
    fi
    echo $? >"$logs/$name.rc"
    echo $((SECONDS - start)) >"$logs/$name.secs"
}
run_all() { # PARALLEL ITEM...
    local p=$1
    shift
    [ $# -gt 0 ] && printf '%s\n' "$@" | xargs -P "$p" -L 1 bash -c 'run_one "$0" "$1"'
}
export -f run_one
export logs timeout_s
# With a GPU: two phases, not a shared/exclusive lock (flock grants a shared lock while
# an exclusive one waits, so the GPU items waited behind the rest and ran last).
phases=
if [ "$gpu" = 1 ]; then
    start=$SECONDS
    run_all 1 "${first[@]}"
    gpu_secs=$((SECONDS - start)) start=$SECONDS
    run_all "$jobs" "${rest[@]}"
    phases="one at a time (GPU): ${#first[@]} items, $gpu_secs s; then ${#rest[@]} items, $jobs at a time: $((SECONDS - start)) s"
else
    run_all "$jobs" "${first[@]}" "${rest[@]}"
fi

cmocka_count() { # LOG WORD: the N of cmocka's "[  WORD  ] N test(s)"
    grep -E "^\[  $2 *\] [0-9]+ test\(s\)" "$1" | tail -1 | sed -E 's/^\[[^]]*\] ([0-9]+).*/\1/'
}
skip_reasons() { # LOG: "name: the line the test printed before skipping" per skipped test
    awk '/^\[ RUN +\] / { name = $NF; why = ""; next }
         /^\[  SKIPPED \] [a-z_0-9]+$/ { if (name == $NF && !seen[name]++) print "    skipped " name (why == "" ? "" : ": " why); next }
         !/^\[/ { why = $0 }' "$1"
}

passed=0 failed=0 skipped=0
failures=()
for item in "${items[@]}"; do
    kind=${item%% *} what=${item#* }
    name=$(basename "$what")
    log=$logs/$name.log
    rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 1)
    note=
    if [ "$kind" = bin ]; then
        p=$(cmocka_count "$log" PASSED) f=$(cmocka_count "$log" FAILED) s=$(cmocka_count "$log" SKIPPED)
        p=${p:-0} f=${f:-0} s=${s:-0}
        [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && { f=1; note="died before its summary (exit $rc)"; }
        label=$name
    else
        label="make $name"
        counts=$(grep -E '[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1 |
            sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
        if { [ "$rc" -ne 0 ] && grep -q '\] Error 77' "$log"; } || { [ "$rc" -eq 0 ] && tail -1 "$log" | grep -q '^SKIP'; }; then
            rc=77
        fi
        if [ -n "$counts" ]; then
            read -r p f s <<<"$counts"
            [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ "$f" -eq 0 ] && { f=1; note="exit $rc"; }
        else
            case $rc in
            0) p=1 f=0 s=0; note="(reports no counts: counted as one)" ;;
            77) p=0 f=0 s=1; note="skipped: $(tail -1 "$log")" ;;
            *) p=0 f=1 s=0; note="exit $rc" ;;
            esac
        fi
    fi
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    if [ "$f" -gt 0 ]; then
        failures+=("$label")
        echo "---- $label FAILED${note:+: $note} ----"
        tail -60 "$log"
    else
        printf '%-40s %3d passed, %d skipped%s\n' "$label" "$p" "$s" "${note:+ $note}"
        [ "$kind" = bin ] && skip_reasons "$log"
    fi
done

# The slowest items, where the time of a run goes (a newcomer's `make test` should be short).
slowest=$(for f in "$logs"/*.secs; do [ -e "$f" ] && echo "$(cat "$f") $(basename "$f" .secs)"; done |
    sort -rn | head -5 | awk '{ printf "%s%s ran %d s", (NR > 1 ? ", " : ""), $2, $1 }')
[ -n "$slowest" ] && echo "slowest: $slowest"
[ -n "$phases" ] && echo "$phases"
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
