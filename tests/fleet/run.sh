#!/usr/bin/env bash
# make test-fleet: scripts/fleet and scripts/matrix on a real Slurm cluster of one node,
# brought up here (tests/fleet/cluster.sh) and taken down again even on failure.
# A job array of 4 tasks runs the simulated-device part of one fast program, twice each,
# on this one node; the test then checks every task's results folder and the matrix
# (columns, every metric, exit status, the CSV's shape), and the refusals (an existing
# fleet id, bad options). Exit 77 with one line where Slurm cannot be started here.
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

need=(munged slurmctld slurmd sbatch squeue scontrol)
missing() { for c in "${need[@]}"; do PATH=$PATH:/usr/sbin command -v "$c" >/dev/null || return 0; done; return 1; }
if missing; then
    # Like scripts/setup-deps.sh does for cmocka: install where we may.
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "test-fleet: installing Slurm and munge (apt-get install slurm-wlm munge)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends slurm-wlm slurmctld slurmd munge >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 &&
                apt-get install -y -qq --no-install-recommends slurm-wlm slurmctld slurmd munge >/dev/null 2>&1; }
    fi
    missing && skip "no Slurm here (slurmctld, slurmd, munged, sbatch) and cannot install it (needs root and apt-get)"
fi
export PATH=$PATH:/usr/sbin
[ "$(id -u)" = 0 ] || skip "a private Slurm cluster needs root (slurmd starts jobs as their user)"
[ -x build/bin/device_info ] || fail "no build/bin: run make first"

tmp=$(mktemp -d /tmp/vl-fleet.XXXXXX)
chmod 755 "$tmp"
source tests/fleet/cluster.sh
cleanup() { cluster_down; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
cluster_up "$tmp/slurm" >"$tmp/up.txt" 2>&1 ||
    { cluster_down; skip "cannot start Slurm here: $(tail -1 "$tmp/up.txt")"; }
echo "test-fleet: a one-node Slurm cluster is up ($(sinfo -h -o '%n %c CPUs %t'))"

results=$tmp/results
t0=$(date +%s)
scripts/fleet --results "$results" --fleet-id t1 --tasks 2 --nodes "$(hostname -s)" --partitions vltest \
    --quick --repeat 2 --only replay --poll 1 -- --time=5 >"$tmp/fleet.out" 2>&1
rc=$?
cat "$tmp/fleet.out" | grep -v '^  [a-z]' | head -40
echo "test-fleet: the fleet took $(($(date +%s) - t0)) s"
[ "$rc" = 0 ] || fail "scripts/fleet exited $rc"
fleet=$results/t1
[ -f "$fleet/fleet.txt" ] || fail "no fleet.txt"
grep -q '^job_id: [0-9]' "$fleet/fleet.txt" || fail "fleet.txt has no job id"
mapfile -t cols < <(cd "$fleet" && ls -d "$(hostname -s)"-sim-nodriver* 2>/dev/null)
[ ${#cols[@]} = 4 ] || fail "expected 4 machine folders $(hostname -s)-sim-nodriver*, found: ${cols[*]:-none}"
for c in "${cols[@]}"; do
    for k in 1 2; do
        ls "$fleet/$c/rep-$k"/replay.*.csv >/dev/null 2>&1 || fail "$c/rep-$k has no replay CSV"
    done
done
for i in 0 1 2 3; do
    grep -q "rc=0" "$fleet/tasks/$i.status" 2>/dev/null || fail "task $i left no successful status"
    [ -s "$fleet/logs/task-$i.out" ] || fail "task $i has no log"
done
grep -q '4 ok, 0 failed' "$tmp/fleet.out" || fail "the fleet's report does not say 4 ok"

# The matrix the fleet printed, and once more on its own: exit status, columns, shape.
[ -f "$fleet/matrix/matrix.csv" ] || fail "the fleet wrote no matrix"
scripts/matrix "$fleet" --out "$tmp/m" --no-plots >"$tmp/matrix.out" 2>&1
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$tmp/matrix.out"; fail "scripts/matrix exited $rc"; }
python3 - "$tmp/m/matrix.csv" "$fleet" "${cols[@]}" <<'PY' || fail "matrix.csv is not as expected"
import csv, glob, os, sys
path, fleet, cols = sys.argv[1], sys.argv[2], sorted(sys.argv[3:])
lines = [l for l in open(path) if not l.startswith("#")]
rows = list(csv.reader(lines))
head, body = rows[0], rows[1:]
fields = ("value", "n", "ratio", "ratio_lo", "ratio_hi", "q", "verdict", "regression")
others = cols[1:]
want = ["file", "row", "metric", "unit", "baseline", "baseline_value", "baseline_n"] + \
       [f"{c}:{k}" for c in others for k in fields]
assert head == want, f"header {head[:9]}... is not {want[:9]}..."
assert all(len(r) == len(head) for r in body), "a row has another field count than the header"
assert all(r[4] == cols[0] for r in body), "the baseline is not the first column"
# every metric: one row per (file, row, metric) of the baseline's repetitions
sys.path.insert(0, "scripts")  # the vramlab package
from vramlab import results as vlresults
base = vlresults.Run(os.path.join(fleet, cols[0]))
expect = {(f, m.row, m.name) for f, ms in base.files.items() for m in ms}
got = {(r[0], r[1], r[2]) for r in body}
assert got == expect, f"{len(expect - got)} metrics missing, {len(got - expect)} unexpected"
assert len(body) == len(got), "a metric appears twice"
for c in others:
    i = head.index(f"{c}:verdict")
    verdicts = {r[i] for r in body}
    assert verdicts <= {"same", "faster", "slower", "better", "worse", "changed", "inconclusive"}, verdicts
    assert all(r[head.index(f"{c}:n")] == "2" for r in body), f"{c}: not 2 repetitions per metric"
print(f"matrix.csv: {len(body)} metrics x {len(cols)} columns, as expected")
PY
grep -q "^baseline: ${cols[0]} " "$tmp/matrix.out" || fail "the matrix does not name its baseline"
scripts/matrix "$fleet" --baseline "${cols[2]}" --out "$tmp/m2" --no-plots >/dev/null 2>&1
[ $? -le 1 ] && head -1 "$tmp/m2/matrix.csv" | grep -q "baseline=${cols[2]} " || fail "--baseline was not used"

# Refusals: one line, exit 2.
expect_usage() {
    local out rc
    out=$("$@" 2>&1); rc=$?
    [ "$rc" = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "'$*' gave exit $rc: $out"
}
expect_usage scripts/fleet --results "$results" --fleet-id t1 --tasks 1 --only replay
expect_usage scripts/fleet --results "$results" --tasks 0
expect_usage scripts/fleet --results "$results" --bogus
expect_usage scripts/fleet --results "$results" --only no_such_program
expect_usage scripts/fleet --results "$results" --collect missing
expect_usage scripts/matrix "$fleet/${cols[0]}"
expect_usage scripts/matrix "$fleet" --baseline nothing-like-it
[ "$(ls "$results")" = t1 ] || fail "a refused fleet left a folder behind: $(ls "$results")"

# A task that fails is reported with its log, and the fleet exits 1.
scripts/fleet --results "$results" --fleet-id t2 --tasks 1 --bin "$tmp" --poll 1 --no-matrix >"$tmp/bad.out" 2>&1 && true
[ $? = 2 ] || fail "--bin without programs was not refused"
mkdir -p "$tmp/badbin" && printf '#!/bin/sh\nexit 3\n' >"$tmp/badbin/device_info" && chmod +x "$tmp/badbin/device_info"
scripts/fleet --results "$results" --fleet-id t3 --tasks 1 --bin "$tmp/badbin" --poll 1 --no-matrix >"$tmp/bad.out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q 'task 0   FAILED' "$tmp/bad.out" && grep -q 'task-0.out (last 20 lines)' "$tmp/bad.out" ||
    { cat "$tmp/bad.out"; fail "a failing task was not reported (exit $rc)"; }
# --no-wait, then --collect.
scripts/fleet --results "$results" --fleet-id t4 --tasks 1 --quick --only replay --no-wait >"$tmp/nw.out" 2>&1 ||
    fail "--no-wait failed: $(cat "$tmp/nw.out")"
grep -q -- '--collect t4' "$tmp/nw.out" || fail "--no-wait did not say how to collect"
scripts/fleet --results "$results" --collect t4 --poll 1 >"$tmp/c.out" 2>&1 || { cat "$tmp/c.out"; fail "--collect t4 failed"; }
grep -q '1 ok, 0 failed' "$tmp/c.out" || fail "--collect did not report the task"
echo "test-fleet: passed in $(($(date +%s) - t0)) s"
