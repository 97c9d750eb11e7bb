#!/usr/bin/env bash
# The benchmarks and scripts/compare on a GPU box in one go (the device tool's `run`): builds the bench programs,
# runs the four benches for raw, async and caching (GPU) and caching (sim), replays the
# synthetic trace and a PyTorch trace recorded here, runs the scripts/compare check
# (two runs of the same build, one with the deliberately slowed plugin allocator) and
# hyperfine; packs results/ into $OUT/results.tgz. Plots are rendered elsewhere.
# Usage: OUT=/some/dir tests/compare/gpu_run.sh [--skip-main]
set -u
OUT=${OUT:-/tmp/vl-out}
mkdir -p "$OUT"
export PATH=$PWD/.deps/usr/bin:$PATH
skip_main=0
[ "${1:-}" = --skip-main ] && skip_main=1
step() { # timed, logged command that may fail without stopping the rest
    local t0 rc
    t0=$(date +%s.%N)
    timeout 120 "$@" 2>>"$OUT/stderr.log"
    rc=$?
    printf '%6.1fs rc=%-3d %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }')" "$rc" "$*"
}
echo "== build"
make CUDA_ARCH=sm_90 -j16 build/bin/alloc_latency build/bin/random_churn build/bin/multi_stream build/bin/replay \
    build/bin/device_info build/lib/libslow_alloc.so >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
B=build/bin
TRACE=tests/fixtures/parse/training.torch.csv
M=results/gpu-main
mkdir -p $M
if [ $skip_main = 0 ]; then
    echo "== benches"
    for a in raw async caching; do
        step $B/alloc_latency --alloc $a -o $M/alloc_latency.$a.csv
        step $B/multi_stream --alloc $a -o $M/multi_stream.$a.csv
        step $B/random_churn --alloc $a --ops 50000 --warmup-ops 5000 -o $M/random_churn.$a.csv
        step $B/replay --alloc $a --trace $TRACE -o $M/replay.$a.csv
    done
    step $B/random_churn --device sim --alloc caching --ops 50000 --warmup-ops 5000 -o $M/random_churn.caching.sim.csv
    step $B/replay --device sim --alloc caching --trace $TRACE -o $M/replay.caching.sim.csv
    echo "== PyTorch trace recorded here"
    step python3 tests/compare/record_small_trace.py $M/torch_small.pickle
    if [ -s $M/torch_small.pickle ]; then
        python3 scripts/torch-snapshot-to-csv -o $M/torch_small.torch.csv -- $M/torch_small.pickle 2>>"$OUT/stderr.log"
        for a in raw async caching; do step $B/replay --alloc $a --trace $M/torch_small.pickle -o $M/replay_torch.$a.csv; done
        step $B/replay --device sim --alloc caching --trace $M/torch_small.pickle -o $M/replay_torch.caching.sim.csv
        step $B/replay --device sim:capacity=2GiB --alloc caching --trace $M/torch_small.pickle -o $M/replay_torch.caching.sim2g.csv
    fi
fi
echo "== compare: same build twice, then a slowed allocator"
P=plugin:build/lib/libslow_alloc.so
for run in A A2 B; do
    d=results/cmp-$run
    mkdir -p $d
    ns=0
    [ $run = B ] && ns=20000
    export SLOW_ALLOC_NS=$ns
    step $B/alloc_latency --quick --alloc $P -o $d/alloc_latency.plugin.csv
    step $B/random_churn --quick --alloc $P -o $d/random_churn.plugin.csv
    step $B/multi_stream --quick --alloc $P -o $d/multi_stream.plugin.csv
    step $B/replay --quick --alloc $P --trace $TRACE -o $d/replay.plugin.csv
    step scripts/compare.d/hyperfine.sh --run-id cmp-$run --runs 4 --only replay --allocs $P
done
unset SLOW_ALLOC_NS
step scripts/compare --no-plots results/cmp-A results/cmp-A2 >"$OUT/compare_same.txt"
step scripts/compare --no-plots results/cmp-A results/cmp-B >"$OUT/compare_slow.txt"
echo "== hyperfine over the benches"
step scripts/compare.d/hyperfine.sh --run-id gpu-main --runs 3 --only replay,multi_stream --allocs "raw caching"
rm -f $M/torch_small.pickle.gz
tar czf "$OUT/results.tgz" results/gpu-main results/cmp-A results/cmp-A2 results/cmp-B \
    results/compare-cmp-A-vs-cmp-A2 results/compare-cmp-A-vs-cmp-B 2>/dev/null
echo "== done"
