"""noise [--summary] COMPARE_CSV PAIRS (scripts/vl noise): what an A/A experiment (scripts/ab --noise)
says this machine can resolve. From compare.csv of two runs of the same setting:
  default:   CSV, one row per metric: its process-to-process noise (the pooled
             within-side standard deviation; of log values, so 0.1 is about 10%), the
             smallest change detectable at PAIRS repetitions per side (80% power), and
             the repetitions per side needed to detect 5%, 10% and 20%;
  --summary: a few lines per program: how many metrics resolve 5/10/20% at PAIRS, the
             median and worst detectable change, and the false alarms of the A/A run."""
import csv
import math
import sys

from vramlab import rankstats
from vramlab.results import read_dicts

TARGETS = (0.05, 0.10, 0.20)
ALPHA, POWER = 0.05, 0.8


def reps_for(noise, target):
    """Repetitions per side for the rank test to detect a change of target (a ratio - 1)."""
    if not math.isfinite(noise):
        return None
    if noise == 0:
        return 4  # the rank test's minimum at alpha 0.05
    z = rankstats.normal_quantile(1 - ALPHA / 2) + rankstats.normal_quantile(POWER)
    return max(4, math.ceil(2 * (z * noise * math.sqrt(math.pi / 3) / math.log1p(target)) ** 2))


def main(argv):
    summary = argv[:1] == ["--summary"]
    argv = argv[1:] if summary else argv
    if len(argv) != 2 or not argv[1].isdigit():
        print("usage: scripts/vl noise [--summary] COMPARE_CSV PAIRS", file=sys.stderr)
        return 2
    rows, pairs = read_dicts(argv[0]), int(argv[1])
    for r in rows:
        r["noise_f"] = float(r["noise"]) if r["noise"] else (0.0 if r["basis"] == "exact" else math.nan)
        r["mde_f"] = float(r["mde"]) if r["mde"] else math.nan
        r["program"] = r["file_a"].split(".", 1)[0] if not r["file_a"].startswith("hyperfine/") else "hyperfine"
    if not summary:
        w = csv.writer(sys.stdout)
        sys.stdout.write(f"# A/A noise at {pairs} pairs; noise = pooled sd over processes (log scale where "
                         "values are positive); mde = smallest change detectable (80% power, alpha 0.05)\n")
        w.writerow(["index", "program", "file", "row", "metric", "unit", "n", "noise", "mde", "verdict"]
                   + [f"reps_for_{int(t * 100)}pct" for t in TARGETS])
        for r in rows:
            need = [reps_for(r["noise_f"], t) for t in TARGETS]
            w.writerow([r["index"], r["program"], r["file_a"], r["row"], r["metric"], r["unit"], r["n_a"],
                        r["noise"], r["mde"], r["verdict"]] + ["" if n is None else n for n in need])
        return 0
    print(f"noise at {pairs} pairs (A/A): per program, the metrics that vary from process to process, how many "
          "of them a comparison at this many pairs resolves to 5% / 10% / 20%, and this A/A run's verdicts")
    by_prog = {}
    for r in rows:
        by_prog.setdefault(r["program"], []).append(r)
    for prog, rs in sorted(by_prog.items()):
        exact = sum(1 for r in rs if r["basis"] == "exact")
        mdes = sorted(r["mde_f"] for r in rs if r["basis"] != "exact" and math.isfinite(r["mde_f"]))
        counts = [sum(1 for m in mdes if m <= t) for t in TARGETS]
        verdicts = {}
        for r in rs:
            verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
        med = f"{rankstats.quantile_median(mdes):.1%}" if mdes else "-"
        worst = f"{mdes[-1]:.1%}" if mdes else "-"
        print(f"  {prog:<22} {len(rs):4d} metrics, {exact} identical in every repetition; of the {len(rs) - exact} "
              f"that vary, resolve 5%: {counts[0]}, 10%: {counts[1]}, 20%: {counts[2]}; smallest detectable change "
              f"median {med}, worst {worst}; " + ", ".join(f"{v} {k}" for k, v in sorted(verdicts.items())))
    same = sum(1 for r in rows if r["verdict"] == "same")
    print(f"  all: {len(rows)} metrics, {same} same ({same / max(1, len(rows)):.1%}); a verdict other than same or "
          "inconclusive in an A/A run is a false alarm")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
