"""rows RUN METRIC FILE_A ROW_A [FILE_B] ROW_B: within one repeated run, one row of a
CSV against another (e.g. PyTorch's allocator against vramlab's in torch_alloc_compare,
which puts them in the same processes, or alloc_latency.async.csv against
alloc_latency.caching.csv): the median and range of each over the repetitions, and the
ratio B/A with its 95% interval (Hodges-Lehmann on log values over the repetitions, as
scripts/compare does between runs). ROW_A / ROW_B: a substring that picks exactly one
row identity (as scripts/compare prints it). FILE_B defaults to FILE_A. Exit 2 on usage
errors and on a file that cannot be read or is malformed."""
import math
import sys

from vramlab import rankstats
from vramlab import results as vlresults


def pick(metrics, metric, needle):
    found = [m for m in metrics if m.name == metric and needle in m.row]
    if len(found) != 1:
        raise ValueError(f"'{needle}' matches {len(found)} rows with metric {metric}")
    return found[0]


def main(argv):
    if len(argv) not in (5, 6):
        print("usage: scripts/vl compare.rows RUN METRIC FILE_A ROW_A [FILE_B] ROW_B", file=sys.stderr)
        return 2
    run_path, metric, file_a, row_a = argv[:4]
    file_b, row_b = (argv[4], argv[5]) if len(argv) == 6 else (file_a, argv[4])
    try:
        run = vlresults.Run(run_path)
    except vlresults.BadInput as e:
        print(f"rows: bad input: {e}", file=sys.stderr)
        return 2
    for fname in (file_a, file_b):
        if fname not in run.files:
            print(f"rows: no {fname} in {run_path}", file=sys.stderr)
            return 2
    try:
        a, b = pick(run.files[file_a], metric, row_a), pick(run.files[file_b], metric, row_b)
    except ValueError as e:
        print(f"rows: {e}", file=sys.stderr)
        return 2
    la, lb = [math.log(x) for x in a.samples], [math.log(x) for x in b.samples]
    est, lo, hi = rankstats.hodges_lehmann(la, lb, 0.05)
    p = rankstats.mann_whitney(la, lb)
    for tag, m in (("A", a), ("B", b)):
        print(f"{tag}: {m.row}  {metric}: median {m.value:.4g}, range {min(m.samples):.4g}-{max(m.samples):.4g}, "
              f"n {len(m.samples)}")
    print(f"B/A {math.exp(est):.3g} [{math.exp(lo):.3g}, {math.exp(hi):.3g}] (95%), p {p:.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
