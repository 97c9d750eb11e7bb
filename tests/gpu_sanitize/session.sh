#!/usr/bin/env bash
# One reliability session on a GPU box, inside a fixed time budget, most important
# step first; each step's log goes to OUT (at most a handful of files):
#   1. build the programs and the thread test for one architecture;
#   2. make sanitize-gpu (tests/gpu_sanitize/run.sh): memcheck over every program, the
#      async_free_race bad-variant check, the caching allocator under threads;
#   3. the bad-input table with the GPU column (BAD_INPUT_GPU=1);
#   4. the CUDA tests built with ASan+UBSan (protect_shadow_gap=0), to check that the
#      sanitized build works against a real driver too.
# A step that would start after the budget is left out and said so.
#   usage: session.sh OUT [BUDGET_S] [CUDA_ARCH]     (e.g. session.sh "$OUT" 280 sm_90)
set -uo pipefail
out=${1:?usage: session.sh OUT [BUDGET_S] [CUDA_ARCH]}
budget=${2:-280}
arch=${3:-sm_90}
export PATH=$PATH:/usr/local/cuda/bin
left() { echo $((budget - SECONDS)); }
mkdir -p "$out"

echo "== build (${SECONDS}s)"
if ! make CUDA_ARCH="$arch" -j"$(nproc)" programs build/tests/test_threads_caching >"$out/build.log" 2>&1; then
    tail -n 30 "$out/build.log"
    exit 1
fi

echo "== sanitize-gpu ($SECONDS s)"
# Programs start until 60% of what is left is spent; each may run SANITIZE_TIMEOUT_S.
SANITIZE_BUDGET_S=$(($(left) * 6 / 10)) SANITIZE_TIMEOUT_S=${SANITIZE_TIMEOUT_S:-45} \
    make --no-print-directory CUDA_ARCH="$arch" sanitize-gpu GPU_SANITIZE_OUT=/tmp/sanitize-gpu 2>&1 |
    tee "$out/summary.txt"
tar czf "$out/sanitize-logs.tgz" -C /tmp sanitize-gpu

if [ "$(left)" -gt 40 ]; then
    echo "== bad-input on the GPU box ($SECONDS s)"
    BAD_INPUT_GPU=1 BAD_INPUT_TIMEOUT=30 timeout $(($(left) - 25)) tests/bad_input/run.sh build \
        >"$out/bad_input_gpu.log" 2>&1
    echo "bad-input exit $?"
    grep -E '^FAIL|^bad-input' "$out/bad_input_gpu.log" | head -n 40
else
    echo "bad-input on the GPU box: left out (time budget)"
fi

if [ "$(left)" -gt 60 ]; then
    echo "== CUDA tests under ASan+UBSan ($SECONDS s)"
    san_tests="build-san/tests/test_device_cuda build-san/tests/test_backends_gpu build-san/tests/test_threads_caching"
    # shellcheck disable=SC2086
    if timeout $(($(left) - 30)) make SAN=1 CUDA_ARCH="$arch" -j"$(nproc)" $san_tests >"$out/san_build.log" 2>&1; then
        for t in $san_tests; do
            ASAN_OPTIONS=detect_leaks=1:protect_shadow_gap=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
                VL_THREADS_OPS=1000 timeout 60 "$t" >>"$out/san_tests.log" 2>&1
            echo "$(basename "$t") under ASan on the GPU: exit $?, $(grep -cE 'ERROR: (Address|Leak)Sanitizer|runtime error' "$out/san_tests.log") sanitizer reports so far"
        done
        grep -E '^\[  (PASSED|FAILED|SKIPPED) \]' "$out/san_tests.log"
    else
        echo "ASan build: not finished in time or failed (san_build.log)"
    fi
else
    echo "CUDA tests under ASan: left out (time budget)"
fi
echo "== done (${SECONDS}s)"
