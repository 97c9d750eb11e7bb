"""The live waste/speed trade-off of two plugin SPECs per workload, as users run them: one
allocator per process, several processes of each, interleaved with PyTorch's default
allocator, all in one torch-bench run (vramlab/torch/README.md):

    make torch-bench RUN=x ROUNDS=4 TORCH_BENCH_ARGS='--define low=SPEC \\
        --allocators torch,vramlab-expandable,low'
    scripts/vl torch.tradeoff_procs RUNDIR --a vramlab-expandable --b low > tradeoff.csv

docs/torch-bench.md, section "vramlab/torch/tradeoff_procs.py", has the rest."""
import csv
import os
import sys

from vramlab import verdict
from vramlab.results import read_dicts
from vramlab.torch import bench_stats, tradeoff

SIDE = ("n", "ratio", "ratio_lo", "ratio_hi", "ratio_mean", "ratio_mean_lo", "ratio_mean_hi", "speed", "waste",
        "maps_per_step", "unmaps_per_step", "alloc_ms", "alloc_ms_mean", "call")
FIELDS = ("workload", "torch_step_ms") + tuple(f"{s}_{k}" for s in "ab" for k in SIDE) + ("tradeoff",)


def call_of(speed, waste):
    """What one SPEC's processes show against both limits, in words."""
    if waste is None:
        return "no result"
    parts = [] if waste <= bench_stats.WASTE_LIMIT else [f"waste over {bench_stats.WASTE_LIMIT}"]
    if speed == verdict.FAIL:
        parts.append(f"slower than {bench_stats.SPEED_LIMIT}x")
    elif speed != verdict.PASS:
        parts.append("speed unresolved")
    return "; ".join(parts) if parts else "meets both"


def side_of(row):
    """The SIDE figures of one summary row (None where the run has no such row)."""
    if row is None:
        return None
    num = bench_stats.num
    s = {k: num(row.get(k)) for k in SIDE if k not in ("speed", "call", "n")}
    s["n"] = row.get("n")
    s["speed"] = bench_stats.speed_of([(s["ratio"], s["ratio_lo"], s["ratio_hi"]),
                                       (s["ratio_mean"], s["ratio_mean_lo"], s["ratio_mean_hi"])])
    s["call"] = call_of(s["speed"], s["waste"])
    return s


def rows_of(summary, a, b):
    by = {(r["workload"], r["allocator"]): r for r in summary}
    out = []
    for w in dict.fromkeys(r["workload"] for r in summary):
        ref = by.get((w, "torch"))
        sa, sb = side_of(by.get((w, a))), side_of(by.get((w, b)))
        row = {"workload": w, "torch_step_ms": bench_stats.num(ref.get("step_ms")) if ref else None}
        for name, s in (("a", sa), ("b", sb)):
            for k in SIDE:
                row[f"{name}_{k}"] = s[k] if s else None
        over = [s for s in (sa, sb) if s and s["waste"] is not None and s["waste"] > bench_stats.WASTE_LIMIT]
        slow = [s for s in (sa, sb) if s and s["speed"] == verdict.FAIL]
        row["tradeoff"] = "shown" if over and slow and over[0] is not slow[0] else ""
        out.append(row)
    return out


def main(argv):
    args = tradeoff.arguments(__doc__, argv)
    path = os.path.join(args.rundir, "summary.csv")
    if not os.path.isfile(path):
        print(f"tradeoff_procs: {args.rundir}: no summary.csv (a torch-bench run's)", file=sys.stderr)
        return 2
    conditions = []  # the run's '#' lines (git, device, ...) go on with its figures
    summary = read_dicts(path, conditions)
    for name in ("torch", args.a, args.b):
        if not any(r.get("allocator") == name for r in summary):
            print(f"tradeoff_procs: {args.rundir}: no process of {name} in summary.csv", file=sys.stderr)
            return 1
    sys.stdout.writelines(conditions)
    print(f"# tradeoff: {args.a} (a) against {args.b} (b), each against torch, from {path}")
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(FIELDS)
    for r in rows_of(summary, args.a, args.b):
        w.writerow([tradeoff.cell(r.get(k)) for k in FIELDS])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
