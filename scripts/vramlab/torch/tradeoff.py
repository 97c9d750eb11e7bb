"""The live waste/speed trade-off of two plugin SPECs per workload, from one torch-bench run
that ran each alone and both paired in one process (vramlab/torch/README.md):

    make torch-bench RUN=x ROUNDS=1 TORCH_BENCH_ARGS='--define low=SPEC \\
        --allocators low,vramlab-expandable,vramlab-expandable+low'
    scripts/vl torch.tradeoff RUNDIR --a vramlab-expandable --b low > tradeoff.csv

docs/torch-bench.md, section "vramlab/torch/tradeoff.py", has the rest."""
import argparse
import csv
import json
import os
import sys

from vramlab import fmt
from vramlab.torch import bench_stats

FIELDS = ("workload", "a_waste", "b_waste", "a_maps_per_step", "b_maps_per_step", "a_unmaps_per_step",
          "b_unmaps_per_step", "time_ratio", "median_ratio", "timed_steps", "failed")


def load(path):
    with open(path) as f:
        return json.load(f)


def rows_of(rundir, a, b):
    logs = os.path.join(rundir, "logs")
    names = sorted(os.listdir(logs))
    workloads = list(dict.fromkeys(n.split(".")[1] for n in names if n.endswith(".json")))
    out = []
    for w in workloads:
        row = dict(workload=w, failed="")
        runs = {k: [n for n in names if n.endswith(f".{w}.{k}.json")] for k in (a, b, f"{a}+{b}")}
        # a process that failed leaves its log but no JSON: the row says so
        got = {k: load(os.path.join(logs, v[-1])) if v else {"status": "failed"} for k, v in runs.items()}
        for side, k in (("a", a), ("b", b)):
            d = got[k]
            if d.get("status") != "ok":
                row["failed"] += f"{k} "
                continue
            row[f"{side}_waste"] = bench_stats.waste_of(d)[0]
            row[f"{side}_maps_per_step"] = d.get("maps_per_step")
            row[f"{side}_unmaps_per_step"] = d.get("unmaps_per_step")
        p = got[f"{a}+{b}"]
        if p.get("status") == "ok":
            # the warm-up: the steps before the timed ones (units 2i, 2i+1 per step)
            row["time_ratio"] = bench_stats.pair_total_ratio(p["step_ms_all"], p["served_by"],
                                                             len(p["step_ms_all"]) // 2 - p["steps_timed"])
            row["timed_steps"] = p["steps_timed"]
            row["median_ratio"] = p.get("paired_ratio")
        else:
            row["failed"] += f"{a}+{b} "
        row["failed"] = row["failed"].strip()
        out.append(row)
    return out


def cell(v):
    """A CSV cell: a float with 5 significant digits (inf as "inf"), anything else as it is."""
    return fmt.number(v, ".5g") if isinstance(v, float) else ("" if v is None else str(v))


def arguments(doc, argv):
    """RUNDIR, --a and --b: the command line of both trade-off scripts (vramlab.torch.tradeoff_procs)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("rundir")
    ap.add_argument("--a", default="vramlab-expandable", help="the reference SPEC's allocator name")
    ap.add_argument("--b", required=True, help="the other SPEC's allocator name (--define'd)")
    return ap.parse_args(argv)


def main(argv):
    args = arguments(__doc__, argv)
    if not os.path.isdir(os.path.join(args.rundir, "logs")):
        print(f"tradeoff: {args.rundir}: no logs/ folder (a torch-bench run's)", file=sys.stderr)
        return 2
    rows = rows_of(args.rundir, args.a, args.b)
    if not rows:
        print(f"tradeoff: {args.rundir}: no workload", file=sys.stderr)
        return 1
    # a name the run does not have (a typo) compares nothing: an error, not empty columns
    for name, col in ((args.a, "a_waste"), (args.b, "b_waste"), (f"{args.a}+{args.b}", "time_ratio")):
        if all(r.get(col) is None for r in rows):
            print(f"tradeoff: {args.rundir}: no process of {name} has a result", file=sys.stderr)
            return 1
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(FIELDS)
    for r in rows:
        w.writerow([cell(r.get(k)) for k in FIELDS])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
