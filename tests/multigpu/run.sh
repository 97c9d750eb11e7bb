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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gpu=0
nvidia-smi -L >/dev/null 2>&1 && gpu=1
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

progs_passed=0 progs_failed=0
for prog in "${programs[@]}"; do
    failures_before=$failures
    bin=$build/bin/$prog
    [ -x "$bin" ] || { fail "$prog: not built ($bin)"; progs_failed=$((progs_failed + 1)); continue; }
    timeout 30 "$bin" --help >"$tmp/help" 2>"$tmp/err"
    rc=$?
    [ "$rc" = 0 ] || fail "$prog --help: exit $rc"
    grep -q "^usage: $prog " "$tmp/help" || fail "$prog --help: no usage line"
    grep -q "^program options:" "$tmp/help" || fail "$prog --help: no program options"
    [ -s "$tmp/err" ] && fail "$prog --help: wrote to stderr: $(head -1 "$tmp/err")"

    timeout 30 "$bin" --no-such-flag >/dev/null 2>"$tmp/err"
    rc=$?
    [ "$rc" = 2 ] || fail "$prog --no-such-flag: exit $rc, expected 2"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$prog --no-such-flag: $(wc -l <"$tmp/err") lines on stderr, expected 1"

    if [ "$gpu" = 0 ]; then
        timeout 60 "$bin" --quick -o "$tmp/$prog.csv" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        [ "$rc" = 77 ] || fail "$prog --quick without a GPU: exit $rc, expected 77"
        [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$prog --quick without a GPU: $(wc -l <"$tmp/err") lines on stderr, expected 1: $(head -3 "$tmp/err" | tr '\n' '|')"
        grep -q "^$prog: " "$tmp/err" || fail "$prog: the skip line does not start with the program's name"
        [ -s "$tmp/out" ] && fail "$prog --quick -o FILE wrote to stdout"
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
