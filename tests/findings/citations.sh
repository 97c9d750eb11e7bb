#!/usr/bin/env bash
# Tests of scripts/vl findings.citations (make citations-check) without a GPU: the tree
# passes; on a fake tree, a stored run that nothing cites, a citation of a run or file
# that is not stored, a figures.tsv block matching nothing and an empty file under
# results/ each fail, naming it; a run named by a cited run's README, by its bare name, by
# a figures.tsv glob (the newest match) or a pending block passes; a run cited only by an
# uncited run's README, or only by results/README.md, does not. Both ways of listing the
# files: git ls-files in a git checkout (ignored files left out), a walk elsewhere.
cd "$(dirname "$0")/../.." || exit 2
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
cit="scripts/vl findings.citations"
ref=results/reference   # written as $ref/NAME so this file cites no stored run itself

check "the tree's stored runs and citations agree" 0 $cit
expect "counted" '^citations-check: [0-9]+ stored runs, [0-9]+ cited; 0 problem\(s\)$'

# --- a fake tree ---------------------------------------------------------------------------
root=$tmp/root
mkdir -p "$root/$ref" "$root/docs" "$root/tests" "$root/scripts/vramlab/findings"
run() { # NAME FILE...: a stored run with those files, each holding a line
    local d=$root/$ref/$1; shift
    mkdir -p "$d"
    for f in "$@"; do mkdir -p "$(dirname "$d/$f")" && echo "x,y" >"$d/$f"; done
}
run cited-a README.txt a.csv
run cited-b README.txt b.csv
run input-of-b README.txt traces.txz
run by-bare-name README.txt c.csv
run glob-old-1 d.csv
run glob-old-2 d.csv
run only-by-uncited README.txt e.csv
run uncited README.txt f.csv
echo "![x](../$ref/cited-a/a.csv) and \`$ref/cited-b/\`" >"$root/README.md"
echo "as in by-bare-name/c.csv" >"$root/docs/notes.md"
echo "replays ../input-of-b/traces.txz" >"$root/$ref/cited-b/README.txt"
echo "baseline: ../only-by-uncited/" >"$root/$ref/uncited/README.txt"
printf '# catalogue\n| `reference/uncited/` | listed |\n' >"$root/results/README.md"
printf 'block\tg\t%s/glob-old-*\tcmd\nblock\tp\t%s/not-yet-*\tcmd\tpending\n' "$ref" "$ref" \
    >"$root/scripts/vramlab/findings/figures.tsv"
# a test building its own fake run: neither a citation nor dangling
printf 'd=$root/%s/fake-run\nexpect "x" "source: %s/fake-run"\n' "$ref" "$ref" >"$root/tests/fake.sh"

c() { $cit --root "$root" "$@"; }
check "uncited runs fail" 1 c
expect "naming the uncited run" "citations: $ref/uncited: a stored run that nothing cites"
expect "a run cited only by an uncited run's README is uncited" "citations: $ref/only-by-uncited: a stored run that nothing cites"
expect "a figures.tsv glob cites only its newest match" "citations: $ref/glob-old-1: a stored run that nothing cites"
reject "a run a doc links to is cited" "$ref/cited-a:"
reject "a run a cited run's README names is cited" "$ref/input-of-b:"
reject "a bare name is a citation" "$ref/by-bare-name:"
reject "the newest match of a figures.tsv glob is cited" "$ref/glob-old-2:"
reject "a pending block matching nothing is no error" "not-yet"
reject "a test's fake run is no citation" "fake-run"
expect "the count" '^citations-check: 8 stored runs, 5 cited; 3 problem\(s\)$'
check "--list names who cites each run" 1 c --list
expect "a cited run's README" "^input-of-b	1	$ref/cited-b/README.txt:1$"

rm -r "$root/$ref/uncited" "$root/$ref/only-by-uncited" "$root/$ref/glob-old-1"
printf '# catalogue\n' >"$root/results/README.md"
check "every stored run cited, every citation stored: passes" 0 c

echo "see \`$ref/gone-run/x.csv\`." >>"$root/docs/notes.md"
check "a citation of a run that is not stored fails" 1 c
expect "naming the citation and the file" "citations: docs/notes.md:2: $ref/gone-run/x.csv does not exist"
echo "the figure: $ref/cited-a/plot.png" >"$root/docs/notes.md"
echo "and by-bare-name" >>"$root/docs/notes.md"
check "a citation of a file that is not stored in a stored run fails" 1 c
expect "naming it" "docs/notes.md:1: $ref/cited-a/plot.png does not exist"
echo "x" >"$root/$ref/cited-a/plot.png"
echo "replays ../input-of-b/gone.txz" >"$root/$ref/cited-b/README.txt"
check "a cited run's README naming a file another run lacks fails" 1 c
expect "naming it" "$ref/cited-b/README.txt:1: $ref/input-of-b/gone.txz does not exist"
echo "replays ../input-of-b/traces.txz" >"$root/$ref/cited-b/README.txt"
printf '| `reference/gone-too/` | listed |\n' >>"$root/results/README.md"
check "a catalogue row of a run that is not stored fails" 1 c
expect "naming it" "results/README.md:2: $ref/gone-too/ does not exist"
printf '# catalogue\n' >"$root/results/README.md"
printf 'block\tq\t%s/never-stored\tcmd\n' "$ref" >>"$root/scripts/vramlab/findings/figures.tsv"
check "a block whose folder is not stored fails" 1 c
expect "naming the block" "figures.tsv:3 \(block q\): $ref/never-stored does not exist"
sed -i '$d' "$root/scripts/vramlab/findings/figures.tsv"
check "fixed again: passes" 0 c

mkdir -p "$tmp/packed/rep-1" && echo "x,y" >"$tmp/packed/rep-1/g.csv"
( cd "$tmp/packed" && tar cJf "$root/$ref/cited-a/packed.txz" . )
echo "the repetition: $ref/cited-a/packed/rep-1/g.csv" >>"$root/docs/notes.md"
check "a path inside a folder stored as FOLDER.txz exists" 0 c
echo "and $ref/cited-a/packed/rep-2/g.csv" >>"$root/docs/notes.md"
check "a path an archived folder lacks fails" 1 c
expect "naming it" "docs/notes.md:4: $ref/cited-a/packed/rep-2/g.csv does not exist"
sed -i '$d' "$root/docs/notes.md"

: >"$root/$ref/cited-a/empty.log"
check "an empty file under results/ fails" 1 c
expect "naming it" "citations: $ref/cited-a/empty.log: an empty file under results/"

# --- in a git checkout: git ls-files, so an ignored file is not stored -------------------------
if command -v git >/dev/null; then
    rm "$root/$ref/cited-a/empty.log"
    mkdir -p "$root/results/mine" && : >"$root/results/mine/empty.csv"
    printf '/results/*\n!/results/README.md\n!/results/reference/\n' >"$root/.gitignore"
    git -C "$root" init -q && git -C "$root" add -A && git -C "$root" -c user.name=t -c user.email=t@t commit -qm x
    check "git checkout: an ignored run's empty file is not checked" 0 c
    : >"$root/$ref/cited-b/new.csv"
    check "git checkout: an empty file not yet added fails" 1 c
    expect "naming it" "$ref/cited-b/new.csv: an empty file under results/"
fi

checks_report test-citations
[ "$failures" -eq 0 ]
