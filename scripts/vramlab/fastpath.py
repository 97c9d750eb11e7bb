"""The cache-hit alloc+free pair per configuration, from the rep-K/ folders of
tests/gpu/allocator_verdict.sh fastpath (one alloc_latency process per configuration and
round): the median of the processes' pair_median_ns with its range (the findings block
fast_path judges them).

  scripts/vl fastpath FOLDER [--size BYTES ...]"""
import argparse
import glob
import os
import sys

from vramlab import results

PREFIX, SUFFIX = "alloc_latency.", ".csv"


def pair_medians(folder, size):
    """{configuration: [pair_median_ns of each complete round's process at SIZE]}."""
    out = {}
    for rep in sorted(glob.glob(os.path.join(folder, "rep-*"))):
        if not os.path.isfile(os.path.join(rep, results.COMPLETE_MARK)):
            continue
        for path in sorted(glob.glob(os.path.join(rep, PREFIX + "*" + SUFFIX))):
            name = os.path.basename(path)[len(PREFIX):-len(SUFFIX)]
            for row in results.read_dicts(path):
                v = results.number(row.get("pair_median_ns", ""))
                if row.get("size_bytes") == str(size) and v is not None:
                    out.setdefault(name, []).append(v)
    return out


def summarize(values):
    """Rows (name, processes, median, min, max), by name."""
    return [(name, len(v), results.median(v), min(v), max(v)) for name, v in sorted(values.items())]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--size", type=int, action="append", help="request size in bytes (default 512 and 2 MiB)")
    args = ap.parse_args(argv)
    sizes = args.size or [512, 2 << 20]
    found = False
    for size in sizes:
        values = pair_medians(args.folder, size)
        found = found or bool(values)
        print(f"pair_median_ns at {size} B: median [min, max] over processes")
        for name, n, med, lo, hi in summarize(values):
            print(f"  {name:18s} {med:7.1f} [{lo:.1f}, {hi:.1f}] n={n}")
    if not found:
        print(f"fastpath: no complete rep-K/ folder with alloc_latency CSVs in {args.folder}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
