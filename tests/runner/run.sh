#!/usr/bin/env bash
# Tests of scripts/run-tests.sh (make test-runner, part of make test): on stand-in test
# programs, the closing line sums each program's own counts (not one per program), a
# program that dies before its summary is a failure, a suite's "P passed, F failed,
# S skipped" line is read, a suite without counts is said to count as one, the reason a
# test printed before skipping is shown, and the programs run in parallel; with a GPU
# (VL_TEST_GPU=1) the GPU_EXCLUSIVE items run first, one at a time, and the slowest line
# gives each item's own run time, not its wait.
set -u
cd "$(dirname "$0")/../.."
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
mkdir -p "$tmp/build/tests"

stand_in() { # NAME BODY: an executable stand-in test program
    printf '#!/usr/bin/env bash\n%s\n' "$2" >"$tmp/build/tests/$1"
    chmod +x "$tmp/build/tests/$1"
}
cmocka_out() { # PASSED SKIPPED: a cmocka-like log, one skip with a reason
    echo "[==========] Running 3 test(s)."
    echo "[ RUN      ] test_gpu_thing"
    echo "no GPU found (no CUDA driver / device): stand-in"
    echo "[  SKIPPED ] test_gpu_thing"
    echo "[  PASSED  ] $1 test(s)."
    echo "[  SKIPPED ] $2 test(s), listed below:"
    echo "[  SKIPPED ] test_gpu_thing"
}
stand_in test_a "$(declare -f cmocka_out); cmocka_out 5 1; sleep 1"
stand_in test_b "$(declare -f cmocka_out); cmocka_out 7 1; sleep 1"

check "two programs: counts summed" 0 env VL_TEST_GPU=0 JOBS=2 scripts/run-tests.sh "$tmp/build"
expect "two programs: counts summed" "^tests: 12 passed, 0 failed, 2 skipped$"
expect "two programs: skip reason" "skipped test_gpu_thing: no GPU found \(no CUDA driver / device\): stand-in"
# Two programs of one second each, two at a time: well under their serial two seconds.
start=$(date +%s.%N)
VL_TEST_GPU=0 JOBS=2 scripts/run-tests.sh "$tmp/build" >/dev/null 2>&1
elapsed=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
if awk -v e="$elapsed" 'BEGIN { exit !(e < 1.8) }'; then passes=$((passes + 1)); else
    echo "FAIL: two 1 s programs with JOBS=2 took $elapsed s (not in parallel)"; failures=$((failures + 1))
fi

stand_in test_c 'echo "[==========] Running 2 test(s)."; echo "[ RUN      ] test_x"; kill -SEGV $$'
check "a crash before the summary" 1 env VL_TEST_GPU=0 JOBS=2 scripts/run-tests.sh "$tmp/build"
expect "a crash before the summary" "test_c FAILED: died before its summary"
expect "a crash before the summary" "^tests: 12 passed, 1 failed, 2 skipped$"
rm "$tmp/build/tests/test_c"

# With a GPU: two stand-ins under names of GPU_EXCLUSIVE run first, one at a time, then
# the other two beside each other; each logs its start and end.
order=$tmp/order
for t in test_a test_b test_device_cuda test_backends_gpu; do
    stand_in $t "echo start $t >>'$order'; sleep 1; echo end $t >>'$order'; echo '[  PASSED  ] 1 test(s).'"
done
: >"$order"
check "GPU items first" 0 env VL_TEST_GPU=1 JOBS=4 scripts/run-tests.sh "$tmp/build"
expect "GPU items first" "^tests: 4 passed, 0 failed, 0 skipped$"
expect "GPU items first: run times, not waits" "^slowest: (test_[a-z_]+ ran [12] s(, |$)){4}"
expect "GPU items first: the phases" "^one at a time \(GPU\): 2 items, [2-4] s; then 2 items, 4 at a time: [12] s$"
if [ "$(sed -n 1,4p "$order" | awk '{ print $2 }' | uniq -c | awk '{ print $1 }' | tr -d '\n')" = 22 ] &&
    ! sed -n 1,4p "$order" | grep -q 'test_[ab]$'; then
    passes=$((passes + 1))
else
    echo "FAIL: GPU items first: not one at a time, before the rest:"; sed 's/^/    /' "$order"; failures=$((failures + 1))
fi
: >"$order"
start=$(date +%s.%N)
check "no GPU: all at once" 0 env VL_TEST_GPU=0 JOBS=4 scripts/run-tests.sh "$tmp/build"
elapsed=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
reject "no GPU: all at once" "one at a time"
if awk -v e="$elapsed" 'BEGIN { exit !(e < 1.8) }'; then passes=$((passes + 1)); else
    echo "FAIL: four 1 s programs with JOBS=4 and no GPU took $elapsed s"; failures=$((failures + 1))
fi
rm "$tmp/build/tests/"test_*

# Script suites through make: counted from their count line, or as one when they have none.
cat >"$tmp/Makefile" <<'MK'
suite-counts:
	@echo "some checks: 9 passed, 0 failed, 2 skipped"
suite-plain:
	@echo done
suite-skip:
	@echo "SKIP suite-skip: no widget here"
suite-fails:
	@echo "some checks: 3 passed, 1 failed, 0 skipped"; exit 1
MK
runner=$PWD/scripts/run-tests.sh
check "suites" 1 bash -c "cd '$tmp' && JOBS=2 '$runner' --targets-only build suite-counts suite-plain suite-skip suite-fails"
expect "suites" "^tests: 13 passed, 1 failed, 3 skipped$"
expect "suites" "suite-plain .*reports no counts: counted as one"
expect "suites" "suite-skip .*SKIP suite-skip: no widget here"
expect "suites" "make suite-fails FAILED"
reject "suites" "test_a"

checks_report "run-tests checks"
[ "$failures" = 0 ]
