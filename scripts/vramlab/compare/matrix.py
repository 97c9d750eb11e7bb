"""scripts/matrix FOLDER...: many machines' results at once: one row per metric, one
column per machine (GPU, driver, allocator build), every column's ratio against a
baseline column with the statistics of scripts/compare.

A FOLDER is a results folder, a run id under results/, or a folder of them
(results/<fleet-id>/ from scripts/fleet: each machine's folder is a column). Each
column is compared with the baseline exactly as `scripts/compare BASELINE COLUMN`
would. It prints what differs between columns, a table (ratio to the baseline and a
verdict mark per cell), a count per column, and writes OUT/matrix.csv, OUT/cells.csv
and heat maps. docs/comparing.md, section "scripts/matrix", has the full rules."""
import argparse
import csv
import math
import os
import shutil
import subprocess
import sys

from vramlab import ROOT as REPO
from vramlab import fmt, pairing, verdict
from vramlab import results as vlresults
from vramlab.compare import cli as compare
from vramlab.compare.data import IMPORTANT_META, missing_findings, state_differences
from vramlab.compare.text import Notice, metric_label, print_findings


# What --help prints after the options; docs/comparing.md has the full rules.
HELP_EPILOG = """Missing and failed programs are not "no regression": a program or variant (a file) that
a column has and the baseline lacks, or the baseline has and a column lacks, and a job
that failed or crashed in any column's manifest.csv (status not ok, or an exit code
other than 0 and 77, the code of a job that skips itself), are each named in a section
of their own before the verdict, and matrix exits 1. A job skipped in every column is
not counted; skipped in some columns only it is (some measured it, others did not).
device_info, which describes the machine, is not counted. --allow-missing: named but
not counted, which the first and the last line of the output say.

Bad input is not a regression either: a file that cannot be read or is malformed is
named in one line, exit 2 (as in scripts/compare). Numeric options must be finite and in
range: --alpha and --power in (0, 1), --threshold >= 0, --resolve > 0, --plot-rows >= 1.

Exit status: 0 no regression; 1 a column regressed against the baseline beyond
--threshold (slower, worse), or a program missing in a column or failed (unless
--allow-missing); 2 bad usage (an option out of range), bad input, an incomplete folder,
or a column whose comparison with the baseline is vacuous."""


MARK = {verdict.SAME: "=", verdict.FASTER: "+", verdict.BETTER: "+", verdict.SLOWER: "-", verdict.WORSE: "-",
        verdict.CHANGED: "~", verdict.INCONCLUSIVE: "?"}
# Folders a fleet or a matrix leaves beside the machines' results.
NOT_COLUMNS = {"logs", "tasks", "plots", "matrix"}


def is_results(path):
    try:
        names = os.listdir(path)
    except OSError as e:
        raise vlresults.BadInput(path, f"cannot be read ({e.strerror or e})") from None
    return bool(vlresults.rep_folders(path)) or any(
        f.endswith(".csv") for f in names if os.path.isfile(os.path.join(path, f)))


def expand(arg):
    """[folder] for a results folder, else its results subfolders (a fleet)."""
    found = [p for p in (arg, os.path.join(REPO, "results", arg)) if os.path.isdir(p)]
    if not found:
        usage(f"no results folder '{arg}'")
    path = found[0]
    if is_results(path):
        return [path]
    subs = [os.path.join(path, d) for d in sorted(os.listdir(path))
            if d not in NOT_COLUMNS and not d.startswith(("compare-", "matrix"))
            and os.path.isdir(os.path.join(path, d)) and is_results(os.path.join(path, d))]
    if not subs:
        usage(f"no results in '{arg}' (neither CSVs, rep-<k>/ nor results folders inside)")
    return subs


def usage(msg):
    print(f"matrix: {msg}", file=sys.stderr)
    sys.exit(2)


def column_names(paths):
    """Folder names, with the parent's name added where two columns share one."""
    base = [os.path.basename(os.path.normpath(p)) for p in paths]
    return [os.path.basename(os.path.dirname(os.path.normpath(p))) + "/" + b if base.count(b) > 1 else b
            for p, b in zip(paths, base)]


def meta_table(runs, names):
    """[(key, [value per column])] for metadata that differs between columns."""
    keys = [k for k in IMPORTANT_META if any(k in r.meta for r in runs)]
    keys += sorted({k for r in runs for k in r.meta} - set(keys))
    out = []
    for k in keys:
        vals = [", ".join(sorted(r.meta.get(k, set()))) or "-" for r in runs]
        if len(set(vals)) > 1:
            out.append((k, vals))
    return out


def judge_column(base, run, names, alpha, threshold, resolve, power):
    """{(baseline file, row, metric name): (metric of run, Judgement)}, the count of
    metrics found only in run, the reason the column is vacuous (or None), and the
    pairing (names: the baseline's and the column's)."""
    p = pairing.pair(base, run, names)
    matched, left = pairing.match_metrics(base, run, p)
    extra = sum(len(run.files[f]) for f in p.only_b) + sum(c.get("only in B", 0) for c in left.values())
    judgements = verdict.judge_all([(ma, mb) for _, _, ma, mb in matched], alpha, threshold, resolve, power)
    judged = {(fa, ma.row, ma.name): (mb, j) for (fa, _, ma, mb), j in zip(matched, judgements)}
    return judged, extra, pairing.vacuity(base, run, matched), p


def cell_text(j):
    if j is None:
        return "."
    if not math.isfinite(j.ratio):
        r = "inf" if j.ratio > 0 else "-inf"
    else:
        r = f"{j.ratio:.3f}"
    return r + MARK.get(j.verdict, "?") + ("!" if j.regression else "")


def log2_ratio(j, limit):
    if j.ratio > 0 and math.isfinite(j.ratio):
        return max(-limit, min(limit, math.log2(j.ratio)))
    return limit if j.ratio > 0 or j.ratio == math.inf else -limit


def write_csvs(out_dir, args, names, base_i, rows, cells):
    matrix_path = os.path.join(out_dir, "matrix.csv")
    others = [n for i, n in enumerate(names) if i != base_i]
    num = compare.num
    with open(matrix_path, "w", newline="") as f:
        f.write(f"# matrix: baseline={names[base_i]} columns={' '.join(names)} alpha={args.alpha} "
                f"threshold={args.threshold} resolve={args.resolve} power={args.power}\n")
        w = csv.writer(f, lineterminator="\n")
        head = ["file", "row", "metric", "unit", "baseline", "baseline_value", "baseline_n"]
        for n in others:
            head += [f"{n}:{k}" for k in ("value", "n", "ratio", "ratio_lo", "ratio_hi", "q", "verdict",
                                          "regression")]
        w.writerow(head)
        for fa, ma, per_col in rows:
            line = [fa, ma.row, ma.name, ma.unit, names[base_i], fmt.number(ma.value), len(ma.samples)]
            for n in others:
                mb, j = per_col.get(n, (None, None))
                line += ["", "", "", "", "", "", "missing", ""] if j is None else [
                    fmt.number(mb.value), len(mb.samples), num(j.ratio), num(j.lo), num(j.hi), num(j.q),
                    j.verdict, int(j.regression)]
            w.writerow(line)
    cells_path = os.path.join(out_dir, "cells.csv")
    with open(cells_path, "w", newline="") as f:
        f.write("# one row per metric and column; y: the metric's index within its program, x: the column\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["program", "y", "x", "metric", "column", "log2_ratio", "verdict", "mark"])
        w.writerows(cells)
    return matrix_path, cells_path


def render_plots(out_dir, cells, names, limit, every, max_rows):
    """One heat map per program, of its rows not 'same' in every column (every: all
    rows), at most max_rows of them: a picture of thousands of rows reads as noise."""
    if not shutil.which("gnuplot"):
        print("matrix: gnuplot is not installed here: no plots (the CSVs have everything)")
        return
    by_prog = {}
    for c in cells:
        by_prog.setdefault(c[0], {}).setdefault(c[1], []).append(c)
    done = 0
    for prog, by_row in sorted(by_prog.items()):
        keep = [y for y in sorted(by_row) if every or any(c[6] not in (verdict.SAME, "baseline") for c in by_row[y])]
        if not keep:
            continue
        total, keep = len(keep), keep[:max_rows]
        out = os.path.abspath(os.path.join(out_dir, f"matrix-{prog}.png"))
        part = os.path.join(out_dir, f".cells-{prog}.csv")
        with open(part, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            for new_y, y in enumerate(keep):
                for c in by_row[y]:
                    w.writerow([c[0], new_y] + c[2:])
        label_chars = max(len(by_row[y][0][3]) for y in keep)
        what = "every metric" if every else "metrics not same everywhere"
        title = f"{prog}: ratio to {names[0]} ({what}" + (f", first {len(keep)} of {total})" if total > len(keep) else ")")
        # Values as gnuplot -c arguments: strings it never evaluates, whatever a folder or
        # program name holds.
        args = [os.path.abspath(part), out, str(len(keep)), str(len(names)), str(limit), title, str(label_chars)]
        r = subprocess.run(["gnuplot", "-c", os.path.join(REPO, "plots", "matrix.gp"), *args], cwd=REPO,
                           capture_output=True, text=True)
        os.remove(part)
        if r.returncode != 0 or not os.path.getsize(out):
            print(f"matrix: plot of {prog} failed: {r.stderr.strip().splitlines()[:2]}", file=sys.stderr)
        else:
            done += 1
    print(f"matrix: {done} heat map(s) in {out_dir}")


def main():
    sys.stdout.reconfigure(line_buffering=True)  # stdout and stderr in order in one log
    try:
        matrix_main()
    except vlresults.BadInput as e:
        usage(f"bad input: {e}")


def matrix_main():
    ap = compare.Parser(prog="matrix", description=__doc__.split("\n\n")[0], epilog=compare.help_epilog(HELP_EPILOG),
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+", metavar="FOLDER")
    ap.add_argument("--baseline", help="the column the others are compared with: its name, or a part of it "
                                       "naming one column (default: the first)")
    compare.add_verdict_options(ap, "against the baseline")
    ap.add_argument("--only", help="programs to include, comma-separated (default: all)")
    ap.add_argument("--out", help="folder for matrix.csv and the plots (default: FOLDER/matrix for one fleet "
                                  "folder, else results/matrix-<columns>)")
    ap.add_argument("--all", action="store_true", help="print every metric, not only those not 'same' everywhere")
    ap.add_argument("--plot-rows", type=compare.bounded(1, kind=int), default=120,
                    help="most metrics in one program's heat map, >= 1 (120)")
    ap.add_argument("--no-plots", action="store_true")
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(2 if e.code else 0)
    compare.check_verdict_options(args, "matrix")
    paths = [p for a in args.folders for p in expand(a)]
    if len(paths) < 2:
        usage(f"one column only ({paths[0]}): a matrix needs two results folders or more")
    names = column_names(paths)
    if len(set(names)) < len(names):
        usage("two columns have the same name: " + ", ".join(sorted({n for n in names if names.count(n) > 1})))
    base_i = 0
    if args.baseline:
        hits = [i for i, n in enumerate(names) if n == args.baseline] or \
               [i for i, n in enumerate(names) if args.baseline in n]
        if len(hits) != 1:
            usage(f"--baseline '{args.baseline}' names {'no' if not hits else len(hits)} column(s) of: "
                  + ", ".join(names))
        base_i = hits[0]
    # The baseline first: the table and the plots read left to right from it.
    order = [base_i] + [i for i in range(len(names)) if i != base_i]
    paths, names = [paths[i] for i in order], [names[i] for i in order]
    base_i = 0
    runs = [vlresults.Run(p) for p in paths]
    flags = [f for f in (compare.refuse_incomplete("matrix", n, r, args.allow_incomplete)
                         for n, r in zip(names, runs)) if f]
    only = set(args.only.split(",")) if args.only else None
    for p, r in zip(paths, runs):
        if only:
            r.files = {f: ms for f, ms in r.files.items() if r.program_of[f] in only}
        if not r.files:
            usage(f"no CSV results in {p}" + (f" for --only {args.only}" if only else ""))
    if len(args.folders) == 1 and len(paths) > 1:
        default_out = os.path.join(args.folders[0], "matrix")
    else:
        default_out = os.path.join(REPO, "results", "matrix-" + "-".join(n.replace("/", "_") for n in names))[:200]
    out_dir = compare.make_out_dir(args.out or default_out, paths)

    base = runs[0]
    per_key, extras, vacuous, findings = {}, {}, {}, []
    for i, (n, r) in enumerate(zip(names[1:], runs[1:])):
        judged, extras[n], why, p = judge_column(base, r, (names[0], n), args.alpha, args.threshold, args.resolve,
                                                 args.power)
        if why:
            vacuous[n] = why
        for key, cell in judged.items():
            per_key.setdefault(key, {})[n] = cell
        # The baseline's own failed jobs once, with the first column.
        findings += [f for f in missing_findings(p, base, r, (names[0], n), only)
                     if i == 0 or not f.startswith(f"failed in {names[0]}:")]
    notice = Notice("matrix", findings, args.allow_missing)
    finish = notice.finish
    notice.say()
    print(f"baseline: {names[0]} ({paths[0]}, {len(base.reps)} repetition(s))")
    for n, p, r in zip(names[1:], paths[1:], runs[1:]):
        print(f"column:   {n} ({p}, {len(r.reps)} repetition(s))")
    diffs = meta_table(runs, names)
    if diffs:
        print("\nmetadata that differs:")
        w = max(len(k) for k, _ in diffs)
        cw = max(len(n) for n in names)
        for k, vals in diffs:
            for i, (n, v) in enumerate(zip(names, vals)):
                print(f"  {k if i == 0 else '':<{w}}  {n:<{cw}}  {v}")
    else:
        print("\nmetadata: the same in every column (apart from dates and command lines)")
    warned = False
    for n, r in zip(names[1:], runs[1:]):
        if not base.states or not r.states:
            continue
        for k, va, vb, warn in state_differences(base, r):
            if warn:
                warned = True
                print(f"machine state: {n}: {k}: {va} against {vb} in {names[0]}: WARNING: {warn}")
    for n, r in zip(names, runs):
        for line in r.malformed:
            print(f"malformed row in {n}, not compared: {line}")

    rows = [(fa, ma, per_key.get((fa, ma.row, ma.name), {})) for fa in sorted(base.files) for ma in base.files[fa]]

    if min(len(r.reps) for r in runs) == 1:
        print("\nnote: a column with one repetition: its timings are 'inconclusive' (one process per metric "
              "cannot tell a change from noise).")
    counts = {n: {} for n in names[1:]}
    cells, index = [], {}
    limit = 1.0  # colour saturates at half or double the baseline
    for fa, ma, per_col in rows:
        prog = base.program_of[fa]
        label = f"{fa[:-4]} {ma.row} {metric_label(ma)}".replace(",", ";").replace("'", "")
        y = index[prog] = index.get(prog, -1) + 1
        cells.append([prog, y, 0, label, names[0], "0", "baseline", ""])  # the heat map's first column
        for x, n in enumerate(names[1:], 1):
            _, j = per_col.get(n, (None, None))
            c = counts[n]
            if j is None:
                c["missing"] = c.get("missing", 0) + 1
                continue
            c[j.verdict] = c.get(j.verdict, 0) + 1
            if j.regression:
                c[verdict.REGRESSION] = c.get(verdict.REGRESSION, 0) + 1
            cells.append([prog, y, x, label, n, f"{log2_ratio(j, limit):.4f}", j.verdict,
                          MARK[j.verdict] + ("!" if j.regression else "")])

    shown = [r for r in rows if args.all or any(j.verdict != verdict.SAME for _, j in r[2].values())]
    print(f"\n{len(rows)} metrics of {names[0]}; {len(shown)} shown ({'all' if args.all else 'not same everywhere'}). "
          "Cells: ratio to the baseline and a mark: = same, + faster/better, - slower/worse, ~ changed, "
          "? inconclusive, ! regression, . missing")
    if shown:
        table = [["metric", names[0]] + names[1:]]
        for fa, ma, per_col in shown:
            table.append([f"{fa[:-4]} {ma.row[:40]} {metric_label(ma)}", fmt.number(ma.value)]
                         + [cell_text(per_col.get(n, (None, None))[1]) for n in names[1:]])
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        for r in table:
            print("  " + "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
    print("\nper column, against " + names[0] + ":")
    for n in names[1:]:
        c = counts[n]
        extra = f"; {extras[n]} metric(s) only in {n}" if extras[n] else ""
        print(f"  {n}: " + ", ".join(f"{v} {k}" for k, v in sorted(c.items())) + extra)

    try:
        matrix_path, cells_path = write_csvs(out_dir, args, names, base_i, rows, cells)
    except OSError as e:
        raise vlresults.BadInput(e.filename or out_dir, f"cannot be written ({e.strerror or e})") from None
    print(f"\nmatrix: CSV {matrix_path}")
    if not args.no_plots:
        render_plots(out_dir, cells, names, limit, args.all, args.plot_rows)
    if findings:
        print_findings("matrix", findings, args.allow_missing)
    for flag in flags:
        print(f"matrix: {flag}")
    if vacuous:
        print("matrix: vacuous comparison: " + "; ".join(f"{n} against {names[0]}: {why}"
                                                         for n, why in vacuous.items()), file=sys.stderr)
        finish(2)
    regressed = [n for n in names[1:] if counts[n].get(verdict.REGRESSION)]
    if warned and any(counts[n].get(v) for n in names[1:] for v in (verdict.SLOWER, verdict.FASTER)):
        print("matrix: WARNING: the machine state differed (above): a timing verdict may reflect the machine")
    if regressed:
        print(f"matrix: regression beyond {args.threshold:.0%} against {names[0]} in: " + ", ".join(regressed))
    notice.end(f"matrix: {len(findings)} program file(s) missing in a column or job(s) failed (listed above): "
               "not a result; --allow-missing to compare the rest" if findings and not args.allow_missing else "",
               regressed, f"matrix: no regression beyond the threshold against {names[0]}")


if __name__ == "__main__":
    main()
