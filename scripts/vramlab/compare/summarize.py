"""summarize RUN (scripts/vl compare.summarize RUN): for a repeated run (RUN/rep-1, rep-2, ...), writes RUN/summary.csv:
every metric over the repetitions (one value per repetition: one process), with the
median, the quartiles, the extremes and the relative IQR, which is the process-to-process
noise a comparison has to see through. Called by scripts/bench.sh --repeat.
A repetition without COMPLETE (interrupted, or still running) is refused, exit 2;
--allow-incomplete summarizes anyway and says so in summary.csv and on stdout. A file that
cannot be read or is malformed (vlresults.BadInput) is named in one line, exit 2."""
import csv
import os
import sys

from vramlab import fmt
from vramlab import results as vlresults


def main(argv):
    allow, folder = vlresults.folder_and_flag(argv, "--allow-incomplete")
    if folder is None:
        print("usage: summarize [--allow-incomplete] RUN_FOLDER", file=sys.stderr)
        return 2
    try:
        run = vlresults.Run(folder)
    except vlresults.BadInput as e:
        print(f"summarize: bad input: {e}", file=sys.stderr)
        return 2
    if not run.repeated:
        print(f"summarize: {folder} has no rep-<k> folders", file=sys.stderr)
        return 2
    flag = ""
    if run.incomplete:
        flag = (f"INCOMPLETE: {len(run.incomplete)} of {len(run.reps)} repetitions have no {vlresults.COMPLETE_MARK} "
                f"(interrupted or still running): " + ", ".join(os.path.basename(p) for p in run.incomplete))
        if not allow:
            print(f"summarize: {folder}: {flag}; pass --allow-incomplete to summarize anyway", file=sys.stderr)
            return 2
        print(f"summarize: {flag}")
    path = os.path.join(folder, "summary.csv")
    with open(path, "w", newline="") as f:
        if flag:
            f.write(f"# {flag}\n")
        f.write(f"# repetitions: {len(run.reps)}\n# one value per repetition (a separate process); "
                "rel_iqr = (p75 - p25) / median over the repetitions\n")
        w = csv.writer(f)
        w.writerow(["file", "row", "metric", "unit", "n", "median", "p25", "p75", "min", "max", "rel_iqr"])
        for fname in sorted(run.files):
            for m in run.files[fname]:
                v = sorted(m.samples)
                p25, p75 = vlresults.quantile(v, 0.25), vlresults.quantile(v, 0.75)
                rel = (p75 - p25) / abs(m.value) if m.value else ""
                w.writerow([fname, m.row, m.name, m.unit, len(v)] + [fmt.number(x, ".6g") for x in (m.value, p25, p75, v[0], v[-1])]
                           + [fmt.number(rel, ".4g") if rel != "" else ""])
    for line in run.malformed:
        print(f"summarize: malformed row: {line}", file=sys.stderr)
    print(f"bench: summary over {len(run.reps)} repetitions: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
