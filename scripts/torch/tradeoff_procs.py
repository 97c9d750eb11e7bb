#!/usr/bin/env python3
"""The live waste/speed trade-off of two plugin SPECs per workload, as users run them: one
allocator per process, several processes of each, interleaved with PyTorch's default
allocator, all in one torch-bench run (scripts/torch/README.md):

    make torch-bench RUN=x ROUNDS=4 TORCH_BENCH_ARGS='--define low=SPEC \\
        --allocators torch,vramlab-expandable,low'
    python3 scripts/torch/tradeoff_procs.py RUNDIR --a vramlab-expandable --b low > tradeoff.csv

Reads RUNDIR/summary.csv (bench_stats' figures, one row per workload and allocator) and
writes CSV on stdout: the summary's '#' lines (the run's conditions), then one row per
workload. Per
workload and SPEC: the step time against PyTorch's default allocator as the bench's summary
gives it (round-paired from 6 rounds, else between processes: the median step's and the
mean step's Hodges-Lehmann ratio with their 95% intervals),
the speed call over both intervals (ok, slower, inconclusive: bench_stats.speed_of), the
waste (peak reserved / peak allocated), map and unmap calls per step and the allocator's
time per step (the median and the mean over steps, each a median over processes); then what each SPEC shows against both limits (call), and whether the run
shows the trade-off (tradeoff: one SPEC over the waste limit, the other shown slower).
Exit 1 where a SPEC has no row in the run (a typo compares nothing), 2 on usage."""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_stats  # noqa: E402
import tradeoff  # noqa: E402

SIDE = ("n", "ratio", "ratio_lo", "ratio_hi", "ratio_mean", "ratio_mean_lo", "ratio_mean_hi", "speed", "waste",
        "maps_per_step", "unmaps_per_step", "alloc_ms", "alloc_ms_mean", "call")
FIELDS = ("workload", "torch_step_ms") + tuple(f"{s}_{k}" for s in "ab" for k in SIDE) + ("tradeoff",)


def call_of(speed, waste):
    """What one SPEC's processes show against both limits, in words."""
    if waste is None:
        return "no result"
    parts = [] if waste <= bench_stats.WASTE_LIMIT else [f"waste over {bench_stats.WASTE_LIMIT}"]
    if speed == "slower":
        parts.append(f"slower than {bench_stats.SPEED_LIMIT}x")
    elif speed != "ok":
        parts.append("speed unresolved")
    return "; ".join(parts) if parts else "meets both"


def side_of(row):
    """The SIDE figures of one summary row (None where the run has no such row)."""
    if row is None:
        return None
    num = bench_stats.num
    s = {k: num(row.get(k)) for k in SIDE if k not in ("speed", "call", "n")}
    s["n"] = row.get("n")
    s["speed"] = bench_stats.speed_of([(s["ratio_lo"], s["ratio_hi"]), (s["ratio_mean_lo"], s["ratio_mean_hi"])])
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
        slow = [s for s in (sa, sb) if s and s["speed"] == "slower"]
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
    summary = bench_stats.read_csv(path, conditions)
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
