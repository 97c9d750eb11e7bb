#!/usr/bin/env bash
# Tests of scripts/compare (make test-compare, part of make test; no GPU):
#  - its statistics on synthetic samples with bimodal per-process noise (test_stats.py:
#    exact p-values, the A/A error rate over many trials, the power at a 20% shift,
#    interval coverage);
#  - the whole command on synthetic results folders (make-runs.py): repeated runs of
#    one build -> everything "same", exit 0; alloc x1.2 -> "slower" at every size,
#    REGRESSION, exit 1, free not slower, the clock difference warned about; faster ->
#    exit 0; more reserved memory -> "worse", exit 1; single runs -> "inconclusive" and
#    never a regression, even for a 1.6x slower allocator; a short row is reported, not
#    dropped silently; usage errors -> exit 2; scripts/ab and bench.sh --repeat on the
#    simulated device;
#  - the statistics against scipy (test_reference.py: the stored reference.json with any
#    python3, and live with a python3 that has scipy; test_covariate.py the same for the
#    covariate-adjusted ratio, against numpy and scipy);
#  - pairing and vacuity on experiments in make bench's files (make-ab-runs.py): caching
#    against caching:segments=expandable with B 25-30% slower -> every variant paired,
#    exit 1, the slower metrics named; A/A and a change of SPEC alone -> exit 0; nothing
#    in common, or quick against full -> exit 2 with the reason; an incomplete
#    repetition -> refused (exit 2), or flagged with --allow-incomplete;
#  - missing and failed programs (the A/A experiment, mutated): B without alloc_latency,
#    a job failed in B's manifest.csv, a job skipped on one side -> exit 1, each named
#    (compare and matrix); --allow-missing -> exit 0, said on the first and the last
#    line; skipped on both sides, or a run against itself -> exit 0;
#  - refusals in one line, exit 2, never a traceback: numeric options out of range
#    (nan, inf, negative, alpha/power outside (0, 1), resolve 0, plot-rows 0), and bad
#    input (hyperfine JSON invalid, a list, of the wrong types; a folder named x.csv; a
#    repeated column; text in a numeric column; a manifest without its columns; an
#    unreadable file), each naming the option or the file.
# A part that cannot run here is a skip, said on its own line (SKIP-PART) and counted in
# the last line's "P passed, F failed, S skipped", which scripts/run-tests.sh reads.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# scripts/compare, ab and bench.sh are under test, not the GPU: their programs see none,
# so a GPU box runs the simulated device, as CI does (tests/compare/gpu_*.sh use the GPU).
export CUDA_VISIBLE_DEVICES=
python3 tests/compare/make-runs.py "$tmp" || { echo "FAIL: make-runs.py"; exit 1; }
python3 tests/compare/make-ab-runs.py "$tmp/ab-fixtures" || { echo "FAIL: make-ab-runs.py"; exit 1; }
. tests/support/checks.sh
cmp=scripts/compare
skips=()
skip() { echo "SKIP-PART: $1"; skips+=("$1"); }

check "test_stats.py" 0 python3 tests/compare/test_stats.py
check "test_reference.py (stored reference)" 0 python3 tests/compare/test_reference.py
check "test_covariate.py (stored reference)" 0 python3 tests/compare/test_covariate.py
scipy_py=
for py in python3 /usr/bin/python3; do
    command -v "$py" >/dev/null && "$py" -c 'import scipy' 2>/dev/null && { scipy_py=$py; break; }
done
if [ -n "$scipy_py" ]; then
    check "test_reference.py --live ($scipy_py)" 0 "$scipy_py" tests/compare/test_reference.py --live
    check "test_covariate.py --live ($scipy_py)" 0 "$scipy_py" tests/compare/test_covariate.py --live
else
    skip "statistics against live scipy: no python3 here imports scipy (apt-get install python3-scipy)"
fi

# Pairing and vacuity on make bench's files.
ab=$tmp/ab-fixtures
check "B 25-30% slower under another SPEC" 1 $cmp --no-plots "$ab/slow/A" "$ab/slow/B"
expect "B slower" "paired: 6 file\(s\)"
for f in "alloc_latency.caching.csv ~ alloc_latency.caching_segments_expandable.csv" \
         "alloc_latency.beyond.caching.sim.csv ~ alloc_latency.beyond.caching_segments_expandable.sim.csv" \
         "random_churn.caching.csv ~ random_churn.caching_segments_expandable.csv" \
         "random_churn.caching.sim.csv ~ random_churn.caching_segments_expandable.sim.csv" \
         "random_churn.churn300k.caching.sim.csv ~ random_churn.churn300k.caching_segments_expandable.sim.csv"; do
    expect "B slower: pairs $f" "^  $f  \(alloc A: caching, B: caching:segments=expandable\)"
done
reject "B slower" "not paired"
expect "B slower" "side label that differs between paired files: alloc: A caching, B caching:segments=expandable"
expect "B slower" "setting: alloc=caching:segments=expandable"
for size in 512 8192 131072 2097152 33554432 536870912 1073741824; do
    expect "B slower: size $size named" "regressed beyond 5%: .*alloc_latency.caching.csv size_bytes=$size alloc_median_ns"
done
reject "B slower" "(free|cycle_sync)_median_ns +[0-9.]+ +[0-9.]+ .* slower"
check "A/A under one SPEC" 0 $cmp --no-plots "$ab/aa/A" "$ab/aa/B"
expect "A/A" "paired: 6 file"
expect "A/A" "no regression beyond the threshold over 121 metrics"
check "a change of SPEC alone" 0 $cmp --no-plots "$ab/cross/A" "$ab/cross/B"
check "nothing in common" 2 $cmp --no-plots "$ab/disjoint/A" "$ab/disjoint/B"
expect "nothing in common" "vacuous comparison: nothing compared"
expect "nothing in common" "A: alloc_latency.caching.csv \(42 metric\(s\)\): B has no alloc_latency"
expect "nothing in common" "B: random_churn.caching.csv \(11 metric\(s\)\): A has no random_churn"
reject "nothing in common" "no regression"
check "quick against full" 2 $cmp --no-plots "$ab/quick/A" "$ab/quick/B"
expect "quick against full" "alloc_latency.caching.csv .*: the parameters differ: here 'alloc_latency --quick', in B 'alloc_latency'"
mkdir -p "$tmp/little/rep-1" "$tmp/little/rep-2" "$tmp/little/rep-3" "$tmp/little/rep-4"
for k in 1 2 3 4; do  # B's alloc_latency measured other sizes but 512; no random_churn
    cp "$ab/aa/B/rep-$k/"* "$tmp/little/rep-$k/"
    sed -i '/^[0-9]/{/^512,/!s/^/1/}' "$tmp/little/rep-$k/alloc_latency.caching.csv" "$tmp/little/rep-$k/alloc_latency.beyond.caching.sim.csv"
    rm "$tmp/little/rep-$k/"random_churn*
done
check "a small share compared" 2 $cmp --no-plots "$ab/aa/A" "$tmp/little"
expect "a small share compared" "vacuous comparison: only 12 metric\(s\) compared, less than half of the 84"
check "an incomplete repetition" 2 $cmp --no-plots "$ab/partial/A" "$ab/slow/B"
expect "an incomplete repetition" "1 of 4 folder\(s\) of A .* are incomplete \(no COMPLETE.*first .*rep-3; finish or rerun it, or pass --allow-incomplete"
check "an incomplete repetition, allowed" 0 $cmp --no-plots --allow-incomplete "$ab/partial/A" "$ab/cross/B"
expect "an incomplete repetition, allowed" "^compare: INCOMPLETE: 1 of 4 folder"
check "summarize an incomplete run" 2 python3 scripts/vl compare.summarize "$ab/partial/A"
expect "summarize an incomplete run" "INCOMPLETE: 1 of 4 repetitions have no COMPLETE .*rep-3"
check "matrix across SPECs" 1 scripts/matrix --no-plots --out "$tmp/matrix" "$ab/slow/A" "$ab/slow/B"
expect "matrix across SPECs" "regression beyond 5% against A"
check "matrix, nothing in common" 2 scripts/matrix --no-plots --out "$tmp/matrix2" "$ab/disjoint/A" "$ab/disjoint/B"
expect "matrix, nothing in common" "vacuous comparison: B against A: nothing compared"
check "matrix, an incomplete column" 2 scripts/matrix --no-plots --out "$tmp/matrix3" "$ab/slow/A" "$ab/partial/A"

# Missing and failed programs are a finding, not "no regression" (make-ab-runs.py's A/A
# experiment, mutated). first_last PATTERN: the first and the last line of the output match.
first_last() {
    if head -1 "$tmp/out" | grep -qE -- "$2" && tail -1 "$tmp/out" | grep -qE -- "$2"; then passes=$((passes + 1)); else
        echo "FAIL: $1: first and last line not '$2' in:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1))
    fi
}
# one_line PATTERN: the output is one line, matching it (a refusal, no traceback).
one_line() {
    if [ "$(wc -l <"$tmp/out")" -eq 1 ] && grep -qE -- "$2" "$tmp/out"; then passes=$((passes + 1)); else
        echo "FAIL: $1: not one line '$2':"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1))
    fi
}
# mutant NAME: a copy of the A/A experiment to change, in $tmp/NAME/{A,B}.
mutant() { rm -rf "${tmp:?}/$1"; cp -r "$ab/aa" "$tmp/$1"; }
mutant gone
rm "$tmp/gone/B/rep-"*/alloc_latency*
check "B without alloc_latency" 1 $cmp --no-plots "$tmp/gone/A" "$tmp/gone/B"
expect "B without alloc_latency" "^missing or failed: 2 "
expect "B without alloc_latency" "^  A: alloc_latency.caching.csv \(42 metric\(s\)\): B has no alloc_latency$"
expect "B without alloc_latency" "^  A: alloc_latency.beyond.caching.sim.csv \(42 metric\(s\)\): B has no alloc_latency$"
expect "B without alloc_latency" "^compare: 2 program file\(s\) missing on one side or job\(s\) failed"
reject "B without alloc_latency" "no regression"
check "B without alloc_latency, --allow-missing" 0 $cmp --no-plots --allow-missing "$tmp/gone/A" "$tmp/gone/B"
first_last "B without alloc_latency, --allow-missing" \
    "^compare: --allow-missing: 2 file\(s\) missing on one side and 0 failed job\(s\) are not counted$"
expect "B without alloc_latency, --allow-missing" "^compare: no regression beyond the threshold"
# --out never lands in an input run or among the stored runs.
stored=results/reference
check "--out inside run A" 2 $cmp --no-plots --out "$tmp/gone/A/rep-1/x" "$tmp/gone/A" "$tmp/gone/B"
expect "--out inside run A" "is the input .* or inside it"
[ ! -e "$tmp/gone/A/rep-1/x" ] && passes=$((passes + 1)) || { echo "FAIL: --out inside run A: the folder was made"; failures=$((failures + 1)); }
check "--out in results/reference" 2 $cmp --no-plots --out "$stored/vl-test-out" "$tmp/gone/A" "$tmp/gone/B"
expect "--out in results/reference" "inside results/reference"
[ ! -e "$stored/vl-test-out" ] && passes=$((passes + 1)) || { echo "FAIL: --out in results/reference: the folder was made"; failures=$((failures + 1)); }
check "matrix --out onto a column" 2 scripts/matrix --no-plots --out "$tmp/gone/B" "$tmp/gone/A" "$tmp/gone/B"
check "matrix, a column without alloc_latency" 1 scripts/matrix --no-plots --out "$tmp/mx-gone" "$ab/aa/A" "$ab/aa/B" "$tmp/gone/B"
expect "matrix, a column without alloc_latency" "^  A: alloc_latency.caching.csv \(42 metric\(s\)\): gone/B has no alloc_latency$"
reject "matrix, a column without alloc_latency" "aa/B has no"
check "matrix, a column without alloc_latency, --allow-missing" 0 scripts/matrix --no-plots --allow-missing \
    --out "$tmp/mx-gone" "$ab/aa/A" "$tmp/gone/B"
first_last "matrix, --allow-missing" "^matrix: --allow-missing: 2 file\(s\) missing on one side"
mutant crash  # a job that crashed in one repetition of B: its CSV is there, its rows are not a result
sed -i 's/^alloc_latency,cuda,"caching",ok,0,\([^,]*\),\(.*\),""$/alloc_latency,cuda,"caching",failed,139,\1,\2,"Segmentation fault"/' \
    "$tmp/crash/B/rep-3/manifest.csv"
check "a job failed in B's manifest" 1 $cmp --no-plots "$tmp/crash/A" "$tmp/crash/B"
expect "a job failed in B's manifest" "^  failed in B: rep-3/manifest.csv: alloc_latency cuda caching, alloc_latency.caching.csv: failed, exit 139: Segmentation fault$"
reject "a job failed in B's manifest" "no regression"
check "matrix, a job failed in a column" 1 scripts/matrix --no-plots --out "$tmp/mx-crash" "$ab/aa/A" "$tmp/crash/B"
expect "matrix, a job failed in a column" "failed in B: rep-3/manifest.csv: alloc_latency cuda"
# skipped: bench.sh's line for a job that exited 77, and no CSV.
skip_job() { sed -i 's/^random_churn,sim,"caching",ok,0,\([^,]*\),random_churn.caching.sim.csv,""$/random_churn,sim,"caching",skipped,77,\1,random_churn.caching.sim.csv,"no GPU"/' "$1/manifest.csv"; rm "$1/random_churn.caching.sim.csv"; }
mutant skip1
for d in "$tmp/skip1/A/rep-"*; do skip_job "$d"; done
check "a job skipped on one side" 1 $cmp --no-plots "$tmp/skip1/A" "$tmp/skip1/B"
expect "a job skipped on one side" "^  B: random_churn.caching.sim.csv .*: A has no random_churn on the simulated device; A skipped it \(random_churn sim caching, random_churn.caching.sim.csv: skipped, exit 77: no GPU\)$"
mutant skip2
for d in "$tmp/skip2/A/rep-"* "$tmp/skip2/B/rep-"*; do skip_job "$d"; done
check "a job skipped on both sides" 0 $cmp --no-plots "$tmp/skip2/A" "$tmp/skip2/B"
reject "a job skipped on both sides" "missing or failed|not paired"
check "a run with itself" 0 $cmp --no-plots --out "$tmp/self" "$ab/aa/A" "$ab/aa/A"
check "a run with itself, no manifest" 0 $cmp --no-plots --out "$tmp/self2" "$tmp/r-a" "$tmp/r-a"

# Numeric options: finite and in range, else one line naming the option.
for opt in "--threshold nan" "--threshold inf" "--threshold -1" "--alpha 0" "--alpha 1.5" "--alpha nan" "--power 2" \
           "--power 0" "--resolve 0" "--resolve nan"; do
    check "compare $opt" 2 $cmp --no-plots $opt "$tmp/r-a" "$tmp/r-slow"
    one_line "compare $opt" "^compare: argument ${opt% *}: must be a finite number "
done
check "matrix --threshold nan" 2 scripts/matrix --no-plots --threshold nan --out "$tmp/mx-nan" "$tmp/r-a" "$tmp/r-slow"
one_line "matrix --threshold nan" "^matrix: argument --threshold: must be a finite number >= 0, not 'nan'"
check "matrix --plot-rows 0" 2 scripts/matrix --no-plots --plot-rows 0 --out "$tmp/mx-nan" "$tmp/r-a" "$tmp/r-slow"
one_line "matrix --plot-rows 0" "^matrix: argument --plot-rows: must be a finite integer >= 1"

# Bad input: one line naming the file, exit 2, never a traceback (exit 1 reads as a regression).
# bad NAME FILE CONTENT: r-b with FILE (under rep-3/) replaced by CONTENT, in $tmp/NAME.
bad() { rm -rf "${tmp:?}/$1"; cp -r "$tmp/r-b" "$tmp/$1"; rm -rf "$tmp/$1/rep-3/$2"; printf '%b' "$3" >"$tmp/$1/rep-3/$2"; }
hf=hyperfine/hyperfine.raw.json
bad badjson "$hf" '{"results": [{"command": "x", "times": [0.5,'
bad listjson "$hf" '[{"command": "x", "times": [0.5]}]'
bad typesjson "$hf" '{"results": [{"command": 3, "times": "0.5"}]}'
bad duphead alloc_latency.plugin.csv '# alloc: plugin:libslow_alloc.so\nsize_bytes,size_bytes\n512,512\n'
bad textcell random_churn.caching.csv '# alloc: caching\ndist,ops,batch_op_median_ns\nlog-uniform,20000,fast\n'
bad manifest manifest.csv 'job,outcome\nx,ok\n'
for case in "badjson:$hf: not JSON" "listjson:$hf: not a hyperfine export" "typesjson:$hf: results\[0\]: expected" \
            "duphead:alloc_latency.plugin.csv: bad header: column 'size_bytes' appears twice" \
            "textcell:random_churn.caching.csv: data row 1: column batch_op_median_ns holds 'fast', not a number" \
            "manifest:manifest.csv: bad header: no column program, status"; do
    name=${case%%:*} why=${case#*:}
    check "bad input: $name" 2 $cmp --no-plots "$tmp/r-a" "$tmp/$name"
    one_line "bad input: $name" "^compare: bad input: $tmp/$name/rep-3/$why"
done
check "matrix, bad input" 2 scripts/matrix --no-plots --out "$tmp/mx-bad" "$tmp/r-a" "$tmp/listjson"
one_line "matrix, bad input" "^matrix: bad input: $tmp/listjson/rep-3/$hf: not a hyperfine export"
check "summarize, bad input" 2 python3 scripts/vl compare.summarize "$tmp/typesjson"
one_line "summarize, bad input" "^summarize: bad input: $tmp/typesjson/rep-3/$hf"
rm -rf "$tmp/dircsv" && cp -r "$tmp/r-b" "$tmp/dircsv" && mkdir "$tmp/dircsv/rep-2/x.csv"
check "a folder named x.csv" 2 $cmp --no-plots "$tmp/r-a" "$tmp/dircsv"
one_line "a folder named x.csv" "^compare: bad input: $tmp/dircsv/rep-2/x.csv: a folder, not a file$"
rm -rf "$tmp/unread" && cp -r "$tmp/r-b" "$tmp/unread"
if [ "$(id -u)" != 0 ]; then
    chmod 000 "$tmp/unread/rep-2/random_churn.caching.csv"
else  # root reads any mode: a link to nothing fails the same open
    rm "$tmp/unread/rep-2/random_churn.caching.csv" && ln -s "$tmp/nowhere" "$tmp/unread/rep-2/random_churn.caching.csv"
fi
check "an unreadable file" 2 $cmp --no-plots "$tmp/r-a" "$tmp/unread"
one_line "an unreadable file" "^compare: bad input: $tmp/unread/rep-2/random_churn.caching.csv: cannot be read"
chmod -R u+rwX "$tmp/unread"

check "repeated runs of one build" 0 $cmp --no-plots "$tmp/r-a" "$tmp/r-b"
expect "repeated runs of one build" "29 metrics compared: "
expect "repeated runs of one build" "20 repetitions"
expect "repeated runs of one build" "machine state: the same"
reject "repeated runs of one build" "slower|faster|REGRESSION"
[ -s "$tmp/compare-r-a-vs-r-b/compare.csv" ] || { echo "FAIL: no compare.csv"; failures=$((failures + 1)); }
[ -s "$tmp/compare-r-a-vs-r-b/samples.csv" ] || { echo "FAIL: no samples.csv"; failures=$((failures + 1)); }
rows=$(grep -vc '^#' "$tmp/compare-r-a-vs-r-b/compare.csv")
# 6 sizes x (alloc, free medians, first_alloc, ooms) + churn (allocs, batch_op, 2 peaks) + hyperfine + header = 30
[ "$rows" -eq 30 ] || { echo "FAIL: compare.csv has $rows lines, expected 30"; failures=$((failures + 1)); }

check "alloc 20% slower" 1 $cmp --no-plots "$tmp/r-a" "$tmp/r-slow"
for size in 512 8192 131072 2097152 33554432 1073741824; do
    expect "alloc 20% slower, size $size" "size_bytes=$size +alloc_median_ns .* 1\.[12][0-9]* \[1\.[0-9]+, 1\.[0-9]+\] .* slower REGRESSION"
done
reject "alloc 20% slower" "free_median.*(slower|faster)"
expect "alloc 20% slower" "gpu0_sm_clock_mhz"
expect "alloc 20% slower" "WARNING: differs by more than 5%"
expect "alloc 20% slower" "regressed beyond 5%"

check "alloc 20% slower under a 50% threshold" 0 $cmp --no-plots --threshold 0.5 "$tmp/r-a" "$tmp/r-slow"
expect "alloc 20% slower under a 50% threshold" "slower"

check "faster" 0 $cmp --no-plots "$tmp/r-a" "$tmp/r-fast"
expect "faster" "alloc_median_ns .* faster"

check "more reserved memory" 1 $cmp --no-plots "$tmp/r-a" "$tmp/r-mem"
expect "more reserved memory" "peak_reserved_bytes .* worse REGRESSION"

check "single runs of one build" 0 $cmp --no-plots "$tmp/base" "$tmp/same"
expect "single runs of one build" "one repetition on at least one side"
expect "single runs of one build" "inconclusive \(the rank test needs >= 4 reps/side\)"
reject "single runs of one build" "slower|faster|REGRESSION"

check "single runs, 1.6x slower" 0 $cmp --no-plots "$tmp/base" "$tmp/slow"
expect "single runs, 1.6x slower" "driver +A: 580.159.04"
expect "single runs, 1.6x slower" "B: 590.10"
expect "single runs, 1.6x slower" "git_revision"
reject "single runs, 1.6x slower" "REGRESSION"

check "a short row" 0 $cmp --no-plots "$tmp/r-a" "$tmp/r-bad"
expect "a short row" "malformed row in B, not compared: rep-2/alloc_latency.plugin.csv: data row 7 has 3 fields"

check "missing folder" 2 $cmp "$tmp/r-a" "$tmp/nope"
check "bad option" 2 $cmp --threshold x "$tmp/r-a" "$tmp/r-b"
check "bad alpha" 2 $cmp --alpha 2 "$tmp/r-a" "$tmp/r-b"
mkdir -p "$tmp/empty"
check "empty folder" 2 $cmp "$tmp/r-a" "$tmp/empty"

if command -v gnuplot >/dev/null; then
    check "plots" 1 $cmp --out "$tmp/plots" "$tmp/r-a" "$tmp/r-slow"
    for png in compare.png strip-alloc_latency.png strip-random_churn.png overlay-alloc_latency.png; do
        [ -s "$tmp/plots/$png" ] || { echo "FAIL: no $png"; failures=$((failures + 1)); }
    done
fi

# The runners, on the simulated device (no GPU needed): bench.sh --repeat and scripts/ab.
# compare and summarize refuse a folder without COMPLETE, which scripts/bench.sh writes.
if [ ! -x build/bin/replay ]; then
    skip "build/bin not built: bench.sh --repeat and scripts/ab not exercised"
elif ! grep -q COMPLETE scripts/bench.sh; then
    skip "scripts/bench.sh writes no COMPLETE in this tree: bench.sh --repeat and scripts/ab not exercised"
else
    check "bench.sh --repeat 2" 0 scripts/bench.sh --repeat 2 --only replay --out "$tmp/rep" --no-plots
    for f in rep-1/manifest.csv rep-2/manifest.csv rep-1/machine.txt summary.csv; do
        [ -s "$tmp/rep/$f" ] || { echo "FAIL: bench.sh --repeat wrote no $f"; failures=$((failures + 1)); }
    done
    if command -v gnuplot >/dev/null; then
        check "plots of a repeated run" 0 timeout 120 scripts/plots.sh "$tmp/rep"
        for f in plots/spread.png rep-1/plots/replay.png rep-2/plots/replay.png; do
            [ -s "$tmp/rep/$f" ] || { echo "FAIL: plots.sh wrote no $f for a repeated run"; failures=$((failures + 1)); }
        done
    fi
    check "bench.sh --repeat 0" 2 scripts/bench.sh --repeat 0 --out "$tmp/rep0"
    check "ab, A/A noise on sim" 0 scripts/ab --noise --pairs 4 --only random_churn --out "$tmp/ab" "alloc=caching"
    expect "ab, A/A noise on sim" "pair 4/4 \(B A\)"
    expect "ab, A/A noise on sim" "noise at 4 pairs"
    for f in A/rep-4/manifest.csv B/rep-1/manifest.csv compare/compare.csv noise.csv ab.txt; do
        [ -s "$tmp/ab/$f" ] || { echo "FAIL: ab wrote no $f"; failures=$((failures + 1)); }
    done
    check "ab, bad setting" 2 scripts/ab --pairs 2 "alloc" "alloc=caching"
    check "ab, unknown key" 2 scripts/ab --pairs 2 "color=red" "alloc=caching"
    check "ab, bad pairs" 2 scripts/ab --pairs 0 "alloc=raw" "alloc=caching"
fi
# scripts/ab's refusals need the programs only, not COMPLETE.
if [ -x build/bin/alloc_latency ]; then
    check "ab, a SPEC no program accepts" 2 scripts/ab --pairs 2 --out "$tmp/ab-bad" "alloc=cachng" "alloc=caching"
    expect "ab, a SPEC no program accepts" "^ab: setting A: alloc=cachng: unknown allocator 'cachng'"
    [ ! -e "$tmp/ab-bad/A" ] || { echo "FAIL: ab ran a pass with a bad SPEC"; failures=$((failures + 1)); }
    check "ab, a bad SPEC option" 2 scripts/ab --pairs 2 --out "$tmp/ab-bad2" "alloc=caching" "alloc=caching:segmnts=x"
    expect "ab, a bad SPEC option" "setting B: alloc=caching:segmnts=x: caching: unknown option 'segmnts'"
    check "ab, one setting" 2 scripts/ab --pairs 2 --out "$tmp/ab-one" "alloc=caching"
    check "make ab without B" 2 make --no-print-directory ab A=alloc=caching
    expect "make ab without B" "give both A='...' and B='...'"
    # raw runs on a GPU only, and the programs see none here.
    check "ab, a side that runs nothing" 2 scripts/ab --pairs 2 --quick --only random_churn --out "$tmp/ab-none" \
        "alloc=raw" "alloc=caching"
    expect "ab, a side that runs nothing" "ab: side A \(alloc=raw\) ran nothing: no job of the suite"
    expect "ab, a side that runs nothing" "^ab: verdict: side A ran nothing: nothing to compare \(exit 2"
    grep -q "^status 2: side A ran nothing" "$tmp/ab-none/verdict.txt" ||
        { echo "FAIL: ab wrote no verdict.txt with status 2"; failures=$((failures + 1)); }
else
    skip "build/bin/alloc_latency not built: scripts/ab's refusals not exercised"
fi

# Each skipped part is counted as a skip (its reason printed above as SKIP-PART).
checks_report test-compare ${#skips[@]}
[ "$failures" -eq 0 ]
