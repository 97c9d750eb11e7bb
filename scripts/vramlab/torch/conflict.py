"""Does one expandable SPEC meet both of the default's limits on every zoo workload?
The two limits that pull apart: live waste (peak reserved / peak allocated at most 1.02)
and the GPU's cold replay of the workload's trace (at least PyTorch's expandable
segments' first-pass ops/s). Per SPEC and workload it joins the two, and per SPEC it
counts the workloads where both hold.

    scripts/vl torch.conflict --live RUN1/summary.csv [--live RUN2/summary.csv ...] \\
        --cold COLD1/cold.csv [--cold COLD2/cold.csv ...] [--specs specs.csv] > conflict.csv

docs/torch-bench.md, section "vramlab/torch/conflict.py", has the rest."""
import argparse
import csv
import os
import sys

from vramlab import cold, verdict
from vramlab.fmt import number
from vramlab.torch import bench_stats, binding

EXPANDABLE = "caching:segments=expandable"
FIELDS = ("options", "workload", "live_run", "live_git", "live_n", "waste", "cold_git", "cold_n", "cold", "cold_lo",
          "cold_hi", "cold_call", "meets", "spec")
SPEC_FIELDS = ("options", "workloads", "both", "waste_over", "cold_slower", "unresolved", "both_on", "spec")


def is_expandable(spec):
    return spec == EXPANDABLE or spec.startswith(EXPANDABLE + ",")


def options_of(spec):
    """The SPEC's options after segments=expandable, space-separated ("default" for none):
    a name without commas, for plots and tables; the SPEC itself is the row's last field."""
    return spec[len(EXPANDABLE) + 1:].replace(",", " ") or "default"


def best_live(summaries):
    """{(spec, workload): (waste, processes, meta)} over the (meta, rows) of each summary:
    the run with the most processes (the later on a tie)."""
    best = {}
    for meta, rows in summaries:
        for r in rows:
            n = int(r.get("n") or 0)
            if not is_expandable(r.get("spec", "")) or not n:
                continue
            key = (r["spec"], r["workload"])
            if key not in best or n >= best[key][1]:
                best[key] = (bench_stats.num(r.get("waste")), n, meta)
    return best


def meets(waste, cold_call):
    """What the two limits show for one SPEC on one workload (see the module's text)."""
    failed = [what for what, fails in (("waste", waste is not None and waste > bench_stats.WASTE_LIMIT),
                                       ("cold", cold_call == verdict.FAIL)) if fails]
    if failed:
        return "; ".join(failed)
    if waste is None or cold_call != verdict.PASS:
        return "unresolved"
    return "both"


def main(argv):
    ap = argparse.ArgumentParser(description="one SPEC against both limits on every workload")
    ap.add_argument("--live", action="append", required=True, help="a torch-bench run's summary.csv (repeatable)")
    ap.add_argument("--cold", action="append", required=True, help="allocator_verdict.sh's cold.csv (repeatable)")
    ap.add_argument("--specs", help="also write the per-SPEC counts here")
    args = ap.parse_args(argv[1:])
    for path in args.live + args.cold:
        if not os.path.isfile(path):
            print(f"conflict: no such file: {path}", file=sys.stderr)
            return 2
    if args.specs and os.path.abspath(args.specs) in {os.path.abspath(p) for p in args.live + args.cold}:
        print(f"conflict: --specs {args.specs} is an input", file=sys.stderr)
        return 2
    summaries = [binding.read_rows(path) for path in args.live]
    colds = [cold.read(path) for path in args.cold]
    gpus = {m.get("device") for m, _ in summaries} | {m.get("gpu") for m, _ in colds}
    if len(gpus) != 1 or None in gpus:
        print(f"conflict: the inputs must name one GPU; they name {sorted(str(g) for g in gpus)}", file=sys.stderr)
        return 2
    live = best_live(summaries)
    in_cold = [(trace, spec) for _, rate in colds for trace, spec in rate if is_expandable(spec)]
    specs = list(dict.fromkeys([spec for spec, _ in live] + [spec for _, spec in in_cold]))
    workloads = sorted({w for _, w in live} | {trace for trace, _ in in_cold})
    rates = [rate for _, rate in colds]
    rows = []
    for spec in specs:
        for w in workloads:
            lv = live.get((spec, w))
            got, which = binding.best_cold(rates, w, spec)
            c = got[0]
            if lv is None and c is None:
                continue
            waste, n, meta = lv if lv else (None, None, {})
            rows.append(dict(options=options_of(spec), spec=spec, workload=w, live_run=meta.get("run_id", ""),
                             live_git=meta.get("git", ""), live_n=n or "", waste=number(waste, ".4f"),
                             cold_git=colds[which][0].get("git_revision", "") if c else "",
                             cold_n=c["n"] if c else "", cold=number(c and c["estimate"], ".3f"),
                             cold_lo=number(c and c["lo"], ".3f"), cold_hi=number(c and c["hi"], ".3f"),
                             cold_call=c["call"] if c else "", meets=meets(waste, c["call"] if c else None),
                             _joined=lv is not None and c is not None))
    if not any(r["_joined"] for r in rows):
        print("conflict: no SPEC has both a live and a cold result for any workload", file=sys.stderr)
        return 1
    conditions = binding.conditions([m for m, _ in summaries] + [m for m, _ in colds])
    print(f"# conflict: live {' '.join(args.live)}; cold {' '.join(args.cold)}")
    for line in conditions:
        print(line)
    out = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n", extrasaction="ignore")
    out.writeheader()
    out.writerows(rows)
    if args.specs:
        with open(args.specs, "w", newline="") as f:
            f.write("# conflict: per SPEC, the workloads with a live or a cold result\n")
            f.writelines(line + "\n" for line in conditions)
            s = csv.DictWriter(f, SPEC_FIELDS, lineterminator="\n")
            s.writeheader()
            for spec in specs:
                mine = [r for r in rows if r["spec"] == spec]  # one limit failing needs no join
                count = lambda what: sum(what in r["meets"] for r in mine)  # noqa: E731
                s.writerow(dict(options=options_of(spec), workloads=len(mine), both=count("both"),
                                waste_over=count("waste"), cold_slower=count("cold"), unresolved=count("unresolved"),
                                both_on=" ".join(r["workload"] for r in mine if r["meets"] == "both"),
                                spec=spec))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
