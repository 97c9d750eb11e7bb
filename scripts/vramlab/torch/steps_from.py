"""The step time of a torch-bench run counted from a later step: what a long run pays per
step once a one-off warm-up cost is behind it (plan=1 learns for a few steps, under the
tight budget, then maps nothing). The bench's own figures count every step after its
warm-up (vramlab.torch.bench --warmup, 2-5 steps); this reads each process's step
times (logs/*.json: step_ms_all, maps_all) and counts them from step FROM on, with the
same statistics as the bench: per process the median and the mean step, then the
Hodges-Lehmann ratio between processes against PyTorch's default allocator with its 95%
interval (bench_stats.ratio_between), and the map calls per step from FROM on (each
process's total over its steps, the median over processes).

    scripts/vl torch.steps_from RUNDIR --from 12 [--workload W] [--ref torch] > steps_from.csv
    scripts/vl torch.steps_from RUNDIR --per-step --workload W > steps.csv

docs/torch-bench.md, section "vramlab/torch/steps_from.py", has the rest."""
import argparse
import glob
import json
import os
import sys

from vramlab import rankstats
from vramlab.fmt import number
from vramlab.torch import bench_stats

FIELDS = ("workload", "allocator", "n", "from_step", "steps", "step_ms", "ratio", "ratio_lo", "ratio_hi",
          "ratio_mean", "ratio_mean_lo", "ratio_mean_hi", "speed", "maps_per_step_mean")


def load(rundir, workload):
    """{(workload, allocator): [process json, ...]} of the run's successful processes."""
    out = {}
    for path in sorted(glob.glob(os.path.join(rundir, "logs", "*.json"))):
        with open(path) as fh:
            d = json.load(fh)
        if d.get("status") != "ok" or (workload and d.get("workload") != workload):
            continue
        out.setdefault((d["workload"], d["allocator"]), []).append(d)
    return out


def per_process(procs, first):
    """Each process's (median step, mean step, map calls per step) over steps first..."""
    rows = []
    for d in procs:
        ms = d["step_ms_all"][first:]
        if not ms:
            return None
        # maps_all: readings of the cumulative count, [0] before step 0, [i + 1] after step i
        per = bench_stats.per_step(d.get("maps_all") or [], first)
        rows.append((rankstats.quantile_median(ms), sum(ms) / len(ms), per, len(ms)))
    return rows


def per_step_rows(runs, workload):
    """Rows step, then per allocator: median, min, max step ms and median map calls."""
    allocs = [a for (w, a) in runs if w == workload]
    nsteps = min(len(d["step_ms_all"]) for a in allocs for d in runs[(workload, a)])
    med = rankstats.quantile_median
    header = ["step"] + [f"{a}_{k}" for a in allocs for k in ("ms", "ms_min", "ms_max", "maps")]
    rows = []
    for i in range(nsteps):
        row = [i]
        for a in allocs:
            ms = [d["step_ms_all"][i] for d in runs[(workload, a)]]
            maps = [d["maps_all"][i + 1] - d["maps_all"][i] for d in runs[(workload, a)]
                    if len(d.get("maps_all") or []) > i + 1]
            row += [med(ms), min(ms), max(ms), med(maps) if maps else ""]
        rows.append(row)
    return header, rows


def cell(c):
    return number(c, 4) if isinstance(c, float) else str(c)


def from_rows(runs, first, ref_name):
    """One row per workload and allocator counted from step `first`; (rows, status)."""
    out, status = [], 0
    med = rankstats.quantile_median
    for workload in dict.fromkeys(w for w, _ in runs):
        ref = per_process(runs.get((workload, ref_name), []), first)
        if not ref:
            print(f"steps_from: {workload}: no {ref_name} process with steps from {first}", file=sys.stderr)
            status = 1
            continue
        for (w, alloc), procs in runs.items():
            if w != workload:
                continue
            rows = per_process(procs, first)
            if rows is None:
                print(f"steps_from: {workload} {alloc}: a process ends before step {first}", file=sys.stderr)
                status = 1
                continue
            is_ref = alloc == ref_name
            r = bench_stats.ratio_between([x[0] for x in ref], [x[0] for x in rows])
            m = bench_stats.ratio_between([x[1] for x in ref], [x[1] for x in rows])
            speed = "" if is_ref else bench_stats.speed_of([r[:3], m[:3]])
            maps = [x[2] for x in rows if x[2] is not None]
            out.append([workload, alloc, len(rows), first, min(x[3] for x in rows), med([x[0] for x in rows]),
                        *(("",) * 3 if is_ref else r[:3]), *(("",) * 3 if is_ref else m[:3]), speed,
                        med(maps) if maps else ""])
    return out, status


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rundir")
    ap.add_argument("--from", dest="first", type=int, help="the first step counted (0-based)")
    ap.add_argument("--per-step", action="store_true", help="one row per step instead (needs --workload)")
    ap.add_argument("--workload")
    ap.add_argument("--ref", default="torch", help="the reference allocator (default torch)")
    args = ap.parse_args(argv)
    if args.per_step and not args.workload:
        print("steps_from: --per-step needs --workload", file=sys.stderr)
        return 2
    if not args.per_step and (args.first is None or args.first < 1):
        print("steps_from: --from must be at least 1 (step 0 is the cold one)", file=sys.stderr)
        return 2
    runs = load(args.rundir, args.workload)
    if not runs:
        print(f"steps_from: no successful process in {args.rundir}/logs", file=sys.stderr)
        return 1
    if args.per_step:
        header, rows = per_step_rows(runs, args.workload)
        note, status = "per step: the median over each allocator's processes (maps_all: step i's map calls)", 0
    else:
        header, (rows, status) = FIELDS, from_rows(runs, args.first, args.ref)
        note = f"counted: steps {args.first} on of every process (the bench counts from its warm-up)"
    print(f"# run: {os.path.abspath(args.rundir)}")
    print(f"# {note}")
    print(",".join(header))
    for row in rows:
        print(",".join(cell(c) for c in row))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
