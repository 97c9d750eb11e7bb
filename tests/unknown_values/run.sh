#!/usr/bin/env bash
# Unknown is not a number: a CSV's empty field (the convention for an unknown or
# unmeasured value, lib/csv.h) is missing for every reader, never 0 or -1:
# scripts/compare and scripts/matrix (scripts/vramlab/results.py), the plots
# (plots/common.gp) and scripts/findings (tests/findings/run.sh covers it). No GPU.
cd "$(dirname "$0")/../.." || exit 2
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit

# Two complete single runs; B's peak ratio is unknown.
for s in A B; do
    mkdir -p "$tmp/$s"
    { echo "# vramlab: 0.1.0"; echo "# gpu: sim"; echo "# alloc: caching"
      echo "size_bytes,largest_over_total_free,peak_reserved_over_peak_allocated"
      echo "512,0.5,1.25"; } >"$tmp/$s/fragmentation_churn.caching.csv"
    echo "program,device,alloc,status,exit_code,seconds,csv" >"$tmp/$s/manifest.csv"
    echo "complete 2026-01-01T00:00:00Z jobs=1" >"$tmp/$s/COMPLETE"
done
sed -i 's/^512,0.5,1.25$/512,0.5,/' "$tmp/B/fragmentation_churn.caching.csv"

check "compare with an unknown value on one side" 0 scripts/compare --no-plots --out "$tmp/cmp" "$tmp/A" "$tmp/B"
expect "compare counts the unknown metric as missing in B" 'fragmentation_churn.caching.csv: 1 only in A, 1 same'
grep 'peak_reserved_over_peak_allocated' "$tmp/cmp/compare.csv" >"$tmp/out" 2>&1 || true
reject "compare.csv compares nothing for it (no 0, no -1 in its place)" '.'

check "matrix with an unknown value in a column" 0 scripts/matrix --no-plots --out "$tmp/mx" "$tmp/A" "$tmp/B"
expect "matrix says missing" 'B: 1 missing, 1 same'
grep ',peak_reserved_over_peak_allocated,' "$tmp/mx/matrix.csv" >"$tmp/out"
expect "matrix.csv: the B value is empty and the verdict missing" ',A,1\.25,1,,,,,,,missing,'

if command -v gnuplot >/dev/null; then
    printf 'a,b\n1,5\n2,\n3,7\n' >"$tmp/e.csv"
    printf "call 'plots/common.gp' ARG1 ARG2 ARG3\nset table \$t\nplot FILE[1] using 'a':'b'\nunset table\nprint \$t\n" >"$tmp/t.gp"
    check "plots: a column with an empty field" 0 gnuplot -c "$tmp/t.gp" "$tmp/o.png" "$tmp/e.csv" e
    expect "plots: the known points are drawn" '^ *3 +7 '
    reject "plots: the empty field is no point at 0" '^ *2 +'
    skipped=0
else
    echo "SKIP-PART: gnuplot not installed: the plots' reading of empty fields not checked"
    skipped=1
fi
checks_report test-unknown-values $skipped
[ "$failures" -eq 0 ]
