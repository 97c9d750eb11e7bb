#!/usr/bin/env python3
"""Where expandable's reclaim budget ended, and whether its relocation was hidden, per
workload and allocator of a torch-bench run (lib/caching/budget.c):

    python3 scripts/torch/relocation.py RUNDIR > relocation.csv

Reads RUNDIR/logs/*.json (one per process; bench.py records budget_ppm,
relocation_maps_hidden and relocation_maps_exposed for vramlab caching SPECs) and writes
CSV: per workload and allocator, the processes with these figures, the median and range
over processes of the final budget, and of the relocating map calls per process whose
stream still had queued work after them (hidden) or not (exposed), the hidden share of
all of them, and (where the processes recorded relocation_map_ns and
relocation_exposed_ns) the host time in those calls and its exposed part, and (with
relocation_unmap_ns) the host time unmapping the retired chunks later, as shares of the
time in steps (steps_s; warm-up included), medians over processes; and the relocating
maps' share of all the processes' map calls (maps_total): the rest map growth. Allocators without the figures (PyTorch's own) are left out. Exit 1
when no process of the run has them (nothing to report), 2 on usage."""
import csv
import glob
import json
import os
import statistics
import sys

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
    return dict(processes=len(group), budget_median=f"{statistics.median(budgets):.6g}",
                budget_min=f"{min(budgets):.6g}", budget_max=f"{max(budgets):.6g}",
                hidden_median=statistics.median(hidden), exposed_median=statistics.median(exposed),
                exposed_min=min(exposed), exposed_max=max(exposed),
                hidden_share=f"{sum(hidden) / total:.4f}" if total else "",
                map_time_share=time_share("relocation_map_ns"), exposed_time_share=time_share("relocation_exposed_ns"),
                unmap_time_share=time_share("relocation_unmap_ns"), relocating_share=relocating_share)


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: relocation.py RUNDIR", file=sys.stderr)
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
