"""Where expandable's reclaim budget ended, and whether its relocation was hidden, per
workload and allocator of a torch-bench run (lib/caching/budget.c):

    scripts/vl torch.relocation RUNDIR > relocation.csv

docs/torch-bench.md, section "vramlab/torch/relocation.py", has the rest."""
import csv
import glob
import json
import os
import statistics
import sys

from vramlab.fmt import number

FIELDS = ("workload", "allocator", "processes", "budget_median", "budget_min", "budget_max",
          "hidden_median", "exposed_median", "exposed_min", "exposed_max", "hidden_share",
          "map_time_share", "exposed_time_share", "unmap_time_share", "relocating_share")


def rows_of(rundir):
    """{(workload, allocator): [json, ...]} for the processes that report a budget."""
    groups = {}
    for path in sorted(glob.glob(os.path.join(rundir, "logs", "*.json"))):
        with open(path) as fh:
            try:
                d = json.load(fh)
            except json.JSONDecodeError:
                continue  # a process killed while writing: torch-bench reports it as failed
        if d.get("status") != "ok" or d.get("budget_ppm") is None:
            continue
        groups.setdefault((d["workload"], d["allocator"]), []).append(d)
    return groups


def summarize(group):
    budgets = [d["budget_ppm"] / 1e6 for d in group]
    hidden = [d["relocation_maps_hidden"] for d in group]
    exposed = [d["relocation_maps_exposed"] for d in group]
    total = sum(hidden) + sum(exposed)

    def time_share(key):
        shares = [d[key] / 1e9 / d["steps_s"] for d in group if d.get(key) is not None and d.get("steps_s")]
        return f"{statistics.median(shares):.4f}" if len(shares) == len(group) else ""

    maps = [d.get("maps_total") for d in group]
    relocating_share = f"{total / sum(maps):.4f}" if None not in maps and sum(maps) > 0 else ""
    return dict(processes=len(group), budget_median=number(statistics.median(budgets), ".6g"),
                budget_min=number(min(budgets), ".6g"), budget_max=number(max(budgets), ".6g"),
                hidden_median=statistics.median(hidden), exposed_median=statistics.median(exposed),
                exposed_min=min(exposed), exposed_max=max(exposed),
                hidden_share=f"{sum(hidden) / total:.4f}" if total else "",
                map_time_share=time_share("relocation_map_ns"), exposed_time_share=time_share("relocation_exposed_ns"),
                unmap_time_share=time_share("relocation_unmap_ns"), relocating_share=relocating_share)


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: scripts/vl torch.relocation RUNDIR", file=sys.stderr)
        return 2
    if not os.path.isdir(os.path.join(argv[1], "logs")):
        print(f"relocation: {argv[1]} has no logs/ folder (a torch-bench run folder?)", file=sys.stderr)
        return 2
    groups = rows_of(argv[1])
    if not groups:
        print(f"relocation: no process in {argv[1]}/logs reports a reclaim budget", file=sys.stderr)
        return 1
    w = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
    w.writeheader()
    for (workload, allocator), group in sorted(groups.items()):
        w.writerow(dict(workload=workload, allocator=allocator, **summarize(group)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
