"""scripts/replay-sweep: replays recorded traces on the simulated device under one or more
caching-allocator SPECs and judges each warm pass: device map calls per operation and
peak reserved / peak allocated; and the steady state of one pass, as a live run has it:
map calls per allocation in the second half of the trace's first pass. This is how
expandable's defaults are tuned on one set of traces and confirmed on another.

  scripts/replay-sweep --traces DIR [--tune W1,W2 --confirm W3,W4] \
      --spec caching:segments=expandable --spec caching:segments=expandable,reclaim=0.02 \
      [--passes 3] [--capacity 80GiB] [--max-maps 0.01] [--max-waste 1.02] --out DIR

Writes OUT/sweep.csv, OUT/steady.csv, OUT/layout.csv, OUT/sweep.md, then OUT/COMPLETE.
Exit: 0 every warm pass of every SPEC's every trace passed, 1 some failed, 2 usage or
nothing replayed. docs/caching-measured.md, section "scripts/replay-sweep", has the
rules: trace names, the steady state, growths despite free memory, static layouts."""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile

from vramlab import ROOT
from vramlab.results import git_revision

SUFFIXES = (".live.trace", ".trace", ".csv")


def usage(msg):
    print(f"replay-sweep: {msg}", file=sys.stderr)
    sys.exit(2)


def find_traces(folder):
    """{workload: path} for every trace file in folder."""
    found = {}
    for name in sorted(os.listdir(folder)):
        for suf in SUFFIXES:
            if name.endswith(suf) and not name.endswith(".tiny.csv"):
                found.setdefault(name[: -len(suf)], os.path.join(folder, name))
                break
    return found


def groups_of(args, traces):
    if not args.tune and not args.confirm:
        return {w: "all" for w in traces}
    groups = {}
    for label, names in (("tune", args.tune), ("confirm", args.confirm)):
        for w in filter(None, (names or "").split(",")):
            if w not in traces:
                usage(f"--{label} names '{w}', which has no trace in {args.traces}")
            if w in groups:
                usage(f"'{w}' is in both --tune and --confirm")
            groups[w] = label
    return groups


def rows_of(text):
    return list(csv.DictReader(io.StringIO("\n".join(l for l in text.splitlines() if not l.startswith("#")))))


def run_replay(args, path, what, extra):
    """build/bin/replay on the simulated device with `extra` arguments: its standard
    output, or None with the reason printed (what: what it ran, for the message)."""
    cmd = [args.replay, "--device", f"sim:capacity={args.capacity}", "--trace", path] + extra
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"replay-sweep: {os.path.basename(path)} {what}: exit {proc.returncode}: {reason}", file=sys.stderr)
        return None
    return proc.stdout


def replay(args, path, spec, passes=None, growth_log=None):
    """The replay's CSV rows (one a pass), or None with the reason printed. With growth_log
    (a file name), a caching SPEC's growths go there (replay --growth-log)."""
    extra = ["--alloc", spec, "--passes", str(passes or args.passes)]
    if growth_log and spec.split(":")[0] == "caching":
        extra += ["--growth-log", growth_log]
    out = run_replay(args, path, f"under {spec}", extra)
    return rows_of(out) if out is not None else None


def maps_despite_free(growth_log):
    """{pass: map calls made by growths despite free memory} from a --growth-log file, or
    None where there is none (not a caching SPEC)."""
    if not os.path.exists(growth_log):
        return None
    with open(growth_log) as fh:
        growths = rows_of(fh.read())
    out = {}
    for g in growths:
        if int(g["largest_free_bytes"]) < int(g["request_bytes"]) <= int(g["free_bytes"]):
            out[int(g["pass"])] = out.get(int(g["pass"]), 0) + int(g["map_calls"])
    return out


def static_layout(args, path):
    """replay --static-layout's rows (one a heuristic, the best last), each with the
    trace's period (its '# trace_period_allocs' line), or None with the reason printed."""
    out = run_replay(args, path, "--static-layout", ["--static-layout"])
    if out is None:
        return None
    period = next((line.split(":", 1)[1].split()[0] for line in out.splitlines()
                   if line.startswith("# trace_period_allocs:")), "")
    return [dict(r, period_allocs=period) for r in rows_of(out)]


def first_half(path, folder):
    """A copy of the trace holding its header line and the first half of its other lines."""
    with open(path) as fh:
        lines = fh.read().splitlines()
    half = os.path.join(folder, "half" + os.path.splitext(path)[1])
    with open(half, "w") as fh:
        fh.write("\n".join([lines[0]] + lines[1:1 + (len(lines) - 1) // 2]) + "\n")
    return half


def steady_state(args, path, spec, first_pass, folder):
    """(allocations, map calls) of the second half of the first pass, or None."""
    half = replay(args, first_half(path, folder), spec, passes=1)
    if not half:
        return None
    return (int(first_pass["allocs"]) - int(half[0]["allocs"]),
            int(first_pass["device_allocs"]) - int(half[0]["device_allocs"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", required=True, help="folder of traces")
    ap.add_argument("--spec", action="append", required=True, help="allocator SPEC (repeatable)")
    ap.add_argument("--tune", help="workloads the SPECs were tuned on (comma-separated)")
    ap.add_argument("--confirm", help="workloads held out to confirm them (comma-separated)")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--capacity", default="80GiB")
    ap.add_argument("--max-maps", type=float, default=0.01, help="map calls per operation in a warm pass")
    ap.add_argument("--max-waste", type=float, default=1.02, help="peak reserved / peak allocated")
    ap.add_argument("--replay", default=os.path.join(ROOT, "build", "bin", "replay"))
    ap.add_argument("--out", required=True, help="folder for sweep.csv and sweep.md (created)")
    args = ap.parse_args()
    if args.passes < 2:
        usage("--passes must be at least 2: the first pass is cold, the others are judged")
    if os.path.exists(args.out) and (not os.path.isdir(args.out) or os.listdir(args.out)):
        usage(f"--out {args.out} exists and is not an empty folder: a result never overwrites another")
    if not os.path.isdir(args.traces):
        usage(f"--traces {args.traces}: not a folder")
    if not os.access(args.replay, os.X_OK):
        usage(f"{args.replay} is missing: run make first")
    traces = find_traces(args.traces)
    groups = groups_of(args, traces)
    if not groups:
        usage(f"no trace (*{', *'.join(SUFFIXES)}) in {args.traces}")

    rows, steady_rows, table, failed, broken = [], [], [], 0, 0
    layouts = {}  # workload: replay --static-layout's rows
    scratch = tempfile.TemporaryDirectory()
    for w in sorted(groups, key=lambda w: (groups[w], w)):
        layouts[w] = static_layout(args, traces[w])
        if not layouts[w]:
            broken += 1
            continue
        for spec in args.spec:
            glog = os.path.join(scratch.name, "growth.csv")
            if os.path.exists(glog):
                os.remove(glog)
            passes = replay(args, traces[w], spec, growth_log=glog)
            despite = maps_despite_free(glog)
            steady = passes and steady_state(args, traces[w], spec, passes[0], scratch.name)
            if not passes or not steady:
                broken += 1
                continue
            steady_rate = steady[1] / steady[0] if steady[0] > 0 else 0.0
            steady_rows.append((w, groups[w], spec, steady[0], steady[1], steady_rate,
                                float(passes[0]["reserved_over_allocated"])))
            before = 0
            worst = None
            mine = []  # this trace's rows under this SPEC, one a pass
            for r in passes:
                maps = int(r["device_allocs"]) - before
                before = int(r["device_allocs"])
                ops = int(r["ops"])
                waste = float(r["reserved_over_allocated"])
                row = dict(workload=w, group=groups[w], spec=spec, pass_=int(r["pass"]), ops=ops, maps=maps,
                           maps_per_op=maps / ops if ops else float("nan"), waste=waste,
                           despite=None if despite is None else despite.get(int(r["pass"]), 0))
                mine.append(row)
                if row["pass_"] == 1:
                    cold = row
                elif worst is None or (row["maps_per_op"], row["waste"]) > (worst["maps_per_op"], worst["waste"]):
                    worst = row
            rows += mine
            warm = [r for r in mine if r["pass_"] > 1]
            ok = all(r["maps_per_op"] <= args.max_maps and r["waste"] <= args.max_waste for r in warm)
            ok = ok and steady_rate <= args.max_maps
            failed += not ok
            total = sum(r["maps"] for r in mine)
            share = (100 * sum(r["despite"] for r in mine) / total if total else 0.0) if despite is not None else None
            table.append((groups[w], w, spec, cold["maps"], cold["waste"], 100 * steady_rate, worst["maps"],
                          100 * max(r["maps_per_op"] for r in warm), max(r["waste"] for r in warm), share,
                          "PASS" if ok else "FAIL"))

    os.makedirs(args.out, exist_ok=True)
    provenance = f"# git_revision: {git_revision(ROOT, 12, mark_dirty=False)}\n# device: simulated\n# driver: n/a\n"
    with open(os.path.join(args.out, "sweep.csv"), "w", newline="") as fh:
        fh.write("# simulated: yes (policy figures; times are host CPU, not GPU)\n" + provenance)
        fh.write(f"# passes: {args.passes}, capacity: {args.capacity}, max_maps: {args.max_maps}, "
                 f"max_waste: {args.max_waste}\n")
        wr = csv.writer(fh)
        wr.writerow(["workload", "group", "spec", "pass", "ops", "maps", "maps_per_op", "waste", "maps_despite_free"])
        for r in rows:
            wr.writerow([r["workload"], r["group"], r["spec"], r["pass_"], r["ops"], r["maps"],
                         f"{r['maps_per_op']:.6f}", f"{r['waste']:.4f}", "" if r["despite"] is None else r["despite"]])
    with open(os.path.join(args.out, "steady.csv"), "w", newline="") as fh:
        fh.write("# simulated: yes; the second half of the first pass (a live run's later steps)\n" + provenance)
        wr = csv.writer(fh)
        wr.writerow(["workload", "group", "spec", "allocs", "maps", "maps_per_alloc", "waste"])
        for w, g, spec, n, m, rate, waste in steady_rows:
            wr.writerow([w, g, spec, n, m, f"{rate:.6f}", f"{waste:.4f}"])
    with open(os.path.join(args.out, "layout.csv"), "w", newline="") as fh:
        fh.write("# simulated: no device at all; offline layouts knowing every lifetime (replay --static-layout)\n"
                 + provenance)
        wr = csv.writer(fh)
        wr.writerow(["workload", "group", "heuristic", "peak_bytes", "extent_bytes", "footprint_bytes",
                     "footprint_ratio", "period_allocs"])
        for w in sorted(layouts):
            for r in layouts[w] or []:
                wr.writerow([w, groups[w], r["heuristic"], r["peak_bytes"], r["extent_bytes"], r["footprint_bytes"],
                             r["footprint_ratio"], r["period_allocs"]])
    lines = [f"Simulated device ({args.capacity}), {args.passes} passes; a warm pass passes at maps/op <= "
             f"{100 * args.max_maps:g}% and waste <= {args.max_waste}; the steady state (second half of the "
             f"first pass) at maps/allocation <= {100 * args.max_maps:g}%. Static layout: the smallest footprint "
             f"/ peak of the offline layouts (layout.csv), what an allocator that maps nothing once warm could "
             f"reach knowing every lifetime.", "",
             "| group | workload | SPEC | cold maps | cold waste | steady maps/alloc % | worst warm maps | "
             "warm maps/op % | warm waste (max) | static layout | maps despite free % | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for g, w, spec, cm, cw, sm, wm, wmo, ww, share, v in table:
        best = layouts[w][-1]["footprint_ratio"]
        lines.append(f"| {g} | {w} | `{spec}` | {cm} | {cw:.4f} | {sm:.2f} | {wm} | {wmo:.2f} | {ww:.4f} | {best} | "
                     f"{'-' if share is None else f'{share:.1f}'} | {v} |")
    with open(os.path.join(args.out, "sweep.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if broken:
        print(f"replay-sweep: {broken} replay(s) failed: nothing judged for them", file=sys.stderr)
        sys.exit(2)
    print(f"replay-sweep: {len(table)} trace x SPEC judged, {failed} failed")
    with open(os.path.join(args.out, "COMPLETE"), "w") as fh:  # last: every trace and SPEC replayed
        fh.write(f"{len(table)} trace x SPEC judged, {failed} failed\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
