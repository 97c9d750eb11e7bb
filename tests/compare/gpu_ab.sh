#!/usr/bin/env bash
# The comparison's acceptance runs on a GPU box (the device tool's `run`), in steps that
# each fit one call. Results go to $OUT/<step>.tgz; a table of the trials is printed last.
#   build                 programs, the slow_alloc plugin, torch_alloc_compare (sm_90)
#   aa TRIALS PAIRS       A/A: scripts/ab --noise on alloc_latency --quick through the
#                         slow_alloc plugin with SLOW_ALLOC_NS=0, TRIALS times
#   slow TRIALS PAIRS     A/B: the same against SLOW_ALLOC_NS=150 (about +20% per alloc)
#   noise PAIRS           make noise QUICK=1 over the benchmarks, all four allocators
#   repeat N              make bench QUICK=1 REPEAT=N (the whole suite; its cost)
#   torch REPS            torch_alloc_compare REPS times interleaved with alloc_latency caching/async
#   abrev REV PAIRS       the caching allocator of git revision REV against this tree's
#                         (make ab A='rev=REV alloc=caching' B='alloc=caching' QUICK=1,
#                         ONLY=alloc_latency,random_churn)
#   test                  make test (the GPU tests run here)
#   bench                 make bench QUICK=1 (every program once)
# Usage: OUT=DIR VL_GIT_REV=<the revision> tests/compare/gpu_ab.sh STEP [ARGS] [STEP [ARGS] ...]
# VL_GIT_REV is required: the box's copy of .git may not be the revision that runs.
set -u
cd "$(dirname "$0")/../.."
[ -n "${VL_GIT_REV:-}" ] || { echo "gpu_ab.sh: set VL_GIT_REV to the revision being run" >&2; exit 2; }
export VL_GIT_REV CUDA_ARCH=sm_90
OUT=${OUT:-/tmp/vl-out}
mkdir -p "$OUT" results
PLUGIN=build/lib/libslow_alloc.so
trial_table() { # folder...: one line per trial: exit, same share, alloc sizes slower, free slower
    local d
    for d in "$@"; do
        [ -f "$d/compare/compare.csv" ] || { echo "$d: no compare.csv"; continue; }
        awk -F, -v d="$(basename "$d")" -v rc="$(cat "$d/rc" 2>/dev/null)" '
            /^#/ || $1 == "index" { next }
            { n++; if ($(NF-1) == "same") same++ }
            $5 == "alloc_median" { sizes++; if ($(NF-1) == "slower") aslow++ }
            $5 == "free_median" && $(NF-1) == "slower" { fslow++ }
            END { printf "%-28s exit %s  metrics %3d  same %5.1f%%  alloc slower %d/%d  free slower %d\n",
                         d, rc, n, 100 * same / n, aslow, sizes, fslow }' "$d/compare/compare.csv"
    done
}
while [ $# -gt 0 ]; do
    step=$1; shift
    t0=$(date +%s)
    case $step in
    build)
        make CUDA_ARCH=sm_90 -j"$(nproc)" programs "$PLUGIN" >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
        make CUDA_ARCH=sm_90 torch-compare >>"$OUT/build.log" 2>&1 || echo "torch-compare: failed (see build.log)"
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,persistence_mode --format=csv,noheader
        ;;
    aa|slow)
        trials=$1 pairs=$2; shift 2
        dirs=()
        for ((t = 1; t <= trials; t++)); do
            d=results/$step-$pairs-$(date +%H%M%S)-$t
            a="alloc=plugin:$PLUGIN env=SLOW_ALLOC_NS=0 label=slow0"
            if [ "$step" = aa ]; then
                scripts/ab --noise --quick --pairs "$pairs" --only alloc_latency --out "$d" "$a" >"$d.log" 2>&1
            else
                scripts/ab --quick --pairs "$pairs" --only alloc_latency --out "$d" "$a" \
                    "alloc=plugin:$PLUGIN env=SLOW_ALLOC_NS=150 label=slow150" >"$d.log" 2>&1
            fi
            echo $? >"$d/rc"; mv "$d.log" "$d/ab.log"
            dirs+=("$d")
        done
        trial_table "${dirs[@]}" | tee "$OUT/$step-table.txt"
        tar czf "$OUT/$step.tgz" "${dirs[@]}"
        ;;
    noise)
        pairs=$1; shift
        d=results/noise-bench-$pairs
        scripts/ab --noise --quick --pairs "$pairs" --only alloc_latency,random_churn,multi_stream,replay --out "$d" "" \
            >"$d.log" 2>&1
        echo "noise: exit $?"; tail -8 "$d.log"; mv "$d.log" "$d/"
        tar czf "$OUT/noise.tgz" "$d"
        ;;
    repeat)
        n=$1; shift
        scripts/bench.sh --quick --repeat "$n" --out results/quick-repeat-$n --no-plots >"$OUT/repeat.log" 2>&1
        echo "repeat: exit $?"; tail -4 "$OUT/repeat.log"; grep 'repetition' "$OUT/repeat.log"
        tar czf "$OUT/repeat.tgz" results/quick-repeat-$n
        ;;
    torch)
        reps=$1; shift
        d=results/torch-compare-$reps
        for ((k = 1; k <= reps; k++)); do
            mkdir -p "$d/rep-$k"
            scripts/machine-state >"$d/rep-$k/machine.txt"
            build/bin/torch_alloc_compare -o "$d/rep-$k/torch_alloc_compare.default.csv" 2>>"$d/stderr.log"
            for alloc in caching async; do
                build/bin/alloc_latency --quick --alloc $alloc -o "$d/rep-$k/alloc_latency.$alloc.csv" 2>>"$d/stderr.log"
            done
        done
        python3 scripts/vl compare.summarize "$d"
        tar czf "$OUT/torch.tgz" "$d"
        ;;
    abrev)
        rev=$1 pairs=$2; shift 2
        d=results/abrev-$pairs
        scripts/ab --quick --pairs "$pairs" --only alloc_latency,random_churn --out "$d" \
            "rev=$rev alloc=caching" "alloc=caching label=tree" >"$d.log" 2>&1
        echo "abrev: exit $?"; grep -E "metrics compared|slower|faster|^  alloc|^  random" "$d.log" | cut -c1-220 | head -30
        mv "$d.log" "$d/"
        tar czf "$OUT/abrev.tgz" "$d"
        ;;
    test)
        make CUDA_ARCH=sm_90 test >"$OUT/test.log" 2>&1
        echo "test: exit $?"; grep -E "FAILED|failed:|skipped|^tests:" "$OUT/test.log" | tail -15
        ;;
    bench)
        scripts/bench.sh --quick --out results/quick-1 --no-plots >"$OUT/bench.log" 2>&1
        echo "bench: exit $?"; grep -E "failed|^== summary" -A20 "$OUT/bench.log" | tail -22
        tar czf "$OUT/bench.tgz" results/quick-1
        ;;
    *) echo "gpu_ab.sh: unknown step '$step'" >&2; exit 2 ;;
    esac
    echo "== $step: $(($(date +%s) - t0)) s"
done
