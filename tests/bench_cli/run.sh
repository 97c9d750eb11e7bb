#!/usr/bin/env bash
# Tests of scripts/bench.sh's command line and results folders (make test-bench-cli, part
# of make test; no GPU: stand-in programs and a small suite of their own):
#  - an unknown --only program or --alloc allocator exits 2 naming the word;
#  - an empty job list exits 2 (--alloc raw on simulated-device lines only);
#  - an existing run folder is refused without --force; --force clears it first (no
#    file of the older run stays), and refuses a folder bench.sh did not make (no
#    .vramlab-run: not a run, or a run from before the mark), leaving it as it was;
#  - a run id that is not one folder name (../x, .hidden, a/b, empty) or is reference,
#    and --out inside results/reference/, exit 2 and create or delete nothing;
#  - a second run into a folder that a run is writing is refused, naming its pid;
#  - two runs started in the same second get two folders;
#  - COMPLETE ("complete <UTC ISO date> jobs=<N>") in the run and each rep-<k>/, and none
#    after SIGTERM or SIGINT, which say the run is incomplete and stop the running job;
#  - a --trace file that is not here runs on its shipped fixture, labelled -fixture, and
#    is left out where the suite replays that fixture already;
#  - the second run estimates the time left from the first one's manifest;
#  - --quick leaves the peers (@peers, -peer) out, --quick --peers and the default tier
#    run them; --quick --full runs every line, short.
set -u
cd "$(dirname "$0")/../.."
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
export VL_RESULTS=$tmp/results VL_SUITE_DIR=$tmp/suite
mkdir -p "$tmp/bin" "$tmp/suite" "$tmp/fakebin"

# Stand-in programs: no GPU (device_info exits 77), one CSV row per run, the allocator
# list of a real program; slow_prog sleeps until killed and leaves its pid.
cat >"$tmp/bin/device_info" <<'P'
#!/usr/bin/env bash
echo "device_info: no GPU found (stand-in) (skipped)" >&2; exit 77
P
cat >"$tmp/bin/fast_prog" <<'P'
#!/usr/bin/env bash
if [ "${1:-}" = --alloc ] && [ "${2:-}" = help ]; then printf '  raw      x\n  caching  y\n'; exit 0; fi
all="$*"; while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
echo "metric,value" >"$out"; echo "args,$all" >>"$out"
P
cp "$tmp/bin/fast_prog" "$tmp/bin/random_churn"
cat >"$tmp/bin/slow_prog" <<P
#!/usr/bin/env bash
echo \$\$ >"$tmp/slow.pid"
exec sleep 60
P
chmod +x "$tmp/bin"/*
printf '#\tprogram\tdevices\tallocs\targs\tquick_args\nfast_prog\tsim\tcaching\t-\t-\n' >"$tmp/suite/a.tsv"
printf 'slow_prog\tsim\tcaching\t-\t-\n' >"$tmp/suite/slow.full.tsv"
bench=(scripts/bench.sh --bin "$tmp/bin" --no-plots)

check "unknown --only" 2 "${bench[@]}" --only fast_prog,bogus --out "$tmp/o1"
expect "unknown --only" "unknown program 'bogus'"
check "unknown --alloc" 2 "${bench[@]}" --alloc cachng --out "$tmp/o2"
expect "unknown --alloc" "unknown allocator 'cachng'"
check "no job" 2 "${bench[@]}" --alloc raw --out "$tmp/o3"
expect "no job" "no job to run with --alloc raw"
reject "no job" "\[1/1\]"

# Run folders: never reused without --force; --force starts from an empty folder.
check "first run" 0 "${bench[@]}" --out "$tmp/r"
expect "first run" "bench: 1 jobs; no estimate of the time: none of them ran in an earlier run under .*/results/"
touch "$tmp/r/older-run.csv"
check "same folder again" 2 "${bench[@]}" --out "$tmp/r"
expect "same folder again" "exists already: .*FORCE=1"
[ -e "$tmp/r/older-run.csv" ] && passes=$((passes + 1)) || { echo "FAIL: a refused run removed files"; failures=$((failures + 1)); }
check "--force" 0 "${bench[@]}" --out "$tmp/r" --force
[ ! -e "$tmp/r/older-run.csv" ] && passes=$((passes + 1)) || { echo "FAIL: --force left the older run's file"; failures=$((failures + 1)); }
mkdir -p "$tmp/notrun" && touch "$tmp/notrun/precious"
check "--force on a folder that is not a run" 2 "${bench[@]}" --out "$tmp/notrun" --force
[ -e "$tmp/notrun/precious" ] && passes=$((passes + 1)) || { echo "FAIL: --force cleared a folder that is not a run"; failures=$((failures + 1)); }

check "--force: the mark stays" 0 grep -qx "run_id: r" "$tmp/r/.vramlab-run"
# A run from before the mark: manifest.csv but no .vramlab-run; for its owner to delete.
mkdir -p "$tmp/oldrun" && echo "program,device" >"$tmp/oldrun/manifest.csv"
check "--force on a run without the mark" 2 "${bench[@]}" --out "$tmp/oldrun" --force
expect "--force on a run without the mark" "bench.sh did not make it .*delete it yourself"
[ -e "$tmp/oldrun/manifest.csv" ] && [ ! -e "$tmp/oldrun/.vramlab-run" ] && passes=$((passes + 1)) ||
    { echo "FAIL: a refused --force changed the older run's folder"; failures=$((failures + 1)); }

# Run ids: one folder name, never reference; nothing made or removed anywhere.
mkdir -p "$VL_RESULTS/reference/stored" && echo "program,device" >"$VL_RESULTS/reference/stored/manifest.csv"
echo "run_id: reference" >"$VL_RESULTS/reference/.vramlab-run" # a mark moved along with a run: still refused
snapshot() { find "$tmp" \( -path "$tmp/out" -o -path "$tmp/changed" \) -prune -o -print | sort; }
snapshot >"$tmp/before"
for id in ../x .hidden a/b "" reference ../results; do
    check "--run-id '$id' --force" 2 "${bench[@]}" --run-id "$id" --force
    [ "$(wc -l <"$tmp/out")" = 1 ] && passes=$((passes + 1)) || { echo "FAIL: --run-id '$id': not one line:"; cat "$tmp/out"; failures=$((failures + 1)); }
done
check "--out inside reference" 2 "${bench[@]}" --out "$VL_RESULTS/reference/new"
expect "--out inside reference" "in .*/reference/, the stored runs"
check "--out x/../reference" 2 "${bench[@]}" --out "$VL_RESULTS/x/../reference" --force
snapshot | diff "$tmp/before" - >"$tmp/changed" && passes=$((passes + 1)) ||
    { echo "FAIL: a refused run id changed the tree:"; cat "$tmp/changed"; failures=$((failures + 1)); }
rm -rf "$VL_RESULTS/reference"

# The lock: a second run into the folder a run is writing is refused, with the first's pid.
rm -f "$tmp/slow.pid"
"${bench[@]}" --full --only slow_prog --out "$tmp/locked" >"$tmp/first.log" 2>&1 &
first=$!
for _ in $(seq 100); do [ -s "$tmp/slow.pid" ] && break; sleep 0.1; done
for force in "" --force; do
    check "second run into a folder being written $force" 2 "${bench[@]}" --full --only slow_prog --out "$tmp/locked" $force
    expect "second run into a folder being written $force" "being written by another run \(pid $first\)"
done
[ -d "$tmp/locked/logs" ] && passes=$((passes + 1)) || { echo "FAIL: the refused run cleared the first one's folder"; failures=$((failures + 1)); }
kill -TERM "$first"; wait "$first"
# Two at once into a new folder: one runs, the other is refused.
rm -f "$tmp/slow.pid"
"${bench[@]}" --full --only slow_prog --out "$tmp/race" >"$tmp/race1.log" 2>&1 &
r1=$!
"${bench[@]}" --full --only slow_prog --out "$tmp/race" >"$tmp/race2.log" 2>&1 &
r2=$!
for _ in $(seq 100); do [ -s "$tmp/slow.pid" ] && break; sleep 0.1; done
sleep 0.5
refused=$(grep -l "being written by another run (pid [0-9]*)" "$tmp/race1.log" "$tmp/race2.log" | wc -l)
kill -TERM "$r1" "$r2" 2>/dev/null; wait "$r1" "$r2"
[ "$refused" = 1 ] && passes=$((passes + 1)) ||
    { echo "FAIL: two runs into one new folder: $refused refused"; tail -n 3 "$tmp"/race?.log; failures=$((failures + 1)); }

check "COMPLETE" 0 grep -qxE "complete [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z jobs=1" "$tmp/r/COMPLETE"
check "repeat" 0 "${bench[@]}" --repeat 2 --out "$tmp/rep"
for f in rep/COMPLETE rep/rep-1/COMPLETE rep/rep-2/COMPLETE; do
    [ -f "$tmp/$f" ] && passes=$((passes + 1)) || { echo "FAIL: no $f"; failures=$((failures + 1)); }
done
check "repeat: the run's COMPLETE counts every job" 0 grep -q "jobs=2$" "$tmp/rep/COMPLETE"

# The estimate: results/ now holds an earlier run of the job.
mkdir -p "$VL_RESULTS" && cp -r "$tmp/r" "$VL_RESULTS/earlier"
check "estimate" 0 "${bench[@]}" --out "$tmp/est"
expect "estimate" "bench: 1 jobs; about [0-9]+s by earlier runs"
expect "estimate" "\[1/1\] .* ~[0-9]+s left"
# A job that took 100 s before: 3m20s for two repetitions, 1m40s left after the first.
mkdir -p "$VL_RESULTS/slow-history"
echo "quick: 0" >"$VL_RESULTS/slow-history/env.txt"
printf 'program,device,alloc,status,exit_code,seconds,csv,note\nfast_prog,sim,"caching",ok,0,100.00,fast_prog.caching.sim.csv,""\n' \
    >"$VL_RESULTS/slow-history/manifest.csv"
rm -rf "$VL_RESULTS/earlier"
check "estimate over repetitions" 0 "${bench[@]}" --repeat 2 --out "$tmp/est2"
expect "estimate over repetitions" "1 jobs x 2 repetitions; about 3m20s by earlier runs"
expect "estimate over repetitions" "repetition 1/2 done .*, ~1m40s left"

# Two runs in the same second (date pinned): two folders.
cat >"$tmp/fakebin/date" <<'P'
#!/usr/bin/env bash
[ "$*" = "-u +%Y%m%dT%H%M%SZ" ] && { echo 20250101T000000Z; exit 0; }
exec /bin/date "$@"
P
chmod +x "$tmp/fakebin/date"
PATH=$tmp/fakebin:$PATH "${bench[@]}" >"$tmp/same1.log" 2>&1 &
PATH=$tmp/fakebin:$PATH "${bench[@]}" >"$tmp/same2.log" 2>&1
wait
n=$(find "$VL_RESULTS" -maxdepth 1 -name '20250101T000000Z-*' -type d | wc -l)
[ "$n" = 2 ] && passes=$((passes + 1)) || { echo "FAIL: two runs in one second made $n folder(s)"; failures=$((failures + 1)); }
for d in "$VL_RESULTS"/20250101T000000Z-*; do
    [ "$(grep -c '^fast_prog,' "$d/manifest.csv")" = 1 ] && passes=$((passes + 1)) ||
        { echo "FAIL: $d/manifest.csv does not hold exactly its own job"; failures=$((failures + 1)); }
done

# Interrupted: no COMPLETE, a line saying so, the running job stopped.
set -m # job control: a background job keeps SIGINT (a non-interactive shell ignores it otherwise)
for sig in TERM INT; do
    rm -f "$tmp/slow.pid"
    "${bench[@]}" --full --only slow_prog --out "$tmp/int-$sig" >"$tmp/int.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do [ -s "$tmp/slow.pid" ] && break; sleep 0.1; done
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
    want=$([ $sig = TERM ] && echo 143 || echo 130)
    [ "$rc" = "$want" ] && passes=$((passes + 1)) || { echo "FAIL: SIG$sig: exit $rc, expected $want"; failures=$((failures + 1)); }
    [ ! -e "$tmp/int-$sig/COMPLETE" ] && passes=$((passes + 1)) || { echo "FAIL: SIG$sig left a COMPLETE"; failures=$((failures + 1)); }
    grep -q "interrupted (SIG$sig): the run in .* is incomplete" "$tmp/int.log" && passes=$((passes + 1)) ||
        { echo "FAIL: SIG$sig: no 'incomplete' line:"; cat "$tmp/int.log"; failures=$((failures + 1)); }
    # the job gets up to 3 s to go (a loaded machine: CI runs 8 suites at once on 2 cores)
    for _ in $(seq 30); do [ -s "$tmp/slow.pid" ] && kill -0 "$(cat "$tmp/slow.pid")" 2>/dev/null || break; sleep 0.1; done
    if [ -s "$tmp/slow.pid" ] && kill -0 "$(cat "$tmp/slow.pid")" 2>/dev/null; then
        echo "FAIL: SIG$sig: the running job was left running"; failures=$((failures + 1)); kill "$(cat "$tmp/slow.pid")"
    else passes=$((passes + 1)); fi
done
set +m

# A trace that is not here: its fixture, labelled; left out where the suite has it already.
fixture=tests/fixtures/traces/resnet50.tiny.csv
printf 'fast_prog\tsim\tcaching\t--trace %s\t--trace %s\tfull-resnet50\n' "$tmp/none/resnet50.csv" "$tmp/none/resnet50.csv" >"$tmp/suite/a.tsv"
printf 'fast_prog\tsim\traw\t--trace %s\t--trace %s\tfull-gpt2\n' "$tmp/none/gpt2.csv" "$tmp/none/gpt2.csv" >>"$tmp/suite/a.tsv"
printf 'fast_prog\tsim\traw\t--trace %s\t--trace %s\ttiny-gpt2\n' tests/fixtures/traces/gpt2.tiny.csv tests/fixtures/traces/gpt2.tiny.csv >>"$tmp/suite/a.tsv"
check "fixture" 0 "${bench[@]}" --out "$tmp/fix"
expect "fixture" "not recorded here .*resnet50.csv"
[ -f "$tmp/fix/fast_prog.full-resnet50-fixture.caching.sim.csv" ] && passes=$((passes + 1)) ||
    { echo "FAIL: no fast_prog.full-resnet50-fixture.caching.sim.csv"; ls "$tmp/fix"; failures=$((failures + 1)); }
check "fixture: replayed" 0 grep -q "$fixture" "$tmp/fix/fast_prog.full-resnet50-fixture.caching.sim.csv"
[ "$(grep -c '^fast_prog,' "$tmp/fix/manifest.csv")" = 2 ] && passes=$((passes + 1)) ||
    { echo "FAIL: the gpt2 fixture job is not left out:"; cat "$tmp/fix/manifest.csv"; failures=$((failures + 1)); }
grep -q "status" "$tmp/fix/manifest.csv" && ! grep -q ",skipped," "$tmp/fix/manifest.csv" && passes=$((passes + 1)) ||
    { echo "FAIL: a job skipped"; failures=$((failures + 1)); }

# The quick tier leaves the peers out unless --peers (a stand-in GPU: cuda lines run).
mkdir -p "$tmp/gpubin" && cp "$tmp/bin/fast_prog" "$tmp/bin/random_churn" "$tmp/gpubin/" && cp "$tmp/bin/fast_prog" "$tmp/gpubin/peer_prog"
cat >"$tmp/gpubin/device_info" <<'P'
#!/usr/bin/env bash
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
printf '# gpu: Stand-in GPU\ndevice,value\n' >"$out"
P
chmod +x "$tmp/gpubin/device_info"
printf 'fast_prog\tcuda\tcaching @peers\t-\t-\nrandom_churn\tcuda\t@peers\t-\t-\npeer_prog\tcuda\t-peer\t-\t-\n' >"$tmp/suite/a.tsv"
gbench=(scripts/bench.sh --bin "$tmp/gpubin" --no-plots)
check "quick: peers left out" 0 "${gbench[@]}" --quick --out "$tmp/qp"
expect "quick: peers left out" "quick tier: PyTorch's and RMM's allocators are left out"
[ "$(grep -c '^fast_prog,cuda,' "$tmp/qp/manifest.csv")" = 1 ] && ! grep -qE '^(random_churn|peer_prog),' "$tmp/qp/manifest.csv" &&
    passes=$((passes + 1)) || { echo "FAIL: --quick ran a peer:"; cat "$tmp/qp/manifest.csv"; failures=$((failures + 1)); }
check "quick --peers" 0 "${gbench[@]}" --quick --peers --out "$tmp/qpp"
[ "$(grep -c '^fast_prog,cuda,' "$tmp/qpp/manifest.csv")" = 7 ] && [ "$(grep -c '^random_churn,cuda,' "$tmp/qpp/manifest.csv")" = 6 ] &&
    [ "$(grep -c '^peer_prog,cuda,"-",' "$tmp/qpp/manifest.csv")" = 1 ] &&
    passes=$((passes + 1)) || { echo "FAIL: --quick --peers did not run the peers:"; cat "$tmp/qpp/manifest.csv"; failures=$((failures + 1)); }
check "default tier runs the peers" 0 "${gbench[@]}" --out "$tmp/dp"
[ "$(grep -c ',cuda,' "$tmp/dp/manifest.csv")" = 14 ] && passes=$((passes + 1)) ||
    { echo "FAIL: the default tier left peers out:"; cat "$tmp/dp/manifest.csv"; failures=$((failures + 1)); }
check "--peers without --quick" 2 "${gbench[@]}" --peers --out "$tmp/dpp"
expect "--peers without --quick" "--peers goes with --quick"
# --quick --full: every line (the full tier's too, peers included), each short.
printf 'fast_prog\tcuda\t@peers\t-\t-\tfullpeers\n' >"$tmp/suite/b.full.tsv"
check "quick full" 0 "${gbench[@]}" --quick --full --only fast_prog,random_churn,peer_prog --out "$tmp/qf"
[ "$(grep -c '^fast_prog,cuda,' "$tmp/qf/manifest.csv")" = 13 ] && [ "$(grep -c '^peer_prog,' "$tmp/qf/manifest.csv")" = 1 ] &&
    [ "$(find "$tmp/qf" -name 'fast_prog.fullpeers.*.csv' | wc -l)" = 6 ] && grep -q -- '--quick' "$tmp/qf/fast_prog.fullpeers.torch.csv" &&
    passes=$((passes + 1)) || { echo "FAIL: --quick --full:"; cat "$tmp/qf/manifest.csv"; failures=$((failures + 1)); }
rm "$tmp/suite/b.full.tsv"

checks_report "bench.sh checks"
[ "$failures" = 0 ]
