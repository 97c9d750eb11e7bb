#!/usr/bin/env bash
# No-GPU checks of the scenarios pinned_rounding, context_cost, cublas_workspace and
# stream_pools, run by `make test` (make test-failmodes): each answers --help with its
# usage (0) and a bad flag with one line (2); without a CUDA device a run prints one
# line and exits 77 (on a GPU box too: the programs are shown none; tests/gpu/failmodes.sh
# runs them on one). stream_pools runs on the simulated device with the caching
# allocator, where its policy part is real: with 8 streams each allocating for itself
# the allocator reserves more over the same requests than with 1 stream, and more than
# with one allocation stream; every allocation is freed.
#   usage: tests/failmodes/run.sh [BUILD]
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
programs=(pinned_rounding context_cost cublas_workspace stream_pools)
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
# The frames and the skip are under test, not the GPU: the same checks on every machine.
export CUDA_VISIBLE_DEVICES=
failures=0 checks_failed=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
. tests/support/program_frame.sh

for prog in "${programs[@]}"; do
    bin=$build/bin/$prog
    if [ -x "$bin" ]; then frame_checks "$prog" "$bin" 0; else fail "$prog: not built ($bin)"; fi
    ! grep -q "no GPU" "$tmp/err" && fail "$prog: the skip line does not say 'no GPU': $(head -1 "$tmp/err")"
done
[ "$failures" = 0 ] || checks_failed=$((checks_failed + 1))

# stream_pools on sim: the per-stream caches show, the allocation stream removes them.
frame_failures=$failures
csv=$tmp/stream_pools.sim.csv
if timeout 120 "$build/bin/stream_pools" --device sim --alloc caching --quick -o "$csv" 2>"$tmp/err"; then
    awk -F, '
        /^#/ { next }
        !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
        { r[$c["variant"] "," $c["streams"]] = $c["reserved_over_requested"]
          if ($c["allocs"] != $c["frees"]) { print "allocs " $c["allocs"] " != frees " $c["frees"] " in " $0; bad = 1 }
          if ($c["reserved_over_requested"] == "") { print "no ratio in " $0; bad = 1 } }
        END {
            if (!(r["per_stream,8"] > r["per_stream,1"] + 0.05)) { print "per_stream 8 streams " r["per_stream,8"] " not above 1 stream " r["per_stream,1"]; bad = 1 }
            if (!(r["per_stream,8"] > r["alloc_stream,8"] + 0.05)) { print "per_stream " r["per_stream,8"] " not above alloc_stream " r["alloc_stream,8"] " at 8 streams"; bad = 1 }
            if (r["per_stream,1"] != r["alloc_stream,1"]) { print "1 stream: the variants differ (" r["per_stream,1"] " vs " r["alloc_stream,1"] ")"; bad = 1 }
            exit bad
        }' "$csv" >"$tmp/why" || fail "stream_pools on sim: $(tr '\n' ';' <"$tmp/why")"
else
    fail "stream_pools --device sim --alloc caching --quick: exit $?: $(head -2 "$tmp/err")"
fi

[ "$failures" = "$frame_failures" ] || checks_failed=$((checks_failed + 1))
# Two checks: the programs' frames, stream_pools on sim.
echo "failmodes checks: $((2 - checks_failed)) passed, $checks_failed failed, 0 skipped"
[ "$failures" = 0 ]
