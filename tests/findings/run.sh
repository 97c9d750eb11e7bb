#!/usr/bin/env bash
# Tests of scripts/findings (make findings / findings-check) without a GPU: the check
# passes on the tree and fails after a hand edit of a figure (on copies of README.md and
# the docs/*.md that hold blocks, which hold every block between them; a block in none of
# them, or in two, is an error);
# the generator on a fake results/reference/<device>-findings-<rev>/ folder of the
# layout tests/gpu/findings_remeasure.sh writes (rep-<k>/ with COMPLETE); unknown
# (empty) values, missing rows, incomplete repetitions and a malformed spec are errors.
cd "$(dirname "$0")/../.." || exit 2
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
gen=scripts/findings

# --- the tree's README -----------------------------------------------------------------
check "the tree's README matches the stored data" 0 $gen --check
expect "the check counts its blocks" '^findings-check: [1-9][0-9]* passed, 0 failed, 0 skipped$'

cp README.md "$tmp/README.md"
cp docs/caching-measured.md "$tmp/measured.md"
# the other docs that hold blocks (docs/findings.md, docs/running.md, ...), copied too
others=()
for d in docs/*.md; do
    [ "$d" = docs/caching-measured.md ] && continue
    grep -q '^<!-- findings:[a-z0-9_]* begin' "$d" || continue
    cp "$d" "$tmp/doc-${d#docs/}"; others+=("$tmp/doc-${d#docs/}")
done
# Change the first figure inside the first generated table: 2,993 steps/s -> 2,994 etc.
python3 - "$tmp/README.md" <<'PY'
import re, sys
p = sys.argv[1]
t = open(p).read()
a = t.index("<!-- findings:findings_table begin")
b = t.index("<!-- findings:findings_table end")
m = re.search(r"steps/s on 1 stream", t[a:b])
i = a + m.start() - 2          # the last digit of the figure before it
d = t[i]
assert d.isdigit(), d
t = t[:i] + str((int(d) + 1) % 10) + t[i + 1:]
open(p, "w").write(t)
PY
check "a hand-edited figure fails the check" 1 $gen --check "$tmp/README.md" "${others[@]}" "$tmp/measured.md"
expect "the failing block is named" 'block\(s\) findings_table differ'
expect "the failure is counted" '^findings-check: [0-9]+ passed, 1 failed, 0 skipped$'
check "make findings on the copy restores it" 0 $gen "$tmp/README.md" "${others[@]}" "$tmp/measured.md"
check "and the restored copy passes" 0 $gen --check "$tmp/README.md" "${others[@]}" "$tmp/measured.md"
cmp -s README.md "$tmp/README.md" && cmp -s docs/caching-measured.md "$tmp/measured.md" && passes=$((passes + 1)) ||
    { echo "FAIL: restored copies differ from README.md and docs/caching-measured.md"; failures=$((failures + 1)); }
check "a block in neither file is an error" 2 $gen --check "$tmp/README.md"
expect "a block in neither file is an error" 'no markers for block\(s\) .*park_pair'
cp "$tmp/measured.md" "$tmp/twice.md"
check "a block in two files is an error" 2 $gen --check "$tmp/README.md" "${others[@]}" "$tmp/measured.md" "$tmp/twice.md"
expect "a block in two files is an error" 'block [a-z0-9_]+ appears in both .*measured.md and .*twice.md'

# --- a fake remeasured folder -----------------------------------------------------------
root=$tmp/root
mkdir -p "$root/results/reference/h100-findings-abc1234" "$tmp/spec/blocks"
csv() { # FILE ALLOC VALUE...: a free_stall-like CSV with one loop row per value
    local f=$1 alloc=$2; shift 2
    { printf '# git_revision: abc1234def00\n# gpu: NVIDIA H100 80GB HBM3\n# driver: 580.159.04 (CUDA 13.0)\n'
      printf '# command: build/bin/free_stall --alloc %s -o %s\n' "$alloc" "$f"
      echo "test,variant,streams,steps_per_s"
      for v in "$@"; do echo "loop,alloc_free_per_iter,4,$v"; done; } >"$f"
}
for k in 1 2 3 4 5; do
    d=$root/results/reference/h100-findings-abc1234/rep-$k
    mkdir -p "$d"
    csv "$d/free_stall.raw.csv" raw $((3000 + k))
    csv "$d/free_stall.caching.csv" caching $((75000 + 100 * k))
    echo "complete 2026-01-01T00:00:00Z jobs=2" >"$d/COMPLETE"
done
printf 'block\tfake\tresults/reference/h100-findings-*\t@meta\n' >"$tmp/spec/figures.tsv"
printf 'fig\tfake\traw\trep-*/free_stall.raw.csv\ttest=loop,streams=4\tsteps_per_s\tmedian\t,.0f\n' >>"$tmp/spec/figures.tsv"
printf 'fig\tfake\traw_range\trep-*/free_stall.raw.csv\ttest=loop\tsteps_per_s\trange\t,.0f\n' >>"$tmp/spec/figures.tsv"
printf 'fig\tfake\tratio\trep-*/free_stall.*.csv\tsteps_per_s>=10000\tsteps_per_s\tratio_hl\t.1f\tsteps_per_s<=10000\n' >>"$tmp/spec/figures.tsv"
echo '| raw | {raw} ({raw_range}) | caching against raw {ratio} |' >"$tmp/spec/blocks/fake.md"
printf '# x\n\n<!-- findings:fake begin -->\n<!-- findings:fake end -->\n\ntail\n' >"$root/README.md"
run() { $gen --root "$root" --spec "$tmp/spec/figures.tsv" "$@"; }
check "generate from a repeated findings folder" 0 run
cp "$root/README.md" "$tmp/out"
expect "median and range over the repetitions" '\| raw \| 3,003 \(3,001–3,005\) \|'
expect "the ratio with its interval" 'caching against raw ×25\.1 \[25\.0, 25\.1\]'
expect "the block names its data" 'source: results/reference/h100-findings-abc1234; revision abc1234def00; device NVIDIA H100 80GB HBM3; driver 580.159.04'
expect "and its command" 'build/bin/free_stall --alloc (raw|caching)'
expect "text outside the block is kept" '^tail$'
check "the generated README passes the check" 0 run --check

rm "$root/results/reference/h100-findings-abc1234/rep-3/COMPLETE"
check "a repetition without COMPLETE is refused" 2 run
expect "naming it" 'rep-3 has no COMPLETE'
echo "complete" >"$root/results/reference/h100-findings-abc1234/rep-3/COMPLETE"

sed -i 's/^loop,alloc_free_per_iter,4,3001$/loop,alloc_free_per_iter,4,/' \
    "$root/results/reference/h100-findings-abc1234/rep-1/free_stall.raw.csv"
printf 'fig\tfake\tone\trep-1/free_stall.raw.csv\ttest=loop\tsteps_per_s\tvalue\t.0f\n' >>"$tmp/spec/figures.tsv"
echo '{one}' >>"$tmp/spec/blocks/fake.md"
check "an unknown (empty) value is an error, not 0" 2 run
expect "saying so" 'only unknown \(empty\) values'
reject "never printed as a number" '\| raw \| 0'
cp "$tmp/out" "$tmp/unknown.out"
check "a median skips the unknown value instead of reading it as 0" 0 python3 -c "
import sys; sys.path[:0] = ['scripts']
from vramlab.findings import figures, spec, stored
b = spec.load('$tmp/spec/figures.tsv')[0]
f = [x for x in b.figures if x.name == 'raw'][0]
v = figures.evaluate(f, stored.resolve_folder('$root', b.folder), figures.Source(), False)
assert v == '3,004', v"

echo "loop,alloc_free_per_iter,4" >>"$root/results/reference/h100-findings-abc1234/rep-2/free_stall.raw.csv"
check "a malformed row is an error, not skipped" 2 run
expect "naming the file and row" 'rep-2/free_stall.raw.csv: data row 2 has 3 fields, the header 4'
sed -i '$d' "$root/results/reference/h100-findings-abc1234/rep-2/free_stall.raw.csv"

printf 'fig\tfake\tnone\trep-1/free_stall.raw.csv\ttest=nope\tsteps_per_s\tvalue\t.0f\n' >"$tmp/spec/bad.tsv"
check "a figure of an unknown block is a spec error" 2 $gen --root "$root" --spec "$tmp/spec/bad.tsv"
expect "naming the line" 'figures.tsv:1: figure none of unknown block fake'
head -3 "$tmp/spec/figures.tsv" >"$tmp/spec/nomatch.tsv"
printf 'fig\tfake\tone\trep-1/free_stall.raw.csv\ttest=nope\tsteps_per_s\tvalue\t.0f\n' >>"$tmp/spec/nomatch.tsv"
check "a figure matching no row is an error" 2 $gen --root "$root" --spec "$tmp/spec/nomatch.tsv"
expect "saying so" 'no row in rep-1/free_stall.raw.csv'
printf 'block\tfake\tresults/reference/h100-findings-*\t@meta\nfig\tfake\tx\ta.csv\t-\tc\tmode\t.0f\n' >"$tmp/spec/stat.tsv"
check "an unknown statistic is a spec error" 2 $gen --root "$root" --spec "$tmp/spec/stat.tsv"
expect "naming it" "unknown STAT 'mode'"
sed -i '$d' "$tmp/spec/blocks/fake.md"
head -4 "$tmp/spec/figures.tsv" >"$tmp/spec/four.tsv" && mv "$tmp/spec/four.tsv" "$tmp/spec/figures.tsv"
sed -i '/findings:fake end/d' "$root/README.md"
check "a block without its end line is an error" 2 run
expect "naming it" 'block fake has no end line'

# --- statistics across files, a ratio against other files, an archive ---------------------
printf 'block\tagg\tresults/reference/h100-findings-*\t@meta\n' >"$tmp/spec/agg.tsv"
printf 'fig\tagg\tsums\trep-*/free_stall.caching.csv\t-\tsteps_per_s\trange(sum)\t.0f\n' >>"$tmp/spec/agg.tsv"
printf 'fig\tagg\tr\trep-*/free_stall.caching.csv\t-\tsteps_per_s\tratio(max)\t.2f\tfile=rep-*/free_stall.raw.csv\n' >>"$tmp/spec/agg.tsv"
mkdir -p "$tmp/spec/blocks" && echo '{sums} {r}' >"$tmp/spec/blocks/agg.md"
printf '<!-- findings:agg begin -->\n<!-- findings:agg end -->\n' >"$root/AGG.md"
check "range(sum) and ratio(max) against other files" 0 $gen --root "$root" --spec "$tmp/spec/agg.tsv" "$root/AGG.md"
cp "$root/AGG.md" "$tmp/out"
expect "each file's sum, then the range; max over the other files' max (rep-1's raw value is unknown, skipped)" '^75100–75500 25\.12$'
( cd "$root/results/reference" && tar czf h100-findings-abc1234.tgz h100-findings-abc1234 )
printf 'block\tagg\tresults/reference/h100-findings-abc1234.tgz\t@meta\n' >"$tmp/spec/tgz.tsv"
sed -n '2,3p' "$tmp/spec/agg.tsv" | sed 's#rep-\*/#h100-findings-abc1234/rep-*/#g' >>"$tmp/spec/tgz.tsv"
cp "$tmp/spec/tgz.tsv" "$tmp/spec/agg.tsv"
check "a stored archive is read as its folder" 0 $gen --root "$root" --spec "$tmp/spec/agg.tsv" "$root/AGG.md"
cp "$root/AGG.md" "$tmp/out"
expect "the same figures from the archive" '^75100–75500 25\.12$'
expect "the block names the archive" 'source: results/reference/h100-findings-abc1234\.tgz;'

# a folder stored as an archive of itself (FOLDER.txz beside it) reads as FOLDER: each
# repetition packed (rep-*.txz matched by rep-*), and the block's own folder packed
packed=$root/results/reference/h100-packed-abc1234
mkdir -p "$packed/whole"
cp -r "$root/results/reference/h100-findings-abc1234"/rep-* "$packed/whole/"
for r in "$packed"/whole/rep-*; do
    ( cd "$r" && tar cJf "../$(basename "$r").txz" . ) && rm -r "$r"
done
printf 'block	agg	results/reference/h100-packed-abc1234/whole	@meta
' >"$tmp/spec/packed.tsv"
sed -n '2,3p' "$tmp/spec/tgz.tsv" | sed 's#h100-findings-abc1234/rep-\*/#rep-*/#g' >>"$tmp/spec/packed.tsv"
check "repetitions stored as rep-K.txz are read as rep-K/" 0 $gen --root "$root" --spec "$tmp/spec/packed.tsv" "$root/AGG.md"
cp "$root/AGG.md" "$tmp/out"
expect "the same figures from the packed repetitions" '^75100–75500 25\.12$'
expect "the block names the folder, not the archives" 'source: results/reference/h100-packed-abc1234/whole;'
( cd "$packed/whole" && tar cJf ../whole.txz . ) && rm -r "$packed/whole"
check "a block folder stored as FOLDER.txz is read as FOLDER" 0 $gen --root "$root" --spec "$tmp/spec/packed.tsv" "$root/AGG.md"
cp "$root/AGG.md" "$tmp/out"
expect "the same figures again" '^75100–75500 25\.12$'
rm "$packed/whole.txz"
check "no folder and no archive: an error" 2 $gen --root "$root" --spec "$tmp/spec/packed.tsv" "$root/AGG.md"
expect "naming the folder" 'no stored data at results/reference/h100-packed-abc1234/whole'

mkdir -p "$tmp/evil" && echo x >"$tmp/evil/x.csv"
python3 -c "
import tarfile, sys
with tarfile.open(sys.argv[1], 'w:gz') as t:
    t.add(sys.argv[2], arcname='../escape.csv')" "$root/results/reference/h100-findings-abc1234.tgz" "$tmp/evil/x.csv"
check "an archive member outside its folder is refused" 2 $gen --root "$root" --spec "$tmp/spec/agg.tsv" "$root/AGG.md"
expect "naming it" 'member ../escape.csv leaves the archive'

# --- a text figure: one row's words as stored, nothing else --------------------------------
tdir=$root/results/reference/h100-text-abc1234
mkdir -p "$tdir" && touch "$tdir/COMPLETE" && printf '# git_revision: abc1234\nworkload,binds\nwA,cold replay; step time\nwB,<b>x</b>\nwC,a\nwC,b\n' >"$tdir/t.csv"
printf 'block\ttxt\tresults/reference/h100-text-abc1234\tcmd\n' >"$tmp/spec/text.tsv"
printf 'fig\ttxt\twhy\tt.csv\tworkload=wA\tbinds\ttext\ts\n' >>"$tmp/spec/text.tsv"
echo 'wA: {why}' >"$tmp/spec/blocks/txt.md"
printf '<!-- findings:txt begin -->\n<!-- findings:txt end -->\n' >"$root/TXT.md"
check "a text figure" 0 $gen --root "$root" --spec "$tmp/spec/text.tsv" "$root/TXT.md"
cp "$root/TXT.md" "$tmp/out"
expect "prints the stored words" '^wA: cold replay; step time$'
# text_case SED WHAT RC SAYS PATTERN: edit the text figure's spec with SED, then the
# generator exits RC and its output (the block, or stderr) matches PATTERN
text_case() {
    sed -i "$1" "$tmp/spec/text.tsv"
    check "$2" "$3" $gen --root "$root" --spec "$tmp/spec/text.tsv" "$root/TXT.md"
    [ "$3" = 0 ] && cp "$root/TXT.md" "$tmp/out"
    expect "$4" "$5"
}
text_case 's/workload=wA/workload=wB/' "a text with markup is refused" 2 \
    "naming it" 'holds characters a findings block does not print'
text_case 's/workload=wB/workload=wC/' "a text figure matching two rows is an error" 2 \
    "saying so" "'text' needs exactly one row, 2 match"
printf 'wD,\n' >>"$tdir/t.csv"
text_case 's/workload=wC/workload=wD/' "an empty text without a fallback is an error" 2 \
    "saying it is unknown" 'only unknown .empty. values'
text_case 's/\ttext\ts$/\ttext\ts|none/' "an empty text with FORMAT|TEXT" 0 "prints the fallback" '^wA: none$'

# --- the real findings_rep block on a fake folder of tests/gpu/findings_remeasure.sh's layout ---
rep_root=$tmp/reproot
mkdir -p "$tmp/repspec/blocks" "$rep_root"
grep -P '^(block|fig)\tfindings_rep\t' scripts/vramlab/findings/figures.tsv >"$tmp/repspec/figures.tsv"
cp scripts/vramlab/findings/blocks/findings_rep.md "$tmp/repspec/blocks/"
printf '<!-- findings:findings_rep begin -->\n<!-- findings:findings_rep end -->\n' >"$rep_root/README.md"
check "findings_rep before any data is stored" 0 $gen --root "$rep_root" --spec "$tmp/repspec/figures.tsv"
cp "$rep_root/README.md" "$tmp/out"
expect "says it is not measured yet" '^_Not measured yet: nothing is stored at'
reject "and shows no figure" '\| [0-9]'
for k in 1 2 3 4 5; do  # 5 repetitions: the H200 run's CSVs, as bench.sh --repeat lays them out
    d=$rep_root/results/reference/h100-findings-abc1234/rep-$k
    mkdir -p "$d" && cp results/reference/h200-full/*.csv "$d/" && echo "complete x jobs=1" >"$d/COMPLETE"
done
check "findings_rep from 5 stored repetitions" 0 $gen --root "$rep_root" --spec "$tmp/repspec/figures.tsv"
cp "$rep_root/README.md" "$tmp/out"
expect "the median over the 5 processes" 'median over 5 processes'
expect "a figure with its range and ratio" '^\| free_stall, 4 streams, 50 µs kernels: steps/s \(raw\) \| `cudaMalloc`/`cudaFree` per step: 3,004 \(3,004\) \| allocated once: 69,968 \(69,968\) \| ×23\.29 \[23\.29, 23\.29\] \|$'
reject "no unfilled placeholder" '\{[a-z0-9_]+\}'
rm "$rep_root/results/reference/h100-findings-abc1234/rep-5/COMPLETE"
check "an unfinished repetition is refused" 2 $gen --root "$rep_root" --spec "$tmp/repspec/figures.tsv"

# --- help texts carry no measurements (they would go stale, unchecked) -----------------
bin=${VL_BIN:-build/bin}
check "the allocators' help" 0 "$bin/alloc_latency" --alloc help
expect "lists the caching options" '^  caching '
reject "names no measuring device" 'H100|H200|A100'
reject "quotes no measured time or before -> after figure" '[0-9]+ ?(us|ns|ms)\b|-> ?[0-9]'

checks_report test-findings
[ "$failures" -eq 0 ]
