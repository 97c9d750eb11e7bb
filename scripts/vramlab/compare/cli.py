"""scripts/compare RUN_A RUN_B: compares two vramlab results folders (two drivers, two
allocator versions, two machines) metric by metric, with a statistical verdict.

RUN_A / RUN_B: a results folder or a run id under results/; give it repeated runs
(make bench REPEAT=N, or scripts/ab). Each metric's repetitions are compared with a
rank test corrected across metrics, and the ratio B/A is estimated with its interval
(vramlab/verdict.py). Verdicts: same, faster/slower (better/worse for
memory), inconclusive. It prints the metadata and machine state that differ, then the
metrics not "same" (--all: every one), and writes OUT/compare.csv, OUT/samples.csv and
plots. docs/comparing.md, section "scripts/compare", has the full rules (pairing,
vacuity, missing programs, bad input)."""
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
from vramlab.compare.data import meta_differences, missing_findings, side_labels, state_differences
from vramlab.compare.text import Notice, metric_label, print_findings, print_pairing, print_table


# What --help prints after the options; docs/comparing.md has the full rules.
HELP_EPILOG = """Missing and failed programs are not "no regression": a program or variant (a file) that
one side has and the other lacks, and a job that failed or crashed in either side's
manifest.csv (status not ok, or an exit code other than 0 and 77, the code of a job that
skips itself: no GPU, a peer not built), are each named in a section of their own before
the verdict, and compare exits 1. A job skipped on both sides is nothing to compare and
not counted; skipped on one side only it is counted (one side measured it, the other
did not). device_info, which describes the machine, is not counted. --allow-missing:
named but not counted, which the first and the last line of the output say.

Bad input is not a regression either: a file that cannot be read or is malformed
(hyperfine JSON of another shape, a folder named like a file, a CSV with a bad header or
text in a numeric column, a manifest.csv without its columns) is named in one line, exit
2. Numeric options must be finite and in range: --alpha and --power in (0, 1),
--threshold >= 0, --resolve > 0.

Exit status: 0 no regression; 1 a real change beyond --threshold in the bad direction
(slower, worse), or a program missing on one side or failed (unless --allow-missing);
2 bad usage (an option out of range), bad input, an incomplete folder, or a vacuous
comparison."""


def render_plots(out_dir, csv_path, samples_path, pairs, a, b):
    if not shutil.which("gnuplot"):
        print("compare: gnuplot is not installed here: no plots (the CSVs have everything)")
        return
    ratio_png = os.path.abspath(os.path.join(out_dir, "compare.png"))
    # gnuplot -c SCRIPT OUT FILES LABELS (plots/common.gp): names are data, one per line, never code
    cmds = [(os.path.join(REPO, "plots", "compare.gp"), ratio_png, [csv_path], ["B/A"])]
    by_program = {}
    for fa, fb in pairs:
        if not fa.startswith("hyperfine/"):
            by_program.setdefault(a.program_of[fa], []).append((fa, fb))
    for prog, files in sorted(by_program.items()):
        strip = os.path.abspath(os.path.join(out_dir, f"strip-{prog}.png"))
        cmds.append((os.path.join(REPO, "plots", "compare_strip.gp"), strip, [samples_path], [prog]))
        prog_gp = os.path.join(REPO, "plots", prog + ".gp")
        if not os.path.exists(prog_gp):
            continue
        paths, labels = [], []
        for side, run, idx in (("A", a, 0), ("B", b, 1)):
            for pair in files:
                paths.append(os.path.abspath(os.path.join(run.first_rep_path, pair[idx])))
                tag = pair[idx][len(prog) + 1:-4] or "default"
                labels.append(f"{side}:{tag}")
        out = os.path.abspath(os.path.join(out_dir, f"overlay-{prog}.png"))
        cmds.append((prog_gp, out, paths, labels))
    failed = 0
    for script, png, paths, labels in cmds:
        r = subprocess.run(["gnuplot", "-c", script, png, "\n".join(paths), "\n".join(labels)],
                           cwd=REPO, capture_output=True, text=True)
        if r.returncode != 0:
            failed += 1
            print(f"compare: {os.path.basename(script)} failed: {r.stderr.strip().splitlines()[:2]}", file=sys.stderr)
    print(f"compare: {len(cmds) - failed} plot(s) in {out_dir}")


def num(x):
    """A figure in compare.csv and samples.csv: 6 significant digits, empty where unknown."""
    return fmt.number(x, ".6g", nonfinite="")


def write_csvs(out_dir, args, paths, rows):
    csv_path = os.path.join(out_dir, "compare.csv")
    samples_path = os.path.join(out_dir, "samples.csv")
    with open(csv_path, "w", newline="") as f, open(samples_path, "w", newline="") as g:
        f.write(f"# compare: A={paths[0]} B={paths[1]} alpha={args.alpha} threshold={args.threshold} "
                f"resolve={args.resolve} power={args.power}\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["index", "file_a", "file_b", "row", "metric", "unit", "n_a", "n_b", "a", "b", "ratio",
                    "ratio_lo", "ratio_hi", "p", "q", "mde", "noise", "reps_needed", "basis", "verdict",
                    "regression"])
        g.write("# every repetition's value; norm = value / median of A\n")
        ws = csv.writer(g, lineterminator="\n")
        ws.writerow(["index", "program", "metric", "side", "value", "norm", "ratio", "ratio_lo", "ratio_hi", "verdict",
                     "first"])
        program_index = {}
        for i, (fa, fb, ma, mb, j) in enumerate(rows, 1):
            w.writerow([i, fa, fb, ma.row, ma.name, ma.unit, len(ma.samples), len(mb.samples), fmt.number(ma.value),
                        fmt.number(mb.value), num(j.ratio), num(j.lo), num(j.hi), num(j.p), num(j.q), num(j.mde),
                        num(j.noise), j.reps_needed or "", j.basis, j.verdict, int(j.regression)])
            prog = fa.split("/", 1)[0] if fa.startswith("hyperfine/") else fa.split(".", 1)[0]
            k = program_index[prog] = program_index.get(prog, 0) + 1
            # gnuplot reads no quoted fields: the label carries no comma. first: one row per metric.
            label = f"{ma.row} {metric_label(ma)}".replace(",", ";")
            first = 1
            for side, m in (("A", ma), ("B", mb)):
                for v in m.samples:
                    norm = v / ma.value if ma.value else ""
                    ws.writerow([k, prog, label, side, f"{v:.6g}", f"{norm:.6g}" if norm != "" else "", num(j.ratio),
                                 num(j.lo), num(j.hi), j.verdict, first])
                    first = 0
    return csv_path, samples_path


class Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line (exit 2), as every refusal of compare is."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (--help for usage)\n")


def bounded(lo=None, hi=None, lo_open=False, hi_open=False, kind=float):
    """An argparse type: a finite number of kind within [lo, hi] (open ends where said)."""
    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not {'an integer' if kind is int else 'a number'}")
        if not math.isfinite(v) or (lo is not None and (v < lo or lo_open and v == lo)) \
                or (hi is not None and (v > hi or hi_open and v == hi)):
            if lo is not None and hi is not None:
                rng = f"in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
            else:
                rng = f"{'>' if lo_open else '>='} {lo:g}" if lo is not None else f"{'<' if hi_open else '<='} {hi:g}"
            raise argparse.ArgumentTypeError(f"must be a finite {'integer' if kind is int else 'number'} {rng}, "
                                             f"not '{text}'")
        return v
    parse.__name__ = kind.__name__  # argparse's name for the type in its messages
    return parse


def add_verdict_options(ap, what):
    """The statistical options scripts/compare and scripts/matrix share."""
    ap.add_argument("--alpha", type=bounded(0, 1, True, True), default=0.05,
                    help="false-discovery rate across all metrics compared, and 1 - the intervals' "
                         "confidence, in (0, 1) (default 0.05)")
    ap.add_argument("--threshold", type=bounded(0), default=0.05,
                    help=f"size of a real change in the bad direction that is a regression {what}, "
                         ">= 0 (default 0.05 = 5%%)")
    ap.add_argument("--resolve", type=bounded(0, lo_open=True), default=None,
                    help="'same' needs the ratio's interval inside +-this, > 0 (default: the threshold)")
    ap.add_argument("--power", type=bounded(0, 1, True, True), default=0.8,
                    help="power of the smallest detectable change, in (0, 1) (default 0.8)")
    ap.add_argument("--allow-incomplete", action="store_true",
                    help="compare folders without COMPLETE (interrupted runs), flagged as such")
    ap.add_argument("--allow-missing", action="store_true",
                    help="programs missing on one side and failed jobs are named but not counted (exit 0 "
                         "if nothing regressed); said on the first and the last line")


def check_verdict_options(args, prog):
    if args.resolve is None:
        args.resolve = args.threshold


def help_epilog(doc):
    """The paragraphs of doc that --help prints after the options: the rules of missing
    programs, bad input, and the exit status."""
    return "\n\n".join(p for p in doc.split("\n\n") if p.startswith(("Missing", "Bad input", "Exit status")))


def refuse_incomplete(prog, name, run, allow):
    """Exit 2 naming the first folder of run without COMPLETE, unless allowed; returns
    the flag to print when allowed."""
    if not run.incomplete:
        return ""
    first = run.incomplete[0]
    what = f"{len(run.incomplete)} of {len(run.reps)} folder(s) of {name} are incomplete (no {vlresults.COMPLETE_MARK}: " \
           f"interrupted, killed or still running), first {first}"
    if not allow:
        print(f"{prog}: {what}; finish or rerun it, or pass --allow-incomplete", file=sys.stderr)
        sys.exit(2)
    return f"INCOMPLETE: {what}"


def main():
    sys.stdout.reconfigure(line_buffering=True)  # stdout and stderr in order in one log
    try:
        compare_main()
    except vlresults.BadInput as e:
        print(f"compare: bad input: {e}", file=sys.stderr)
        sys.exit(2)


def is_stored(path):
    """A path inside results/reference/: the project's stored runs, never an output."""
    ref = os.path.realpath(os.path.join(REPO, "results", "reference"))
    return os.path.commonpath([os.path.realpath(path), ref]) == ref


def make_out_dir(path, inputs=()):
    """The output folder, made; never an input folder or inside one, never among the stored runs."""
    real = os.path.realpath(path)
    if is_stored(real):
        raise vlresults.BadInput(path, "is inside results/reference (the stored runs): give --out another folder")
    for folder in inputs:
        inp = os.path.realpath(folder)
        if os.path.commonpath([real, inp]) == inp:
            raise vlresults.BadInput(path, f"is the input {folder} or inside it: give --out another folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise vlresults.BadInput(path, f"cannot be made a folder for the output ({e.strerror or e})") from None
    return path


def compare_main():
    ap = Parser(prog="compare", description=__doc__.split("\n\n")[0], epilog=help_epilog(HELP_EPILOG),
                formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_a")
    ap.add_argument("run_b")
    add_verdict_options(ap, "")
    ap.add_argument("--out", help="folder for compare.csv and plots (default: results/compare-A-vs-B)")
    ap.add_argument("--all", action="store_true", help="print every metric, not only those not 'same'")
    ap.add_argument("--no-plots", action="store_true")
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(2 if e.code else 0)
    check_verdict_options(args, "compare")
    paths = []
    for run in (args.run_a, args.run_b):
        found = [p for p in (run, os.path.join(REPO, "results", run)) if os.path.isdir(p)]
        if not found:
            print(f"compare: no results folder '{run}'", file=sys.stderr)
            sys.exit(2)
        paths.append(found[0])
    a, b = vlresults.Run(paths[0]), vlresults.Run(paths[1])
    if not a.files or not b.files:
        print(f"compare: no CSV results in {paths[0] if not a.files else paths[1]}", file=sys.stderr)
        sys.exit(2)
    flags = [f for f in (refuse_incomplete("compare", f"{side} ({path})", run, args.allow_incomplete)
                         for side, path, run in (("A", paths[0], a), ("B", paths[1], b))) if f]
    beside_b = os.path.dirname(os.path.normpath(paths[1])) or "."
    if is_stored(beside_b):  # comparing stored runs writes under results/, not among them
        beside_b = os.path.join(REPO, "results")
    out_dir = make_out_dir(args.out or os.path.join(beside_b, f"compare-{a.name}-vs-{b.name}"), paths)
    labels = side_labels(paths)
    p = pairing.pair(a, b)
    findings = missing_findings(p, a, b)
    notice = Notice("compare", findings, args.allow_missing)
    finish = notice.finish
    notice.say()
    for flag in flags:
        print(f"compare: {flag}")
    print(f"A: {paths[0]} ({len(a.reps)} repetition{'s' if len(a.reps) != 1 else ''})"
          + (f"; setting: {labels['A']}" if "A" in labels else ""))
    print(f"B: {paths[1]} ({len(b.reps)} repetition{'s' if len(b.reps) != 1 else ''})"
          + (f"; setting: {labels['B']}" if "B" in labels else ""))
    diffs = meta_differences(a, b)
    if diffs:
        print("\nmetadata that differs:")
        w = max(len(k) for k, _, _ in diffs)
        for k, va, vb in diffs:
            print(f"  {k:<{w}}  A: {va}\n  {'':<{w}}  B: {vb}")
    else:
        print("\nmetadata: the same (apart from dates and command lines)")
    states = state_differences(a, b)
    if not a.states or not b.states:
        print("machine state: not recorded on " + ("either side" if not a.states and not b.states
                                                   else "side " + ("A" if not a.states else "B")))
    elif states:
        print("machine state that differs:")
        w = max(len(k) for k, *_ in states)
        for k, va, vb, warn in states:
            print(f"  {k:<{w}}  A: {va}\n  {'':<{w}}  B: {vb}" + (f"\n  {'':<{w}}  WARNING: {warn}: timings "
                                                                  "may reflect it" if warn else ""))
    else:
        print("machine state: the same within tolerance (clocks, temperature, load, settings)")
    for side, run in (("A", a), ("B", b)):
        for line in run.malformed:
            print(f"malformed row in {side}, not compared: {line}")

    print_pairing(p, a, b)
    matched, left = pairing.match_metrics(a, b, p)
    per_file = {(fa if fa == fb else f"{fa} ~ {fb}"): dict(c) for (fa, fb), c in left.items()}
    judgements = verdict.judge_all([(ma, mb) for _, _, ma, mb in matched], args.alpha, args.threshold,
                                   args.resolve, args.power)
    rows = []
    for (fa, fb, ma, mb), j in zip(matched, judgements):
        counts = per_file[fa if fa == fb else f"{fa} ~ {fb}"]
        counts[j.verdict] = counts.get(j.verdict, 0) + 1
        if j.regression:
            counts[verdict.REGRESSION] = counts.get(verdict.REGRESSION, 0) + 1
        rows.append((fa, fb, ma, mb, j))

    single = min(len(a.reps), len(b.reps)) == 1
    if single:
        print("\nnote: one repetition on at least one side: one process per metric cannot tell a change from "
              "process-to-process noise,\n      so timings are 'inconclusive'. Repeat the runs (make bench REPEAT=N, "
              "or scripts/ab, which also interleaves A and B).")
    shown = [r for r in rows if args.all or r[4].verdict != verdict.SAME]
    totals = {}
    for r in rows:
        totals[r[4].verdict] = totals.get(r[4].verdict, 0) + 1
    print(f"\n{len(rows)} metrics compared: " + ", ".join(f"{v} {k}" for k, v in sorted(totals.items()))
          + f"; {len(shown)} shown ({'all' if args.all else 'not same'}); alpha {args.alpha} (false-discovery "
          f"rate over the {sum(1 for r in rows if r[4].q is not None)} metrics tested); 'same': the ratio's "
          f"{1 - args.alpha:.0%} interval inside +-{args.resolve:.0%}")
    if shown:
        print_table(shown, args.resolve)
    print("\nper file:")
    for f, counts in sorted(per_file.items()):
        print(f"  {f}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))

    try:
        csv_path, samples_path = write_csvs(out_dir, args, paths, rows)
    except OSError as e:
        raise vlresults.BadInput(e.filename or out_dir, f"cannot be written ({e.strerror or e})") from None
    print(f"\ncompare: CSV {csv_path}")
    if not args.no_plots:
        render_plots(out_dir, os.path.abspath(csv_path), os.path.abspath(samples_path),
                     [(fa, fb) for fa, fb, _ in p.pairs], a, b)

    if findings:
        print_findings("compare", findings, args.allow_missing)
    for flag in flags:
        print(f"compare: {flag}")
    vacuous = pairing.vacuity(a, b, matched)
    if vacuous:
        print(f"compare: vacuous comparison: {vacuous}", file=sys.stderr)
        finish(2)
    regressions = [r for r in rows if r[4].regression]
    if any(warn for *_, warn in states) and any(r[4].verdict in (verdict.SLOWER, verdict.FASTER) for r in rows):
        print("compare: WARNING: the machine state differed (above): a timing verdict may reflect the machine, "
              "not the change")
    if regressions:
        slower = sorted({f"{r[0]} {r[2].row} {metric_label(r[2])}" for r in regressions})
        print(f"compare: {len(regressions)} metric(s) regressed beyond {args.threshold:.0%}: " + "; ".join(slower[:20])
              + (f"; ... ({len(slower) - 20} more in compare.csv)" if len(slower) > 20 else ""))
    notice.end(f"compare: {len(findings)} program file(s) missing on one side or job(s) failed (listed above): "
               "not a result; --allow-missing to compare the rest" if findings and not args.allow_missing else "",
               regressions, f"compare: no regression beyond the threshold over {len(rows)} metrics "
               f"({totals.get(verdict.SAME, 0)} same, {totals.get(verdict.INCONCLUSIVE, 0)} inconclusive)")


if __name__ == "__main__":
    main()
