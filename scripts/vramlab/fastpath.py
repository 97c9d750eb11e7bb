"""The cache-hit alloc+free pair per configuration, from the rep-K/ folders of
tests/gpu/allocator_verdict.sh fastpath (one alloc_latency process per configuration and
round): the median of the processes' pair_median_ns with its 95% distribution-free
interval and range, and, for each base_NAME configuration (FAST_BASE: another build in
the same rounds), NAME / base_NAME paired by round (the findings block fast_path judges them).

  scripts/vl fastpath FOLDER [--size BYTES ...]   (default: every size the rounds measured)"""
import argparse
import glob
import math
import os
import sys

from vramlab import rankstats, results

PREFIX, SUFFIX = "alloc_latency.", ".csv"
BASE = "base_"  # allocator_verdict.sh's prefix for FAST_BASE's configurations


def pair_by_round(folder, size):
    """{configuration: {round folder: pair_median_ns of its process at SIZE}}, complete rounds only."""
    out = {}
    for rep in sorted(glob.glob(os.path.join(folder, "rep-*"))):
        if not os.path.isfile(os.path.join(rep, results.COMPLETE_MARK)):
            continue
        for path in sorted(glob.glob(os.path.join(rep, PREFIX + "*" + SUFFIX))):
            name = os.path.basename(path)[len(PREFIX):-len(SUFFIX)]
            for row in results.read_dicts(path):
                v = results.number(row.get("pair_median_ns", ""))
                if row.get("size_bytes") == str(size) and v is not None:
                    out.setdefault(name, {})[os.path.basename(rep)] = v
    return out


def sizes_measured(folder):
    """Every size_bytes with a pair_median_ns in the complete rounds, ascending."""
    sizes = set()
    for rep in glob.glob(os.path.join(folder, "rep-*")):
        if os.path.isfile(os.path.join(rep, results.COMPLETE_MARK)):
            for path in glob.glob(os.path.join(rep, PREFIX + "*" + SUFFIX)):
                sizes.update(int(r["size_bytes"]) for r in results.read_dicts(path)
                             if results.number(r.get("pair_median_ns", "")) is not None
                             and (r.get("size_bytes") or "").isdigit())
    return sorted(sizes)


def pair_medians(folder, size):
    """{configuration: [pair_median_ns of each complete round's process at SIZE]}."""
    return {name: list(by.values()) for name, by in pair_by_round(folder, size).items()}


def summarize(values):
    """Rows (name, processes, median, min, max), by name."""
    return [(name, len(v), results.median(v), min(v), max(v)) for name, v in sorted(values.items())]


def median_intervals(values):
    """{name: (median, low, high, coverage)}: rankstats.median_interval of each."""
    return {name: rankstats.median_interval(v) for name, v in values.items()}


def against_base(by_round):
    """Rows (name, rounds, ratio, low, high): NAME over base_NAME in the rounds that ran
    both, the signed-rank pseudo-median of the log ratios and its 95% interval, as ratios."""
    rows = []
    for base in sorted(n for n in by_round if n.startswith(BASE)):
        name = base[len(BASE):]
        common = sorted(set(by_round.get(name, {})) & set(by_round[base]))
        logs = [math.log(by_round[name][r] / by_round[base][r]) for r in common
                if by_round[name][r] > 0 and by_round[base][r] > 0]
        if logs:
            est, lo, hi, _ = rankstats.signed_rank_interval(logs)
            rows.append((name, len(logs), math.exp(est), math.exp(lo), math.exp(hi)))
    return rows


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--size", type=int, action="append", help="request size in bytes (default: every size measured)")
    args = ap.parse_args(argv)
    sizes = args.size or sizes_measured(args.folder)
    found = False
    for size in sizes:
        by_round = pair_by_round(args.folder, size)
        if not by_round:
            print(f"pair_median_ns at {size} B: no process measured this size")
            continue
        found = True
        values = {name: list(by.values()) for name, by in by_round.items()}
        ci = median_intervals(values)
        print(f"pair_median_ns at {size} B: median [95% interval of the median] (range) over processes")
        for name, n, med, lo, hi in summarize(values):
            _, clo, chi, cov = ci[name]
            print(f"  {name:22s} {med:7.1f} [{clo:.1f}, {chi:.1f}] ({lo:.1f}-{hi:.1f}) n={n}"
                  + (f" (that interval covers {cov:.0%})" if cov < 0.95 else ""))
        for name, n, est, lo, hi in against_base(by_round):
            print(f"  {name} / {BASE}{name}, paired by round: {est:.3f} [{lo:.3f}, {hi:.3f}] over {n} rounds")
    if not found:
        print(f"fastpath: no complete rep-K/ folder with alloc_latency CSVs in {args.folder}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
