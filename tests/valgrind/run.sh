#!/usr/bin/env bash
# Runs every cmocka test of BUILD/tests, then every program that runs on the simulated
# device (--device sim --quick), under valgrind memcheck (the plain build: valgrind and
# ASan do not mix). Without a GPU the CUDA tests skip themselves, so this covers the
# host-only and simulated-device code. A memcheck error or a definite /
# indirect leak fails the run (--error-exitcode=1); each test's log is kept in
# BUILD/valgrind/NAME.log. The randomized tests run fewer operations here (memcheck is
# ~30x slower, and the property test checks the whole allocator after every operation:
# 6,000 operations over its configurations; 12,000 took 10 minutes of a loaded 2-core
# machine); their full-size runs are in `make test` and `make test-san`.
# The runs go VALGRIND_JOBS at a time (default: every core), each reported when done.
#   usage: run.sh BUILD "VALGRIND COMMAND WITH FLAGS"
set -uo pipefail
build=${1:?usage: run.sh BUILD VALGRIND-COMMAND}
valgrind_cmd=${2:?usage: run.sh BUILD VALGRIND-COMMAND}
command -v "${valgrind_cmd%% *}" >/dev/null || { echo "valgrind: not installed (apt-get install valgrind)" >&2; exit 1; }
logs=$build/valgrind
mkdir -p "$logs"

export VL_PROPTEST_OPS=${VL_PROPTEST_OPS:-6000} VL_THREADS_OPS=${VL_THREADS_OPS:-2000}
# Every 8th call of the fault sweep (and the last): the whole sweep takes ~3 minutes
# under memcheck; make test and make test-san run every call.
export VL_FAULT_SWEEP_STRIDE=${VL_FAULT_SWEEP_STRIDE:-8}
jobs_max=${VALGRIND_JOBS:-$(nproc)}
# check NAME COMMAND...: in the background, JOBS at a time; a failure leaves LOGS/NAME.failed.
check() {
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    rm -f "$logs/$1.failed"
    check_one "$@" &
}

# Runs one command under memcheck and reports it in one line; the log is LOGS/NAME.log.
check_one() { # name command...
    local name=$1 rc errors definite
    shift
    # shellcheck disable=SC2086 # the valgrind command is a program and its flags
    timeout 1200 $valgrind_cmd --log-file="$logs/$name.log" "$@" >"$logs/$name.out" 2>&1 </dev/null
    rc=$?
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$logs/$name.log" | tail -n 1)
    definite=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$logs/$name.log" | tail -n 1)
    if [ $rc -ne 0 ]; then
        touch "$logs/$name.failed"
        echo "valgrind $*: FAILED (exit $rc, ${errors:-?} errors, definitely lost ${definite:-0} bytes); log $logs/$name.log"
        grep -E '^==[0-9]+== (Invalid|Conditional|Use of|Syscall|Mismatched|Source and dest|[0-9,]+ bytes in)' "$logs/$name.log" |
            head -n 5
        tail -n 3 "$logs/$name.out"
    else
        echo "valgrind $*: clean (${errors:-0} errors, definitely lost ${definite:-0} bytes)"
    fi
}

for t in "$build"/tests/test_*; do
    [ -x "$t" ] && check "$(basename "$t")" "$t"
done

# The programs that run on the simulated device, end to end (--quick): the same frame,
# CLI, CSV and allocator code as on a GPU, minus the device. A program that needs a
# real GPU refuses --device sim with a usage error and is left out.
trace=tests/fixtures/parse/small.vramlab
for bin in "$build"/bin/*; do
    [ -x "$bin" ] && [ -f "$bin" ] || continue
    name=$(basename "$bin")
    "$bin" --device sim -o /nonexistent-dir/probe.csv >/dev/null 2>"$logs/$name.probe" </dev/null
    grep -q "needs a real GPU" "$logs/$name.probe" && continue
    help=$("$bin" --help)
    args=(--device sim:capacity=16GiB --quick -o "$logs/$name.csv")
    [[ $help == *"--alloc SPEC"* ]] && args+=(--alloc caching)
    [[ $help == *"--trace "* ]] && args+=(--trace "$trace")
    check "$name" "$bin" "${args[@]}"
done

wait
failed=()
for f in "$logs"/*.failed; do [ -e "$f" ] && failed+=("$(basename "$f" .failed)"); done
if [ ${#failed[@]} -gt 0 ]; then
    echo "valgrind: ${#failed[@]} failing: ${failed[*]}" >&2
    exit 1
fi
