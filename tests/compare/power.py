#!/usr/bin/env python3
"""power.py EXPERIMENT... : how often scripts/compare's verdict holds at fewer pairs, by
resampling measured A/B experiments (scripts/ab folders, e.g. from tests/compare/gpu_ab.sh).
The experiments' pairs are put end to end in time order; windows of N consecutive pairs
(consecutive, so the machine's drift over time stays in) are judged as scripts/compare
would judge them, and per N it prints the share of windows in which every alloc_latency
alloc median is reported slower, a free median is reported slower, compare would exit 1,
and at least 99% of metrics are "same". Windows overlap: the shares are estimates of the
power at N, not independent trials.
Usage: power.py [--pairs 20,30,40,60] [--windows 100] EXPERIMENT_FOLDER..."""
import argparse
import os
import random
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))  # vramlab
from vramlab import verdict  # noqa: E402
from vramlab import results as vlresults  # noqa: E402


def load(folders):
    """Per side, one {(file, row, metric): Metric} per repetition, experiments end to end."""
    sides = {"A": [], "B": []}
    for d in folders:
        for side in sides:
            for rep in vlresults.rep_folders(os.path.join(d, side)):
                f = vlresults.Folder(rep)
                sides[side].append({(fn.split(".", 1)[0], m.row, m.name): m for fn, ms in f.files.items()
                                    for m in ms})
    return sides["A"], sides["B"]


def window_verdict(a_reps, b_reps):
    keys = [k for k in a_reps[0] if all(k in r for r in a_reps + b_reps)]
    pairs = []
    for k in keys:
        proto = a_reps[0][k]
        pairs.append(tuple(vlresults.Metric(proto.file, proto.row, proto.name, proto.unit, 0,
                                            samples=[r[k].value for r in reps]) for reps in (a_reps, b_reps)))
    js = verdict.judge_all(pairs)
    named = lambda name: [j for (m, _), j in zip(pairs, js) if m.file.startswith("alloc_latency") and m.name == name]  # noqa: E731
    return (all(j.verdict == "slower" for j in named("alloc_median")),
            any(j.verdict == "slower" for j in named("free_median")),
            any(j.regression for j in js),
            sum(j.verdict == "same" for j in js) / max(1, len(js)) >= 0.99)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--pairs", default="20,30,40,60")
    ap.add_argument("--windows", type=int, default=100)
    args = ap.parse_args()
    a, b = load(args.folders)
    if not a or len(a) != len(b):
        print(f"power: need A and B repetitions in equal numbers, found {len(a)} and {len(b)}", file=sys.stderr)
        return 2
    rng = random.Random(1)
    print(f"{len(a)} pairs from {len(args.folders)} experiment(s); {args.windows} windows of consecutive pairs per N")
    for n in (int(x) for x in args.pairs.split(",")):
        if n > len(a):
            continue
        results = []
        for _ in range(args.windows):
            s = rng.randrange(0, len(a) - n + 1)
            results.append(window_verdict(a[s:s + n], b[s:s + n]))
        share = lambda i: f"{100 * sum(r[i] for r in results) / len(results):3.0f}%"  # noqa: E731
        print(f"  {n:3d} pairs: every alloc size slower {share(0)}, a free slower {share(1)}, "
              f"exit 1 {share(2)}, >= 99% same {share(3)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
