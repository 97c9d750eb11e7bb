#!/usr/bin/env bash
# End-to-end test of `make hyperfine` (scripts/compare.d/hyperfine.sh) on the simulated
# device (make test-hyperfine, part of make test; the programs are shown no GPU):
#  - a labelled suite line (random_churn's churn300k) is timed under its own name in the
#    JSON, beside the same program's unlabelled line;
#  - every selected job (suite line x allocator) is timed or left out with its reason and
#    the counts add up; a program that fails its probe run is left out with its exit code
#    and first stderr line;
#  - the programs' CSVs go to a scratch folder that is deleted: none in the results, none
#    left in TMPDIR, and /dev/null is still a character device;
#  - a bogus --only exits 2 naming the suite's programs; a bad --run-id exits 2 and makes
#    nothing; a run folder that another process holds is refused, naming its pid;
#  - make hyperfine passes its knobs to the script.
# Skips (77) where hyperfine is not installed. About 15 s on 2 cores.
#   usage: tests/hyperfine/run.sh [BUILD]
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
command -v hyperfine >/dev/null || { echo "SKIP: hyperfine is not installed (apt-get install hyperfine; CI installs it)"; exit 77; }
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
export CUDA_VISIBLE_DEVICES= VL_RESULTS=$tmp/results TMPDIR=$tmp/tmpdir
mkdir -p "$TMPDIR"
hf=(scripts/compare.d/hyperfine.sh --bin "$build/bin" --runs 2 --warmup 0)
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { passes=$((passes + 1)); }
for p in device_info random_churn alloc_latency; do
    [ -x "$build/bin/$p" ] || { fail "$build/bin/$p is not built"; checks_report "hyperfine checks"; exit 1; }
done

# The jobs the suite gives PROG,PROG...: one per (line, allocator), @all and @peers expanded.
jobs_of() {
    awk -F'\t' -v only=",$1," '$1 != "" && $1 !~ /^#/ && index(only, "," $1 ",") {
        n = split($3, a, " "); for (i = 1; i <= n; i++) c += (a[i] == "@all" ? 4 : a[i] == "@peers" ? 6 : 1) }
        END { print c + 0 }' scripts/suite.d/*.tsv
}
# The names hyperfine timed in a JSON, one a line, with the count of their runs.
names_of() {
    python3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["results"]: print(r["command"], len(r["times"]))' "$1"
}

check "two programs, one line labelled" 0 "${hf[@]}" --only random_churn,alloc_latency --run-id e2e
cp "$tmp/out" "$tmp/e2e.log"
for tag in caching caching_segments_expandable; do
    json=$VL_RESULTS/e2e/hyperfine/hyperfine.$tag.json
    [ -f "$json" ] || { fail "no $json"; continue; }
    names_of "$json" >"$tmp/names"
    for want in "random_churn.churn300k 2" "random_churn 2" "alloc_latency.beyond 2"; do
        grep -qxF "$want" "$tmp/names" && ok || { fail "$tag: '$want' not timed:"; cat "$tmp/names"; }
    done
done
want=$(jobs_of random_churn,alloc_latency)
read -r timed left < <(sed -n 's/^hyperfine: timed \([0-9]*\), left out \([0-9]*\) .*/\1 \2/p' "$tmp/e2e.log")
in_json=$(cat "$VL_RESULTS"/e2e/hyperfine/*.json | grep -c '"command"')
listed=$(sed -n 's/^  left out: .* under \(.*\)/\1/p' "$tmp/e2e.log" | sed 's/: .*//' | wc -w)
[ -n "${timed:-}" ] && [ "$((timed + left))" = "$want" ] && [ "$timed" = "$in_json" ] && [ "$left" = "$listed" ] && ok ||
    { fail "counts: timed ${timed:-?} + left out ${left:-?} of $want jobs, $in_json in the JSONs, $listed listed:"; cat "$tmp/e2e.log"; }
grep -q "^  left out: random_churn (scripts/suite.d/bench.tsv:[0-9]*) under .*: devices 'cuda': no GPU here" "$tmp/e2e.log" && ok ||
    { fail "the cuda line is not left out with its reason:"; cat "$tmp/e2e.log"; }
[ -z "$(find "$VL_RESULTS/e2e" -name '*.csv' ! -name 'hyperfine.*.csv')" ] && ok || fail "a program's CSV is in the results"
[ -z "$(ls -A "$TMPDIR")" ] && ok || fail "the scratch folder was left: $(ls -A "$TMPDIR")"
[ -f "$VL_RESULTS/e2e/COMPLETE" ] && [ -f "$VL_RESULTS/e2e/.vramlab-run" ] && ok || fail "no COMPLETE or .vramlab-run in the run"
[ -c /dev/null ] && ok || fail "/dev/null is no longer a character device"

# A program whose probe fails: left out with its exit code and first stderr line.
mkdir -p "$tmp/bin"
ln -s "$(realpath "$build/bin/device_info")" "$tmp/bin/device_info"
printf '#!/usr/bin/env bash\necho "stand-in: cannot start" >&2; echo "second line" >&2; exit 3\n' >"$tmp/bin/alloc_latency"
chmod +x "$tmp/bin/alloc_latency"
check "a failing probe" 0 scripts/compare.d/hyperfine.sh --bin "$tmp/bin" --runs 2 --warmup 0 --only alloc_latency --run-id probe
expect "a failing probe" "^  left out: alloc_latency.beyond \(scripts/suite.d/bench.tsv:[0-9]+\) under caching caching:segments=expandable: exit 3: stand-in: cannot start$"
expect "a failing probe" "^hyperfine: timed 0, left out $(jobs_of alloc_latency) "

# Mistakes: one line, exit 2, nothing made.
check "bogus --only" 2 "${hf[@]}" --only random_churn,bogus
expect "bogus --only" "unknown program 'bogus' \(the suite's programs: .*random_churn"
for id in ../x .hidden a/b "" reference; do
    check "--run-id '$id'" 2 "${hf[@]}" --only random_churn --run-id "$id"
done
[ ! -e "$tmp/x" ] && [ ! -e "$VL_RESULTS/.hidden" ] && [ ! -e "$VL_RESULTS/a" ] && [ ! -e "$VL_RESULTS/reference" ] && ok ||
    fail "a refused run id made a folder: $(ls -A "$tmp" "$VL_RESULTS")"

# A run folder another process holds (a bench.sh run writing it): refused, with its pid.
mkdir -p "$VL_RESULTS/held"
flock "$VL_RESULTS/held/.vramlab-run" sleep 30 &
holder=$!
printf 'run_id: held\npid: %s\n' "$holder" >>"$VL_RESULTS/held/.vramlab-run"
for _ in $(seq 50); do flock -n "$VL_RESULTS/held/.vramlab-run" true || break; sleep 0.1; done
check "a held run folder" 2 "${hf[@]}" --only random_churn --run-id held
expect "a held run folder" "being written by another run \(pid $holder\)"
kill "$holder"; wait "$holder" 2>/dev/null

check "make hyperfine's knobs" 0 make --no-print-directory -n hyperfine BUILD="$build" RUN=myrun HYPERFINE_ONLY=random_churn HYPERFINE_RUNS=3
expect "make hyperfine's knobs" "hyperfine.sh --bin $build/bin --runs '3' --run-id 'myrun'"
expect "make hyperfine's knobs" "--only 'random_churn'"

checks_report "hyperfine checks"
[ "$failures" = 0 ]
