"""Which limit binds, per zoo workload. Expandable's default SPEC is judged live against
two limits (step time within 3% of PyTorch's default allocator: the upper end of the 95%
interval of the ratio; peak reserved / peak allocated at most 1.02) and on the GPU's cold
replay of the workload's trace (at least PyTorch's expandable segments' ops/s). Where the
default is over 1.02, this says what the low-waste SPEC, which holds waste down, costs
instead: step time, the cold replay, or nothing the runs could resolve.

    scripts/vl torch.binding --live RUN1/tradeoff.csv [--live RUN2/tradeoff.csv ...] \\
        --cold COLD1/cold.csv [--cold COLD2/cold.csv ...] [--default-spec SPEC] \\
        [--lowwaste-spec SPEC] > binding.csv

docs/torch-bench.md, section "vramlab/torch/binding.py", has the rest."""
import argparse
import csv
import os
import sys

from vramlab import cold, verdict
from vramlab import results as vlresults
from vramlab.fmt import number
from vramlab.torch import bench_stats

DEFAULT_SPEC = "caching:segments=expandable"
LOWWASTE_SPEC = "caching:segments=expandable,span=0,reclaim_max=0.008"
FIELDS = ("workload", "live_run", "live_git", "default_n", "default_speed", "default_waste", "default_ratio_mean",
          "default_ratio_mean_lo", "default_ratio_mean_hi", "lowwaste_n",
          "lowwaste_speed", "lowwaste_waste", "lowwaste_ratio_mean", "lowwaste_ratio_mean_lo",
          "lowwaste_ratio_mean_hi", "cold_n", "cold_git", "default_cold", "default_cold_lo", "default_cold_hi",
          "default_cold_call", "lowwaste_cold", "lowwaste_cold_lo", "lowwaste_cold_hi", "lowwaste_cold_call",
          "binds")


def read_rows(path):
    """('#' metadata, [rows as dicts]) of one vramlab CSV (a tradeoff.csv, a summary.csv)."""
    meta, header, rows = vlresults.read_csv(path)
    return meta, [dict(zip(header, r)) for r in rows]


def conditions(metas):
    """The inputs' metadata that says where they come from, as one '#' line each of
    git_revision, gpu and driver, their values comma-separated (first seen first, once)."""
    keys = {"git": "git_revision", "git_revision": "git_revision", "device": "gpu", "gpu": "gpu", "driver": "driver"}
    seen = {"git_revision": [], "gpu": [], "driver": []}
    for meta in metas:
        for key, value in meta.items():
            if key in keys and value and value not in seen[keys[key]]:
                seen[keys[key]].append(value)
    return [f"# {k}: {', '.join(v)}" for k, v in seen.items() if v]


def best_rows(lives):
    """{workload: (row, meta)} over the (meta, rows) of each --live file: the row whose
    smaller side has the most processes."""
    best = {}
    for meta, rows in lives:
        for r in rows:
            n = min(int(r["a_n"] or 0), int(r["b_n"] or 0))
            if n and (r["workload"] not in best or n >= best[r["workload"]][2]):
                best[r["workload"]] = (r, meta, n)
    return {w: (r, m) for w, (r, m, _) in best.items()}


def binds(row, low_cold):
    """What the runs show binds for one workload (see the module's text)."""
    if not row["a_waste"] or not row["b_waste"]:
        return "no result"  # a SPEC without a peak: nothing to weigh
    if float(row["a_waste"]) <= bench_stats.WASTE_LIMIT:
        return {verdict.PASS: "default meets both", verdict.FAIL: "default slower"}.get(
            verdict.outcome_of(row["a_speed"]), "default's speed unresolved")
    shown = [what for what, holds in (("waste", float(row["b_waste"]) > bench_stats.WASTE_LIMIT),
                                      ("step time", verdict.outcome_of(row["b_speed"]) == verdict.FAIL),
                                      ("cold replay", low_cold["call"] == verdict.FAIL)) if holds]
    return "; ".join(shown) if shown else "nothing shown"


def best_cold(rates, workload, *specs):
    """The ratios of specs against PyTorch's in the cold file where the fewest processes
    among them and PyTorch's is the most (the later on a tie), and that file's index;
    (None, None), None where no file has them all."""
    best, most, which = (None, None), 0, None
    for i, rate in enumerate(rates):
        got = [cold.ratio(rate, workload, spec) for spec in specs]
        if None in got:
            continue
        n = min(min(r["n"] for r in got), len(rate[(workload, cold.TORCH)]))
        if n >= most:
            best, most, which = tuple(got), n, i
    return best, which


def main(argv):
    ap = argparse.ArgumentParser(description="which limit binds, per zoo workload")
    ap.add_argument("--live", action="append", required=True, help="a torch.tradeoff_procs CSV (repeatable)")
    ap.add_argument("--cold", action="append", required=True, help="allocator_verdict.sh's cold.csv with both SPECs (repeatable)")
    ap.add_argument("--default-spec", default=DEFAULT_SPEC)
    ap.add_argument("--lowwaste-spec", default=LOWWASTE_SPEC)
    args = ap.parse_args(argv[1:])
    for path in args.live + args.cold:
        if not os.path.isfile(path):
            print(f"binding: no such file: {path}", file=sys.stderr)
            return 2
    lives = [read_rows(path) for path in args.live]
    live = best_rows(lives)
    if not live:
        print("binding: no workload with processes on both sides in --live", file=sys.stderr)
        return 2
    colds = [cold.read(path) for path in args.cold]
    rates = [rate for _, rate in colds]
    print(f"# binding: live {' '.join(args.live)}; cold {' '.join(args.cold)}")
    for line in conditions([meta for meta, _ in lives] + [meta for meta, _ in colds]):
        print(line)
    w = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
    w.writeheader()
    missing = []
    for workload in sorted(live):
        row, meta = live[workload]
        (a, b), which = best_cold(rates, workload, args.default_spec, args.lowwaste_spec)
        if a is None:
            missing.append(workload)
            continue
        w.writerow(dict(workload=workload, live_run=meta.get("run_id", ""), live_git=meta.get("git", ""),
                        default_n=row["a_n"], default_speed=row["a_speed"], default_waste=row["a_waste"],
                        default_ratio_mean=row["a_ratio_mean"], default_ratio_mean_lo=row["a_ratio_mean_lo"],
                        default_ratio_mean_hi=row["a_ratio_mean_hi"],
                        lowwaste_n=row["b_n"], lowwaste_speed=row["b_speed"], lowwaste_waste=row["b_waste"],
                        lowwaste_ratio_mean=row["b_ratio_mean"], lowwaste_ratio_mean_lo=row["b_ratio_mean_lo"],
                        lowwaste_ratio_mean_hi=row["b_ratio_mean_hi"], cold_n=min(a["n"], b["n"]), cold_git=colds[which][0].get("git_revision", ""),
                        default_cold=number(a["estimate"], ".3f"), default_cold_lo=number(a["lo"], ".3f"),
                        default_cold_hi=number(a["hi"], ".3f"),
                        default_cold_call=a["call"], lowwaste_cold=number(b["estimate"], ".3f"),
                        lowwaste_cold_lo=number(b["lo"], ".3f"), lowwaste_cold_hi=number(b["hi"], ".3f"), lowwaste_cold_call=b["call"], binds=binds(row, b)))
    if missing:
        print(f"binding: no cold replay of both SPECs and PyTorch's for {', '.join(missing)} in {' '.join(args.cold)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
