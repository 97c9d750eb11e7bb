"""scripts/report RUN: writes RUN's report, report.md and a self-contained report.html
(GPU, driver, runtime, revision, tier, duration; the jobs skipped or failed first; per
program the folk claim, its answer on this run and its key figures per allocator with
their spread; the benchmarks allocator against allocator), and prints both paths.

scripts/report A B (or --compare A B): a comparison report from scripts/compare's
verdicts (compare runs as a subprocess; its compare.csv is read): each program's answer
on A and on B, the metrics that moved with their intervals first, and what could not be
compared. Exits with compare's exit status (0 no regression, 1 regression or a program
missing or failed, 2 bad input); --allow-incomplete and --allow-missing go to compare.

RUN, A, B: a results folder, or a run under results/ (reference/h200-quick). Where the
report goes: the run folder when scripts/bench.sh made it (it holds .vramlab-run), else
results/report-<name>/ (never into results/reference/); --out DIR names another folder.
Environment: VL_RESULTS, the results root (default results). Exit 2: bad input."""
import argparse
import os
import subprocess
import sys

from vramlab import ROOT, outputs
from vramlab import results as vlresults
from vramlab.report import collect, doc, render

RUN_MARK = ".vramlab-run"  # scripts/bench.d/run-folder.sh: a folder bench.sh made


def inside(path, root):
    p, r = os.path.realpath(path), os.path.realpath(root)
    return p == r or p.startswith(r + os.sep)


def out_dir(args, results, name, run=None):
    """Where the report goes (see the docstring); exits 2 for a folder in results/reference/."""
    if args.out:
        d = args.out
    elif run and os.path.isfile(os.path.join(run, RUN_MARK)):
        d = run
    else:
        d = os.path.join(results, "report-" + name)
    for ref in (os.path.join(results, "reference"), os.path.join(ROOT, "results", "reference")):
        if inside(d, ref):
            print(f"report: {d} is inside {ref}: stored runs are never written to; give --out", file=sys.stderr)
            sys.exit(2)
    os.makedirs(d, exist_ok=True)
    return d


def label(run, results):
    rel = os.path.relpath(os.path.realpath(run), os.path.realpath(results))
    rel = os.path.basename(os.path.normpath(run)) if rel.startswith("..") else rel
    return rel.replace(os.sep, "-")


def write(d, document, title, base):
    """report.md and report.html, each through outputs.py's rules (atomic; never over a
    folder, socket or another output)."""
    md, page = os.path.join(d, "report.md"), os.path.join(d, "report.html")
    with outputs.open_output(md, others=(page,)) as f:
        f.write(render.to_markdown(document))
    with outputs.open_output(page, others=(md,)) as f:
        # the plots are inlined: the page is whole wherever it is copied to
        f.write(render.to_html(document, title, base))
    print(f"report: {md}")
    print(f"report: {page}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*", help="RUN, or A B")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"))
    ap.add_argument("--out")
    ap.add_argument("--allow-incomplete", action="store_true")
    ap.add_argument("--allow-missing", action="store_true")
    args = ap.parse_args()
    pair = args.compare or (args.runs if len(args.runs) == 2 else None)
    if not pair and len(args.runs) != 1 or pair and args.compare and args.runs:
        ap.error("give one RUN, or A B (--compare A B)")
    results = os.environ.get("VL_RESULTS", "results")
    try:
        if not pair:
            run = collect.find_run(args.runs[0], results)
            if not collect.has_csvs(run):
                raise vlresults.BadInput(run, "no CSV results in it")
            data = collect.RunData(run)
            d = out_dir(args, results, label(run, results), run)
            document = doc.run_doc(data)
            if d != os.path.normpath(run):  # plots are linked relative to the report's folder
                document = [b if b[0] != "img" else ("img", os.path.relpath(os.path.join(run, b[1]), d), b[2])
                            for b in document]
            write(d, document, f"vramlab report: {data.name}", d)
            return 0
        runs = [collect.find_run(p, results) for p in pair]
        a, b = (collect.RunData(r) for r in runs)
        d = out_dir(args, results, f"{label(runs[0], results)}-vs-{label(runs[1], results)}")
        cmp_out = os.path.join(d, "compare")
        cmd = [sys.executable, os.path.join(ROOT, "scripts", "compare"), runs[0], runs[1], "--out", cmp_out, "--no-plots"]
        cmd += ["--allow-incomplete"] * args.allow_incomplete + ["--allow-missing"] * args.allow_missing
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with open(os.path.join(d, "compare.txt"), "w") as f:
            f.write(r.stdout)
        csv_path = os.path.join(cmp_out, "compare.csv")
        rows = doc.read_compare_csv(csv_path) if os.path.isfile(csv_path) else []
        if not os.path.isfile(csv_path):
            print("report: compare wrote no verdicts: " + (r.stdout.strip().splitlines() or ["?"])[-1], file=sys.stderr)
        write(d, doc.compare_doc(a, b, rows, r.stdout, r.returncode), f"vramlab comparison: {a.name} / {b.name}", d)
        print(f"report: compare's verdict (exit {r.returncode}): {(r.stdout.strip().splitlines() or [''])[-1]}")
        return r.returncode
    except vlresults.BadInput as e:
        print(f"report: bad input: {e}", file=sys.stderr)
        return 2
    except (outputs.OutputError, OSError) as e:
        print(f"report: cannot write the report: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
