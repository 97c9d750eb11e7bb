#!/usr/bin/env bash
# Tests of scripts/replay-sweep (make test-replay-sweep, part of make test; no GPU), on
# the tiny PyTorch traces of tests/fixtures/traces replayed on the simulated device:
#  - generous limits: every warm pass passes, exit 0, the table names both groups;
#  - a waste limit no allocator meets: FAIL rows, exit 1;
#  - steady state (the second half of one pass): on the first 4 steps of a fixed-shape
#    language model (tests/fixtures/zoo/lm-fixed.trace, recorded live on an H100), a
#    fixed reclaim budget mapping chunk by chunk (reclaim=0.008,reclaim_max=0.008,span=0)
#    maps again most of what it frees every step; the default, which unmaps nothing in
#    steady state, maps under 1% per allocation there (growth only) at waste <= 1.25, and
#    nothing in its warm passes;
#    the fixed budget's warm passes map only for growths despite free memory (relocation:
#    maps_despite_free equals maps), from replay --growth-log;
#  - layout.csv: each trace's offline static layouts and their best (replay --static-layout);
#  - plots/zoo_criterion.gp draws the sweep, and a workload name in its data runs nothing;
#  - nothing to judge is a usage error (exit 2): an empty folder, a --tune name without a
#    trace, a workload in both groups, a trace that replay refuses.
set -u
cd "$(dirname "$0")/../.."
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
sweep=scripts/replay-sweep
fix=tests/fixtures/traces
mkdir -p "$tmp/traces" "$tmp/empty" "$tmp/bad"
for w in gpt2 resnet50 transformer; do cp "$fix/$w.tiny.csv" "$tmp/traces/$w.csv"; done
printf 'vramlab-trace 1\na 0x1000 not-a-size 0\n' >"$tmp/bad/broken.trace"
spec=caching:segments=expandable

check "generous limits" 0 $sweep --traces "$tmp/traces" --spec $spec --tune gpt2,resnet50 --confirm transformer \
    --max-waste 100 --max-maps 1 --out "$tmp/o1"
expect "generous limits" '^\| tune \| gpt2 \| `caching:segments=expandable` \| [0-9]+ \| 1\.[0-9]{4} \| [0-9.]+ \| [0-9]+ \| [0-9.]+ \| [0-9.]+ \| 1\.[0-9]{4} \| [0-9.]+ \| PASS \|'
expect "generous limits" '^\| confirm \| transformer \|'
expect "generous limits" '3 trace x SPEC judged, 0 failed'
[ "$(grep -c '^transformer,confirm,' "$tmp/o1/sweep.csv")" = 3 ] ||
    { echo "FAIL: sweep.csv has not one row a pass (3) for transformer"; failures=$((failures + 1)); }

# layout.csv: per trace the three heuristics and the best, which is their smallest footprint
python3 -c 'import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
for w in ("gpt2", "resnet50", "transformer"):
    mine = [r for r in rows if r["workload"] == w]
    assert len(mine) == 5, (w, len(mine))  # four heuristics, then the best
    ratios = [float(r["footprint_ratio"]) for r in mine]
    assert mine[-1]["heuristic"].startswith("best") and ratios[-1] == min(ratios[:4]) and ratios[-1] >= 1, (w, ratios)
' "$tmp/o1/layout.csv" && passes=$((passes + 1)) ||
    { echo "FAIL: layout.csv lacks the heuristics and their best per trace"; failures=$((failures + 1)); }

[ -f "$tmp/o1/COMPLETE" ] && passes=$((passes + 1)) ||
    { echo "FAIL: a finished sweep writes COMPLETE"; failures=$((failures + 1)); }
check "an existing result is not overwritten" 2 $sweep --traces "$tmp/traces" --spec $spec --out "$tmp/o1"
expect "an existing result is not overwritten" 'never overwrites'

check "impossible waste limit" 1 $sweep --traces "$tmp/traces" --spec $spec --max-waste 0.5 --out "$tmp/o2"
expect "impossible waste limit" '\| all \| resnet50 \| .* \| FAIL \|'
expect "impossible waste limit" '3 trace x SPEC judged, 3 failed'

mkdir -p "$tmp/zoo" && cp tests/fixtures/zoo/lm-fixed.trace "$tmp/zoo/"
check "steady state" 1 $sweep --traces "$tmp/zoo" --spec caching:segments=expandable,reclaim=0.008,reclaim_max=0.008,span=0,lend=1,top=fit --spec $spec \
    --max-waste 2 --out "$tmp/o8"
steady_of() { # SPEC: maps_per_alloc and waste of lm-fixed under SPEC in steady.csv
    python3 -c 'import csv, sys
for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")):
    if r["spec"] == sys.argv[2]: print(r["maps_per_alloc"], r["waste"])' "$tmp/o8/steady.csv" "$1"
}
read -r fixed_rate fixed_waste <<<"$(steady_of caching:segments=expandable,reclaim=0.008,reclaim_max=0.008,span=0,lend=1,top=fit)"
read -r rate waste <<<"$(steady_of $spec)"
awk -v r="${fixed_rate:-}" 'BEGIN { exit !(r != "" && r > 0.3) }' && passes=$((passes + 1)) ||
    { echo "FAIL: steady state: a fixed budget maps ${fixed_rate:-nothing} per allocation, expected > 0.3"; failures=$((failures + 1)); }
awk -v r="${rate:-}" -v w="${waste:-}" 'BEGIN { exit !(r != "" && r < 0.01 && w <= 1.25) }' && passes=$((passes + 1)) ||
    { echo "FAIL: steady state: the default maps ${rate:-nothing} per allocation at waste ${waste:-?}, expected < 0.01 at <= 1.25"; failures=$((failures + 1)); }
warm_maps=$(python3 -c 'import csv, sys
print(sum(int(r["maps"]) for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))
          if r["spec"] == sys.argv[2] and r["pass"] != "1"))' "$tmp/o8/sweep.csv" "$spec")
[ "$warm_maps" = 0 ] && passes=$((passes + 1)) ||
    { echo "FAIL: steady state: the default's warm passes map ${warm_maps:-?} times, expected 0"; failures=$((failures + 1)); }

relocating=$(python3 -c 'import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))
        if r["spec"] == "caching:segments=expandable,reclaim=0.008,reclaim_max=0.008,span=0,lend=1,top=fit" and r["pass"] != "1"]
print(len(rows), sum(r["maps_despite_free"] == r["maps"] and int(r["maps"]) > 0 for r in rows))' "$tmp/o8/sweep.csv")
[ "$relocating" = "2 2" ] && passes=$((passes + 1)) ||
    { echo "FAIL: growth log: the fixed budget's 2 warm passes should map only despite free memory, got '$relocating' (passes, such passes)"; failures=$((failures + 1)); }

# plots/zoo_criterion.gp draws a sweep (and its layouts), and a workload name in the data
# stays data: no awk program or shell command is made of it.
if command -v gnuplot >/dev/null; then
    check "criterion plot" 0 scripts/plots.sh --render plots/zoo_criterion.gp "$tmp/crit.png" "$tmp/o1/sweep.csv
$tmp/o1/layout.csv" "s
l"
    [ -s "$tmp/crit.png" ] && passes=$((passes + 1)) || { echo "FAIL: criterion plot: no PNG"; failures=$((failures + 1)); }
    { grep '^#' "$tmp/o1/sweep.csv"; echo 'workload,group,spec,pass,ops,maps,maps_per_op,waste'
      echo "x'\$(touch\${IFS}$tmp/PWNED)'\",tune,caching:segments=expandable,2,10,0,0,1.01"; } >"$tmp/evil.csv"
    printf 'workload,group,heuristic,peak_bytes,extent_bytes,footprint_bytes,footprint_ratio,period_allocs\n' >"$tmp/evil-layout.csv"
    scripts/plots.sh --render plots/zoo_criterion.gp "$tmp/evil.png" "$tmp/evil.csv
$tmp/evil-layout.csv" "e
l" >/dev/null 2>&1
    [ ! -e "$tmp/PWNED" ] && passes=$((passes + 1)) ||
        { echo "FAIL: criterion plot ran a command from a workload name"; failures=$((failures + 1)); }
else
    echo "SKIP-PART: gnuplot not installed: plots/zoo_criterion.gp not drawn"
fi

check "empty folder" 2 $sweep --traces "$tmp/empty" --spec $spec --out "$tmp/o3"
expect "empty folder" 'no trace'
check "unknown workload" 2 $sweep --traces "$tmp/traces" --spec $spec --tune nosuch --out "$tmp/o4"
expect "unknown workload" "names 'nosuch', which has no trace"
check "workload in both groups" 2 $sweep --traces "$tmp/traces" --spec $spec --tune gpt2 --confirm gpt2 --out "$tmp/o5"
check "one pass only" 2 $sweep --traces "$tmp/traces" --spec $spec --passes 1 --out "$tmp/o6"
check "malformed trace" 2 $sweep --traces "$tmp/bad" --spec $spec --out "$tmp/o7"
expect "malformed trace" 'failed: nothing judged'
[ ! -e "$tmp/o7/COMPLETE" ] && passes=$((passes + 1)) ||
    { echo "FAIL: a sweep with a broken replay wrote COMPLETE"; failures=$((failures + 1)); }

checks_report test-replay-sweep
[ "$failures" -eq 0 ]
