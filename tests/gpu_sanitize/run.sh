#!/usr/bin/env bash
# `make sanitize-gpu`, for a GPU box: compute-sanitizer memcheck over the programs and
# the caching allocator under many host threads on the real device. Writes one log per
# run and a summary (OUT/summary.txt, also printed) with the figures:
#   1. test_threads_caching (its cuda tests): 8 threads + a trim thread allocate, fill,
#      check and free on their own streams; no overlapping block, no corrupted element,
#      device memory back after trim (cudaMemGetInfo);
#   2. every scenario, then every bench program, with --quick under
#      `compute-sanitizer --tool memcheck --leak-check full`: memcheck errors, device
#      allocations leaked (memcheck's leak check), and the program's own check that the
#      device got its memory back (vl_program_finish: cudaMemGetInfo before/after);
#   3. async_free_race on the async backend (its default): the bad variant
#      (no_dependency) must be caught, either by memcheck or by the scenario's own count
#      of corrupted elements; the fixed variants must count none.
# API errors are not reported (--report-api-errors no): the scenarios provoke OOMs on
# purpose, and every other CUDA error already fails the program (VL_CUDA_CHECK).
# The scenarios run their bad and fixed variants in one process (there is no option to
# pick one), so a memcheck error is attributed by kernel name in the summary; a program
# that has a --variant option is run with --variant fixed.
# Discovery: programs are whatever BUILD/bin holds; scenarios are those built from
# scenarios/*.c. Runs one program at a time (a neighbour would skew the leak check).
#   usage: run.sh BUILD OUT
#   env:   SANITIZE_TIMEOUT_S (per program, default 90), SANITIZE_BUDGET_S (no new run
#          starts after this many seconds, default 900), VL_THREADS_OPS (default 4000)
set -uo pipefail
build=${1:?usage: run.sh BUILD OUT}
out=${2:?usage: run.sh BUILD OUT}
per_prog=${SANITIZE_TIMEOUT_S:-90}
budget=${SANITIZE_BUDGET_S:-900}
sanitizer=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
[ -x "$sanitizer" ] || { echo "sanitize-gpu: compute-sanitizer not found (CUDA toolkit)" >&2; exit 1; }
nvidia-smi -L >/dev/null 2>&1 || { echo "sanitize-gpu: no CUDA device (skipped)" >&2; exit 77; }
mkdir -p "$out"
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
problems=0
start=$SECONDS

say "sanitize-gpu on $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -n 1)"
say "compute-sanitizer: $("$sanitizer" --version | grep -i version | head -n 1)"

# --- 1. the caching allocator under many host threads, on the real device -----------
threads_test=$build/tests/test_threads_caching
if [ -x "$threads_test" ]; then
    VL_THREADS_OPS=${VL_THREADS_OPS:-4000} timeout -k 10 300 "$threads_test" >"$out/test_threads_caching.log" 2>&1
    rc=$?
    grep -E '^caching.* on (cuda|sim)' "$out/test_threads_caching.log" | sed 's/^/  /' | tee -a "$summary"
    if [ $rc -ne 0 ]; then
        problems=$((problems + 1))
        say "threads: FAILED (exit $rc), see test_threads_caching.log"
        grep -E 'FAILED|ERROR|Failure|not returned|handed out twice' "$out/test_threads_caching.log" | head -n 8 | tee -a "$summary"
    elif grep -q 'SKIPPED \] test_threads_cuda' "$out/test_threads_caching.log"; then
        problems=$((problems + 1))
        say "threads: the cuda tests were skipped on a GPU box"
    else
        say "threads: ok"
    fi
else
    say "threads: $threads_test not built (needs cmocka: .deps/ or libcmocka-dev)"
fi

# --- 2. every program under memcheck --------------------------------------------------
scenarios=() benches=()
for bin in "$build"/bin/*; do
    [ -x "$bin" ] && [ -f "$bin" ] || continue
    name=$(basename "$bin")
    if [ -f "scenarios/$name.c" ]; then scenarios+=("$name"); else benches+=("$name"); fi
done
# async_free_race first: it is the one whose bad variant must be caught.
ordered=()
for n in "${scenarios[@]}"; do [ "$n" = async_free_race ] && ordered=("$n" "${ordered[@]}") || ordered+=("$n"); done
ordered+=("${benches[@]}")

# Arguments a program needs beyond --quick (an input of its own).
extra_args() {
    case $1 in
    replay) echo "--trace tests/fixtures/parse/training.torch.csv" ;;
    esac
}

# The bad/fixed corruption counts of async_free_race's CSV: "role corrupted_trials trials".
corruption_by_role() {
    awk -F, '/^#/ {next} !h {for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next}
             {t[$col["role"]] += $col["trials"]; c[$col["role"]] += $col["corrupted_trials"];
              e[$col["role"]] += $col["corrupted_elements"]}
             END {for (r in t) printf "%s: %d of %d trials corrupted (%d elements)\n", r, c[r], t[r], e[r]}' "$1"
}

not_run=()
for name in "${ordered[@]}"; do
    if [ $((SECONDS - start)) -ge "$budget" ]; then
        not_run+=("$name")
        continue
    fi
    bin=$build/bin/$name
    # shellcheck disable=SC2207
    args=(--quick -o "$out/$name.csv" $(extra_args "$name"))
    "$bin" --help 2>/dev/null | grep -q -- '--variant ' && args+=(--variant fixed)
    t0=$SECONDS
    timeout -k 10 "$per_prog" "$sanitizer" --tool memcheck --leak-check full --target-processes all \
        --report-api-errors no --print-limit 20 --error-exitcode 99 --log-file "$out/$name.memcheck.log" \
        "$bin" "${args[@]}" >"$out/$name.stdout" 2>"$out/$name.stderr" </dev/null
    rc=$?
    secs=$((SECONDS - t0))
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$out/$name.memcheck.log" | awk '{s += $1} END {print s + 0}')
    leaked=$(grep -cE 'Leaked [0-9]+ bytes' "$out/$name.memcheck.log")
    own_leak=$(grep -c 'device memory not returned' "$out/$name.stderr")
    # The kernel of each error: memcheck's "at KERNEL(args)+0x.. in FILE:LINE" lines.
    kernels=$(sed -n 's/^=* *at \([A-Za-z_][A-Za-z_0-9:]*\).*/\1/p' "$out/$name.memcheck.log" |
        sort | uniq -c | sort -rn | head -n 3 | awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}')
    status=ok
    case $rc in
    0) ;;
    77) status="skipped (77)" ;;
    99) status="memcheck errors" ;;
    124 | 137) status="timeout after ${per_prog}s" ;;
    *) status="exit $rc" ;;
    esac
    line="$name: $status, ${secs}s, memcheck errors $errors, device allocations leaked $leaked, program leak check $([ "$own_leak" -gt 0 ] && echo FAILED || echo ok)"
    [ -n "$kernels" ] && line+=" (errors in: $kernels)"
    say "$line"
    [ -s "$out/$name.stderr" ] && [ "$rc" -ne 0 ] && sed -n '1,3s/^/    stderr: /p' "$out/$name.stderr" | tee -a "$summary"

    if [ "$name" = async_free_race ] && [ -s "$out/$name.csv" ]; then
        corruption_by_role "$out/$name.csv" | sed 's/^/    /' | tee -a "$summary"
        bad=$(corruption_by_role "$out/$name.csv" | sed -n 's/^bad: \([0-9]*\) of.*/\1/p')
        fixed=$(corruption_by_role "$out/$name.csv" | sed -n 's/^fixed: \([0-9]*\) of.*/\1/p')
        if [ "${fixed:-0}" -gt 0 ]; then
            problems=$((problems + 1)); say "    async_free_race: a FIXED variant corrupted data"
        fi
        if [ "$errors" -eq 0 ] && [ "${bad:-0}" -eq 0 ]; then
            problems=$((problems + 1)); say "    async_free_race: the bad variant was caught neither by memcheck nor by the scenario"
        else
            say "    async_free_race: bad variant caught ($([ "$errors" -gt 0 ] && echo "memcheck: $errors errors")$([ "$errors" -gt 0 ] && [ "${bad:-0}" -gt 0 ] && echo ', ')$([ "${bad:-0}" -gt 0 ] && echo "scenario: $bad corrupted trials"))"
        fi
    elif [ "$rc" -ne 0 ]; then
        problems=$((problems + 1)) # 77 too: on a GPU box every program must run

    fi
    if [ "$leaked" -gt 0 ] || [ "$own_leak" -gt 0 ]; then
        [ "$rc" -eq 0 ] && problems=$((problems + 1))
        grep -E 'Leaked [0-9]+ bytes' "$out/$name.memcheck.log" | head -n 3 | sed 's/^/    /' | tee -a "$summary"
    fi
done
[ ${#not_run[@]} -gt 0 ] && say "not run (time budget ${budget}s spent): ${not_run[*]}"
say "sanitize-gpu: $((SECONDS - start))s, $problems problem(s)"
[ $problems -eq 0 ]
