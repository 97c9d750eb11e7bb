#!/usr/bin/env bash
# Tests of scripts/report (make test-report, part of make test; no GPU):
#  - a simulated run made here (scripts/bench.sh --quick into a scratch results folder):
#    bench.sh ends by writing report.md and report.html into the run and printing both;
#  - stored GPU runs (results/reference/h200-quick, and h100-quick-repeat-2, a REPEAT
#    run): written outside results/reference/, never into it;
#  - on each: every program that ran has a section with an answer, every skipped or
#    failed job is listed with its reason, no answer without its figure, the HTML parses
#    with balanced tags and loads nothing (tests/report/check_report.py);
#  - hostile values (a manifest note, an alloc SPEC, a workload cell holding <script>,
#    |, backticks and a newline) stay inert text in both files;
#  - a comparison of a run with itself changes nothing and exits with compare's status
#    (0; 2 for a stored run without COMPLETE unless --allow-incomplete, as compare);
#    against the hostile copy (a failed job) it exits 1, as compare does.
set -u
cd "$(dirname "$0")/../.."
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
export VL_RESULTS=$tmp/results PYTHONDONTWRITEBYTECODE=1 # no __pycache__ beside the scripts
bin=${VL_BIN:-build/bin}
chk=tests/report/check_report.py

# A simulated run, as make bench makes it here: the report is its last step.
check "bench --quick (simulated)" 0 scripts/bench.sh --quick --bin "$bin" --no-plots --out "$tmp/results/sim1"
expect "bench prints the report's paths" "^report: $tmp/results/sim1/report.md$"
expect "bench prints the report's paths" "^report: $tmp/results/sim1/report.html$"
check "simulated run: report checks" 0 python3 $chk "$tmp/results/sim1" "$tmp/results/sim1"
check "simulated run: labelled" 0 grep -q "every result is simulated" "$tmp/results/sim1/report.md"
check "simulated sections labelled" 0 grep -q "^## .* (simulated device)" "$tmp/results/sim1/report.md"

check "bench --quick --repeat 2 (simulated)" 0 scripts/bench.sh --quick --repeat 2 --bin "$bin" --no-plots --out "$tmp/results/rep2"
expect "... prints the report's paths" "^report: $tmp/results/rep2/report.md$"
check "repeated run: report checks" 0 python3 $chk "$tmp/results/rep2" "$tmp/results/rep2"
check "... medians over the repetitions" 0 grep -q "median over the repetitions" "$tmp/results/rep2/report.md"
check "... tier" 0 grep -q "^| tier | quick, 2 repetitions |$" "$tmp/results/rep2/report.md"

# bench.sh's end with stand-in programs: a failed job is listed and bench still exits 1;
# a report that fails is one line, and bench's status stays that of its jobs.
mkdir -p "$tmp/sbin" "$tmp/suite"
cat >"$tmp/sbin/device_info" <<'P'
#!/usr/bin/env bash
echo "device_info: no GPU found (stand-in) (skipped)" >&2; exit 77
P
cat >"$tmp/sbin/fast_prog" <<'P'
#!/usr/bin/env bash
if [ "${1:-}" = --alloc ] && [ "${2:-}" = help ]; then printf '  caching  y\n'; exit 0; fi
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
printf '# device: sim\n# simulated: yes (stand-in)\n# alloc: caching\nsize_bytes,alloc_ns\n512,%s\n' "${VALUE:-10}" >"$out"
P
cat >"$tmp/sbin/bad_prog" <<'P'
#!/usr/bin/env bash
if [ "${1:-}" = --alloc ] && [ "${2:-}" = help ]; then printf '  caching  y\n'; exit 0; fi
echo "bad_prog: the device said no (stand-in)" >&2; exit 3
P
chmod +x "$tmp/sbin"/*
printf 'fast_prog\tsim\tcaching\t-\t-\nbad_prog\tsim\tcaching\t-\t-\n' >"$tmp/suite/a.tsv"
VL_SUITE_DIR=$tmp/suite check "bench with a failed job" 1 scripts/bench.sh --quick --bin "$tmp/sbin" --no-plots --out "$tmp/results/f1"
expect "... still reports" "^report: $tmp/results/f1/report.html$"
check "... the failed job listed with its note" 0 grep -q "| bad_prog | sim | caching | failed | 3 | bad_prog: the device said no (stand-in) |" "$tmp/results/f1/report.md"
check "... report checks" 0 python3 $chk "$tmp/results/f1" "$tmp/results/f1"
printf 'fast_prog\tsim\tcaching\t-\t-\n' >"$tmp/suite/a.tsv"
VALUE=abc VL_SUITE_DIR=$tmp/suite check "bench whose report fails" 0 scripts/bench.sh --quick --bin "$tmp/sbin" --no-plots --out "$tmp/results/f2"
expect "... one line" "^bench: the report failed \(report: bad input: .*alloc_ns holds 'abc'"
expect "... after the results" "^results: $tmp/results/f2"

# Stored GPU runs: the report goes to --out (or results/report-<name>/), never into reference/.
for run in h200-quick h100-quick-repeat-2; do
    check "report $run" 0 scripts/report --out "$tmp/rep-$run" "results/reference/$run"
    check "$run: report checks" 0 python3 $chk "results/reference/$run" "$tmp/rep-$run"
done
check "h200-quick: the header" 0 grep -q "^| GPU | NVIDIA H200 |$" "$tmp/rep-h200-quick/report.md"
check "h200-quick: an answer that holds" 0 grep -q "^| async_free_race | \*\*holds\*\* | [0-9]" "$tmp/rep-h200-quick/report.md"
check "repeat run: median with its interval" 0 grep -qE "[0-9] \[[0-9.,]+, [0-9.,]+\] \|" "$tmp/rep-h100-quick-repeat-2/report.md"
check "a stored run by name" 0 scripts/report --out "$tmp/byname" reference/h200-quick
mkdir -p "$tmp/results/reference" && cp -r results/reference/h200-quick "$tmp/results/reference/"
check "no report into reference/" 0 scripts/report reference/h200-quick
check "... but beside it" 0 test -f "$tmp/results/report-reference-h200-quick/report.md" -a ! -e "$tmp/results/reference/h200-quick/report.md"
check "--out into reference/ refused" 2 scripts/report --out "$tmp/results/reference/h200-quick" reference/h200-quick
expect "--out into reference/ refused" "never written to"
check "no such run" 2 scripts/report "$tmp/nothing"

# Hostile values: a failed job's note and SPEC, and a workload cell of a CSV.
# (The files are read line by line: a newline cannot reach a cell; the renderers' own
# test below gives them one.)
evil='<script>alert(1)</script> a|b `x` c # d'
cp -r "$tmp/results/sim1" "$tmp/results/evil"
EVIL=$evil python3 - "$tmp/results/evil" <<'P'
import csv, os, sys
d, evil = sys.argv[1], os.environ["EVIL"]
m = os.path.join(d, "manifest.csv")
rows = list(csv.reader(open(m)))
rows[1][2], rows[1][3], rows[1][4], rows[1][7] = evil, "failed", "3", evil  # alloc SPEC, status, note
csv.writer(open(m, "w", newline=""), lineterminator="\n").writerows(rows)
f = os.path.join(d, "random_churn.caching.sim.csv")
lines = open(f).read().split("\n")
head = next(i for i, l in enumerate(lines) if not l.startswith("#"))
cols = lines[head].split(",")
body = list(csv.reader(lines[head + 1:]))
for r in body:
    if r:
        r[cols.index("dist")] = evil  # a workload cell: part of the row's identity
with open(f, "w", newline="") as out:
    out.write("\n".join(lines[:head + 1]) + "\n")
    csv.writer(out, lineterminator="\n").writerows(r for r in body if r)
P
mkdir -p "$tmp/results/evil/plots" && printf '\x89PNG\r\n\x1a\nstand-in' >"$tmp/results/evil/plots/random_churn.png"
check "hostile run: report" 0 scripts/report "$tmp/results/evil"
check "plot linked relatively in report.md" 0 grep -qF '![random_churn plot](plots/random_churn.png)' "$tmp/results/evil/report.md"
check "plot linked relatively in report.html" 0 grep -qF '<img src="plots/random_churn.png"' "$tmp/results/evil/report.html"
check "report.html loads nothing from elsewhere" 1 grep -qiE '(src|href)="(https?:|//|data:)' "$tmp/results/evil/report.html"
check "hostile values stay inert" 0 python3 $chk "$tmp/results/evil" "$tmp/results/evil" "$evil"
check "hostile: the failed job is listed" 0 grep -qF '| &lt;script&gt;alert(1)&lt;/script&gt; a\|b \`x\` c \# d |' "$tmp/results/evil/report.md"
# A value with a newline, a leading # or -, in every kind of block: one line of text each.
check "values with newlines and leading markup" 0 python3 - <<'P'
import html.parser, sys
sys.path[:0] = ["scripts", "tests/report"]
import check_report
from vramlab.report import render
from vramlab.report.render import Data, Md
v = Data("# h\n- item\n<b>x</b> | `c`\n1. one")
doc = [("h2", v), ("p", ["a ", v]), ("list", [v]), ("table", [v, "x"], [[v, Md("**ok**")]])]
md = render.to_markdown(doc)
lines = md.split("\n")
ok = not any(l.startswith(("# h", "- item", "1. one", "<b>")) for l in lines) and "<b>" not in md
ok &= all(l.count(" | ") == 1 or not l.startswith("| ") for l in lines if l.startswith("| ") and "---" not in l)
page = render.to_html(doc, "t", ".")
p = check_report.Strict(); p.feed(page); p.close()
ok &= not p.errors and not p.stack and "<b>" not in page and "&lt;b&gt;" in page
sys.exit(0 if ok else print(md, page) or 1)
P

# Comparisons: with itself nothing changes; the exit status is compare's.
check "compare sim1 with itself" 0 scripts/report --out "$tmp/cmp-self" "$tmp/results/sim1" "$tmp/results/sim1"
check "... no change" 0 grep -q "No metric changed beyond the threshold" "$tmp/cmp-self/report.md"
check "... answers the same" 1 grep -q "| changed;" "$tmp/cmp-self/report.md"
check "... every one" 0 grep -q "| same answer; no metric moved |" "$tmp/cmp-self/report.md"
check "... html" 0 python3 - "$tmp/cmp-self/report.html" <<'P'
import sys; sys.path.insert(0, "tests/report"); import check_report as c
p = c.Strict(); p.feed(open(sys.argv[1]).read()); p.close(); sys.exit(bool(p.errors or p.stack))
P
check "stored run with itself, as compare" 2 scripts/report --out "$tmp/cmp-ref" reference/h200-quick reference/h200-quick
check "stored run with itself, --allow-incomplete" 0 scripts/report --allow-incomplete --out "$tmp/cmp-ref" reference/h200-quick reference/h200-quick
scripts/compare "$tmp/results/sim1" "$tmp/results/evil" --out "$tmp/cmp-raw" --no-plots >/dev/null 2>&1
want=$?
check "against the hostile copy: compare's status ($want)" "$want" scripts/report --compare "$tmp/results/sim1" "$tmp/results/evil" --out "$tmp/cmp-evil"
check "... compare says 1 (a failed job)" 0 test "$want" = 1
check "... which could not be compared" 0 grep -q "^- missing or failed: " "$tmp/cmp-evil/report.md"
check "hostile comparison inert" 0 python3 - "$tmp/cmp-evil" <<'P'
import sys; sys.path.insert(0, "tests/report"); import check_report as c
md, page = (open(f"{sys.argv[1]}/report.{e}").read() for e in ("md", "html"))
p = c.Strict(); p.feed(page); p.close()
sys.exit(bool(p.errors or p.stack or "<script" in md or "<script" in page))
P
rm -f "$tmp/results/sim1/report.md"
check "make report RUN=<id>: into the run bench.sh made" 0 make --no-print-directory report RUN=sim1
check "... there" 0 test -f "$tmp/results/sim1/report.md"
check "make report A= B=" 0 make --no-print-directory report A=sim1 B=sim1
check "make report: neither RUN nor A B" 2 make --no-print-directory report

# The fresh H200 run (make bench at 717dd2d, stored as results/reference/h200-bench-717dd2d):
# every program that ran has an answer decided by a rule, with the expected verdicts; a
# copy whose CSVs are edited so four claims fail answers "does not hold" for each of them,
# and inconclusive, naming what is missing, where the rows a rule needs are gone.
rules=tests/report/check_rules.py
ref=${VL_BENCH_REF:-results/reference/h200-bench-717dd2d} # VL_BENCH_REF: another copy of it
if [ -d "$ref" ]; then
    check "report h200-bench-717dd2d" 0 scripts/report --out "$tmp/rep-bench" "$ref"
    check "h200-bench-717dd2d: report checks" 0 python3 $chk "$ref" "$tmp/rep-bench"
    check "h200-bench-717dd2d: every claim decided by a rule" 0 python3 $rules answers "$ref" "$tmp/rep-bench"
    # One mechanism: the README's scenario table is this run's report table, line for line.
    check "the README's scenario table is its source run's report table" 0 python3 - "$tmp/rep-bench/report.md" "$ref" <<'P'
import re, sys
report, ref = sys.argv[1], sys.argv[2].rstrip("/")
src = [l.split("\t") for l in open("scripts/vramlab/findings/figures.tsv") if l.startswith("block\tfindings_table\t")]
assert src and src[0][2] == ref and src[0][4].strip() == "report", f"findings_table's source is not {ref}: {src}"
def table(lines, head):
    i = lines.index(head)
    out = []
    for l in lines[i:]:
        if not l.startswith("|"):
            break
        out.append(l)
    return out
rep = open(report).read().split("\n")
readme = open("README.md").read().split("\n")
b = next(i for i, l in enumerate(readme) if l.startswith("<!-- findings:findings_table begin"))
head = "| scenario | allocator | bad | fixed | answer on this run |"
mine, theirs = table(rep, head), table(readme[b:], head)
assert len(mine) > 20, f"the report's table has {len(mine)} lines"
assert mine == theirs, next(f"line {k}: report {a!r} README {b!r}" for k, (a, b) in enumerate(zip(mine + [""], theirs + [""])) if a != b)
P
    check "h200-bench-717dd2d: the new rules' verdicts" 0 python3 $rules verdicts "$tmp/rep-bench" \
        ipc_hold=holds stream_pools=holds context_cost=holds pinned_rounding=holds lookup_scaling=holds \
        graph_pool="does not hold" cublas_workspace="does not hold" vmm_wait="does not hold" \
        torch_alloc_compare=inconclusive
    check "... torch_alloc_compare: no folk claim, said so" 0 grep -q "^| torch_alloc_compare | \*\*inconclusive\*\* | measures .*; no folk claim to decide |$" "$tmp/rep-bench/report.md"
    check "mutated copy" 0 python3 $rules mutate "$ref" "$tmp/results/bench-mut"
    check "mutated copy: report" 0 scripts/report --out "$tmp/rep-mut" "$tmp/results/bench-mut"
    check "mutated copy: report checks" 0 python3 $chk "$tmp/results/bench-mut" "$tmp/rep-mut"
    check "mutated copy: four claims fail" 0 python3 $rules verdicts "$tmp/rep-mut" ipc_hold="does not hold" \
        stream_pools="does not hold" context_cost="does not hold" pinned_rounding="does not hold"
    check "mutated copy: a missing figure named" 0 grep -q "^| vmm_wait | \*\*inconclusive\*\* | a figure it needs is missing: no VMM call rows in vmm_wait.default.csv |$" "$tmp/rep-mut/report.md"
    check "mutated copy: the others unchanged" 0 python3 $rules verdicts "$tmp/rep-mut" lookup_scaling=holds \
        graph_pool="does not hold" async_free_race=holds
else
    echo "SKIP: $ref absent: the rules' checks on the fresh H200 run (and its mutated copy) not run"
    skipped=1
fi

# The two-GPU claims, on the stored run of two H200s and on a copy where both fail.
x2=results/reference/h200x2-multigpu
check "report of two GPUs" 0 scripts/report --out "$tmp/rep-x2" "$x2"
check "two GPUs: device0_pileup and peer_access decided" 0 python3 $rules verdicts "$tmp/rep-x2" \
    device0_pileup=holds peer_access=holds ipc_hold=holds
check "two GPUs, mutated copy" 0 python3 $rules mutate-multigpu "$x2" "$tmp/results/x2-mut"
check "... its report" 0 scripts/report --out "$tmp/rep-x2-mut" "$tmp/results/x2-mut"
check "... both claims fail" 0 python3 $rules verdicts "$tmp/rep-x2-mut" device0_pileup="does not hold" \
    peer_access="does not hold"

checks_report report ${skipped:-0}
[ "$failures" -eq 0 ]
