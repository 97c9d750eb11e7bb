#!/usr/bin/env bash
# Tests of make's command line (make test-make-cli, part of make test; no GPU; make -n
# and one object compiled into a scratch folder): a misspelt variable is an error naming the known
# ones; QUICK=0 is not quick; QUICK=2 is an error; ONLY, FULL, FORCE and RUN reach
# scripts/bench.sh; V=1 shows the compiler lines, which are quiet otherwise.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/support/checks.sh
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
expect "knobs reach bench.sh" "--full .*--only replay,alloc_latency"
expect "knobs reach bench.sh" "--run-id myrun --force --repeat 3"
check "ONLY= for fleet" 0 "${m[@]}" fleet ONLY=replay
expect "ONLY= for fleet" "--only replay"
# Quiet build: one object compiled for real into a scratch BUILD; no compiler line
# without V=1, the full command line with it.
check "quiet" 0 make --no-print-directory BUILD="$tmp/b" "$tmp/b/obj/lib/size.o"
reject "quiet" "gcc|-Wall"
rm -rf "$tmp/b"
check "V=1" 0 make --no-print-directory BUILD="$tmp/b" "$tmp/b/obj/lib/size.o" V=1
expect "V=1" "-Wall"

checks_report "make command-line checks"
[ "$failures" = 0 ]
