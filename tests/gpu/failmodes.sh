#!/usr/bin/env bash
# GPU-box run of the scenarios pinned_rounding, context_cost, cublas_workspace and
# stream_pools, in one go (about 6 minutes on an H100; at most 8): builds the programs
# for this GPU's architecture, runs the four with 5 repetitions (scripts/bench.sh
# --repeat 5: separate processes, interleaved order; rep-<k>/ folders with COMPLETE
# markers and summary.csv, from which findings rows are generated), runs their rows of
# the bad-input table with the GPU, and checks with awk that every bad variant shows
# its failure against its fixed one. One line per check: PASS / FAIL / NOTE.
#   usage: OUT=dir tests/gpu/failmodes.sh   (everything in OUT/failmodes; tar OUT)
#   env:   REPEAT (default 5), QUICK=1 (the --quick configuration), NO_BUILD=1
# Exit: 0 every check passed; 1 a check or a program failed; 77 no GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-results}/failmodes
repeat=${REPEAT:-5}
progs=pinned_rounding,context_cost,cublas_workspace,stream_pools
mkdir -p "$out"
start=$(date +%s)

nvidia-smi -L >/dev/null 2>&1 || { echo "failmodes: no GPU here (nvidia-smi lists none)"; exit 77; }
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
if [ "${NO_BUILD:-0}" != 1 ]; then
    echo "failmodes: building for sm_$cap ..."
    if ! make -j"$(nproc)" CUDA_ARCH="sm_$cap" programs >"$out/build.log" 2>&1; then
        tail -30 "$out/build.log"; echo "failmodes: the build failed (log: $out/build.log)"; exit 1
    fi
fi
echo "failmodes: built in $(($(date +%s) - start)) s"

# What the OS counts for pinned memory, as the driver on this box does it.
grep -E '^(VmLck|VmPin)' /proc/self/status >"$out/proc_status_baseline.txt" 2>&1

scripts/bench.sh --repeat "$repeat" --only "$progs" --out "$out/bench" --no-plots \
    $([ "${QUICK:-0}" = 1 ] && echo --quick) >"$out/bench.log" 2>&1
bench_rc=$?
tail -25 "$out/bench.log"
echo "failmodes: bench exit $bench_rc after $(($(date +%s) - start)) s"

BAD_INPUT_GPU=1 BAD_INPUT_ONLY=$progs BAD_INPUT_TIMEOUT=60 tests/bad_input/run.sh build >"$out/bad_input.log" 2>&1
bad_rc=$?
tail -3 "$out/bad_input.log"

# --- checks on the first repetition's CSVs, bad against fixed ----------------------------
passed=0 failed=0
check() { # LABEL AWK-PROGRAM FILE: the program prints one line and exits 0 (pass) or 1
    local label=$1 prog=$2 file=$3 line
    if [ ! -s "$file" ]; then echo "FAIL $label: no $file"; failed=$((failed + 1)); return; fi
    line=$(awk -F, "/^#/ { next } !h { for (i = 1; i <= NF; i++) c[\$i] = i; h = 1; next } $prog" "$file")
    if [ $? = 0 ]; then echo "PASS $label: $line"; passed=$((passed + 1)); else echo "FAIL $label: $line"; failed=$((failed + 1)); fi
}
rep=$out/bench/rep-1
check "pinned_rounding: pow2 pins more than exact" '
    $c["test"] == "hold" { r[$c["variant"]] = $c["held_over_requested"]; os[$c["variant"]] = $c["os_source"] }
    END { printf "held/requested pow2 %s exact %s register %s; OS counter: %s %s %s\n", r["pow2_cache"], r["exact_cache"],
          r["host_register"], os["pow2_cache"], os["exact_cache"], os["host_register"]; exit !(r["pow2_cache"] > r["exact_cache"]) }' \
    "$rep/pinned_rounding.default.csv"
check "context_cost: eager costs more than lazy" '
    $c["test"] == "context" && $c["status"] == "ok" { u[$c["variant"]] = $c["device_used_bytes"] / 1048576 }
    END { for (k in u) printf "%s %.0f MiB; ", k, u[k]; printf "\n"; exit !(u["eager+cublas"] > u["lazy+cublas"]) }' \
    "$rep/context_cost.default.csv"
# On cuBLAS 13.1 (H100) the cost is per handle, not per stream (a stream added ~0.6 MiB,
# a handle ~64 MiB), and cublasSetWorkspace did not lower a handle's own cost
# (results/reference/h100-failmodes-3fb4cb6): so the check is per handle, with
# CUBLAS_WORKSPACE_CONFIG as the fix, and the per-stream figures are printed.
check "cublas_workspace: CUBLAS_WORKSPACE_CONFIG lowers the cost per handle" '
    $c["test"] == "handles" && $c["status"] == "ok" { u[$c["variant"]] = $c["per_unit_bytes"]; n[$c["variant"]] = $c["count"] }
    $c["test"] == "streams" && $c["status"] == "ok" { s[$c["variant"]] = $c["device_used_bytes"] }
    END { printf "per handle at %d handles: default %.1f MiB, set_workspace %.1f MiB, env_config %.1f MiB; all streams: default %.1f MiB, set_workspace %.1f MiB, env_config %.1f MiB\n",
          n["default"], u["default"] / 1048576, u["set_workspace"] / 1048576, u["env_config"] / 1048576,
          s["default"] / 1048576, s["set_workspace"] / 1048576, s["env_config"] / 1048576; exit !(u["env_config"] < u["default"]) }' \
    "$rep/cublas_workspace.default.csv"
for f in "$rep"/stream_pools.*.csv; do
    [ -e "$f" ] || continue
    check "stream_pools $(basename "$f" .csv): reserved/requested, 8 streams" '
        { r[$c["variant"] "," $c["streams"]] = $c["reserved_over_requested"]; o[$c["variant"] "," $c["streams"]] = $c["ooms"]; m = $c["streams"] > m ? $c["streams"] : m }
        END { printf "per_stream %s (ooms %s) vs alloc_stream %s (ooms %s)\n", r["per_stream," m], o["per_stream," m], r["alloc_stream," m], o["alloc_stream," m]
              exit 0 }' "$f"
done
echo "failmodes: $passed passed, $failed failed; bench exit $bench_rc, bad-input exit $bad_rc; $(($(date +%s) - start)) s in all"
echo "failmodes: bring back $out (CSVs in $out/bench/rep-*/, summary in $out/bench/summary.csv)"
[ "$failed" = 0 ] && [ "$bench_rc" = 0 ] && [ "$bad_rc" = 0 ]
