#!/usr/bin/env bash
# No-GPU check of the multi-GPU / multi-process scenarios (device0_pileup, ipc_hold,
# peer_access, graph_pool), run by `make test` (make test-multigpu-nogpu): each answers
# --help with its usage (exit 0) and a bad flag with one line (exit 2); on a machine
# without a CUDA device a run prints exactly one line and exits 77, leaving no helper
# process behind. On a GPU box the run is left to tests/gpu/multigpu.sh.
#   usage: tests/multigpu/run.sh [BUILD]
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
programs=(device0_pileup ipc_hold peer_access graph_pool)
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
gpu=0
nvidia-smi -L >/dev/null 2>&1 && gpu=1
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
. tests/support/program_frame.sh

progs_passed=0 progs_failed=0
for prog in "${programs[@]}"; do
    failures_before=$failures
    bin=$build/bin/$prog
    [ -x "$bin" ] || { fail "$prog: not built ($bin)"; progs_failed=$((progs_failed + 1)); continue; }
    frame_checks "$prog" "$bin" "$gpu"
    if [ "$gpu" = 0 ]; then
        timeout 60 "$bin" --quick --device cuda:1 -o "$tmp/$prog.1.csv" >/dev/null 2>&1
        rc=$?
        [ "$rc" = 77 ] || fail "$prog --device cuda:1 without a GPU: exit $rc, expected 77"
    fi
    if [ "$failures" = "$failures_before" ]; then
        echo "ok   $prog"; progs_passed=$((progs_passed + 1))
    else
        echo "FAIL $prog"; progs_failed=$((progs_failed + 1))
    fi
done
[ "$gpu" = 1 ] && echo "note: a GPU is here; the skip (77) checks were not run (tests/gpu/multigpu.sh runs the programs)"
# Per program: its checks all passed, or not.
echo "multigpu no-GPU programs: $progs_passed passed, $progs_failed failed, 0 skipped"
[ "$failures" = 0 ]
