#!/usr/bin/env bash
# Re-measures, on one H100 or H200, the data behind the README's findings that compare
# allocators or variants: 5 repetitions (separate processes, interleaved order, each
# rep-<k>/ COMPLETE) of the programs below, in about 8 minutes on an H100. The folder
# it writes is meant to be stored as results/reference/<device>-findings-<rev>/, where
# scripts/findings (make findings) reads it: median over the repetitions, min-max, and
# the ratio's 95% interval.
#
#   tests/gpu/findings_remeasure.sh [OUT_DIR]     (default: $OUT, else results/)
#
# Exit 77 without a GPU; 1 when a job failed (the folder then has no COMPLETE).
set -euo pipefail
cd "$(dirname "$0")/../.."
ONLY=${FINDINGS_ONLY:-free_stall,fork_workers,pinned_copy,fragmentation_churn,cache_hold,alloc_latency,random_churn,torch_alloc_compare,retained_graph,replay}
REPEAT=${FINDINGS_REPEAT:-5}
parent=${1:-${OUT:-results}}

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "findings_remeasure: no GPU (nvidia-smi -L failed): nothing measured" >&2
    exit 77
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0)
case $gpu in
    *H100*) device=h100 ;;
    *H200*) device=h200 ;;
    *) echo "findings_remeasure: $gpu is neither an H100 nor an H200; the findings are measured on those" >&2; exit 2 ;;
esac
# VL_GIT_REV first: a copied working tree may carry another checkout's .git
rev=${VL_GIT_REV:-$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)}
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | head -1)
out=$parent/$device-findings-$rev
mkdir -p "$parent"

make -s CUDA_ARCH=sm_90 programs
make -s CUDA_ARCH=sm_90 torch-compare # torch_alloc_compare (skipped, with a line, where torch is missing)
cmd=(scripts/bench.sh --repeat "$REPEAT" --only "$ONLY" --no-plots --out "$out")
start=$(date -u +%FT%TZ)
"${cmd[@]}"
{
    echo "Findings re-measured: ${cmd[*]}"
    echo "(tests/gpu/findings_remeasure.sh; make CUDA_ARCH=sm_90 programs torch-compare), $REPEAT repetitions,"
    echo "separate processes, jobs in a new order each repetition; each rep-<k>/ has COMPLETE."
    echo "revision: $rev${dirty:+ (with uncommitted changes)}"
    echo "device: $gpu"
    nvidia-smi --query-gpu=driver_version,memory.total,persistence_mode,clocks.max.sm --format=csv -i 0
    echo "started: $start; ended: $(date -u +%FT%TZ)"
    echo "Store as results/reference/$device-findings-$rev/ and run make findings."
} >"$out/README.txt"
nvidia-smi -q -i 0 >"$out/nvidia-smi-q.txt" 2>&1 || true
echo "findings_remeasure: $out (store it as results/reference/$(basename "$out")/)"
