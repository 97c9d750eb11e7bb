#!/usr/bin/env bash
# Tests of make's command line (make test-make-cli, part of make test; no GPU; make -n
# and one object compiled into a scratch folder): a misspelt variable is an error naming the known
# ones; QUICK=0 is not quick; QUICK=2 is an error; ONLY, FULL, FORCE and RUN reach
# scripts/bench.sh; V=1 shows the compiler lines, which are quiet otherwise; every variable
# the documentation puts on a make command line is one make accepts; a variable's value
# never runs as shell code in a recipe; RUN= may be a path for report and plots only (plots: without . or ..)
set -u
cd "$(dirname "$0")/../.."
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
m=(make --no-print-directory -n)

check "QUIK=1" 2 "${m[@]}" bench QUIK=1
expect "QUIK=1" "unknown variable QUIK on the command line; known: .*QUICK.*REPEAT"
check "REPAET=2" 2 "${m[@]}" bench REPAET=2
expect "REPAET=2" "unknown variable REPAET"
check "QUICK=2" 2 "${m[@]}" bench QUICK=2
expect "QUICK=2" "QUICK=2: use QUICK=1 or QUICK=0"
check "QUICK=0" 0 "${m[@]}" bench QUICK=0
expect "QUICK=0" "scripts/bench.sh"
reject "QUICK=0" "--quick"
check "QUICK=1" 0 "${m[@]}" bench QUICK=1
expect "QUICK=1" "scripts/bench.sh --quick"
check "knobs reach bench.sh" 0 "${m[@]}" bench ONLY=replay,alloc_latency FULL=1 FORCE=1 RUN=myrun REPEAT=3
expect "knobs reach bench.sh" "--full .*--only 'replay,alloc_latency'"
expect "knobs reach bench.sh" "--run-id 'myrun' --force --repeat '3'"
# Every variable the documentation gives on a make command line is one make accepts
# (FUZZ_TARGETS was refused once while README and lib/caching/README used it).
known=$("${m[@]}" test QUIK=1 2>&1 | sed -n 's/.*known: \(.*\)\.  Stop\./\1/p')
documented=$({ grep -rhoE "make [a-z][a-z0-9-]*( [A-Z_]+=[^ \`]*)+" README.md docs lib scripts mk tests
    # the rest of a line from its last "make X", up to a closing backquote: a generated
    # block's `make findings` is followed by another, non-make, command in backquotes
    grep -rhE "make [a-z][a-z0-9-]*" README.md docs lib scripts mk tests | sed -E 's/.*(make [a-z][a-z0-9-]*)/\1/; s/`.*//'
} 2>/dev/null | grep -oE "(^| |\[)[A-Z][A-Z0-9_]+=" | tr -d '= [' | sort -u)
if [ -z "$known" ] || [ -z "$documented" ]; then
    echo "FAIL: documented make variables: nothing to compare (known: '${known:0:40}', documented: '${documented:0:40}')"
    failures=$((failures + 1))
else
    missing=$(for v in $documented; do echo " $known " | grep -q " $v " || echo "$v"; done)
    if [ -n "$missing" ]; then
        echo "FAIL: variables in the documentation that make refuses: $missing"; failures=$((failures + 1))
    else passes=$((passes + 1)); fi
fi
check "ONLY= for fleet" 0 "${m[@]}" fleet ONLY=replay
expect "ONLY= for fleet" "--only 'replay'"
# RUN= a path under results/ for plots (a torch-bench run, as its docs say), never for bench;
# plots.sh refuses . and .. components, before it looks for the folder or for gnuplot
check "plots RUN=torch-bench/x" 0 "${m[@]}" plots RUN=torch-bench/x
expect "plots RUN=torch-bench/x" "scripts/plots.sh 'torch-bench/x'"
check "bench RUN=a/b" 2 "${m[@]}" bench RUN=a/b
check "plots.sh with .." 2 scripts/plots.sh torch-bench/../../tmp
expect "plots.sh with .." "a path with \. or \.\. in it is refused"
# Quiet build: one object compiled for real into a scratch BUILD; no compiler line
# without V=1, the full command line with it.
check "quiet" 0 make --no-print-directory BUILD="$tmp/b" "$tmp/b/obj/lib/size.o"
reject "quiet" "gcc|-Wall"
rm -rf "$tmp/b"
check "V=1" 0 make --no-print-directory BUILD="$tmp/b" "$tmp/b/obj/lib/size.o" V=1
expect "V=1" "-Wall"

# A variable's value is data to the recipe: shell syntax in it runs nothing (each of these
# fails on its bad value; what matters is that no touch ran).
check "GPUS with a ;" 2 make --no-print-directory bench QUICK=1 GPUS="x;touch $tmp/P1"
check "ONLY with a \$()" 2 make --no-print-directory ab A="alloc=\$(touch $tmp/P2)" B= ONLY="x';touch $tmp/P3;'"
make --no-print-directory hyperfine HYPERFINE_ONLY="x;touch $tmp/P4" HYPERFINE_RUNS="1;touch $tmp/P5" >/dev/null 2>&1
if ls "$tmp"/P* >/dev/null 2>&1; then
    echo "FAIL: a make variable's value ran as a command: $(ls "$tmp"/P* | tr '\n' ' ')"; failures=$((failures + 1))
else passes=$((passes + 1)); fi

checks_report "make command-line checks"
[ "$failures" = 0 ]
