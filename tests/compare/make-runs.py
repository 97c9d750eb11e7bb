#!/usr/bin/env python3
"""Writes synthetic results folders for tests/compare/run.sh:
  OUT/base    a run: alloc_latency, random_churn, multi_stream CSVs and a hyperfine JSON
  OUT/same    the same build measured again: every median moves a little, inside its IQR
  OUT/slow    a slowed allocator: alloc medians x1.6 with their spread, kernels/s down,
              hyperfine runs slower, another driver and git revision
  OUT/faster  base with alloc medians x0.5 (an improvement, no regression)
  OUT/mem     base with peak reserved bytes 10% larger (memory regression, timing same)
Usage: make-runs.py OUT"""
import json
import os
import random
import sys

out = sys.argv[1]
rng = random.Random(7)


def meta(driver="580.159.04", rev="abc123", alloc="raw"):
    return (f"# vramlab: 0.1.0\n# git_revision: {rev}\n# date_utc: 2026-11-22T00:00:{rng.randint(10, 59)}Z\n"
            f"# gpu: NVIDIA H100 80GB HBM3\n# driver: {driver}\n# runtime: 13.0\n# alloc: {alloc}\n"
            f"# command: build/bin/x -o {rng.random()}\n")


def summary(median, rel_iqr=0.1):
    p25, p75 = median * (1 - rel_iqr / 2), median * (1 + rel_iqr / 2)
    return f"100,{median:.6g},{median * 0.8:.6g},{p25:.6g},{p75:.6g},{median * 2:.6g},{median * 0.7:.6g},{median * 3:.6g},{p75 - p25:.6g}"


def cols(prefix, unit):
    return ",".join([f"{prefix}_n"] + [f"{prefix}_{s}_{unit}" for s in ("median", "p1", "p25", "p75", "p99", "min", "max", "iqr")])


def write_run(name, alloc_factor=1.0, jitter=0.0, kernels_factor=1.0, wall_factor=1.0, reserved_factor=1.0,
              driver="580.159.04", rev="abc123"):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "hyperfine"), exist_ok=True)
    j = lambda: 1 + rng.uniform(-jitter, jitter)
    with open(os.path.join(d, "alloc_latency.raw.csv"), "w") as f:
        f.write(meta(driver, rev) + f"size_bytes,{cols('alloc', 'ns')},{cols('free', 'ns')},first_alloc_ns,ooms\n")
        for size, base in ((512, 47000), (2 << 20, 48000), (1 << 30, 236000)):
            f.write(f"{size},{summary(base * alloc_factor * j())},{summary(base * 0.8 * j())},{base * 3 * j():.0f},0\n")
    with open(os.path.join(d, "random_churn.caching.csv"), "w") as f:
        f.write(meta(driver, rev, "caching") + f"dist,ops,allocs,{cols('batch_op', 'ns')},peak_allocated_bytes,peak_reserved_bytes\n")
        f.write(f"log-uniform,20000,14351,{summary(800 * j())},4294967296,{int(4563402752 * reserved_factor)}\n")
    with open(os.path.join(d, "multi_stream.async.csv"), "w") as f:
        f.write(meta(driver, rev, "async") + f"pattern,streams,kernels,{cols('kernels', 'per_s')},ideal_kernels_per_s\n")
        for streams in (1, 4):
            f.write(f"own,{streams},{100 * streams},{summary(15000 * streams * kernels_factor * j(), 0.05)},{20000 * streams}\n")
    times = [0.5 * wall_factor * (1 + rng.uniform(-0.02, 0.02)) for _ in range(10)]
    with open(os.path.join(d, "hyperfine", "hyperfine.raw.json"), "w") as f:
        json.dump({"results": [{"command": "alloc_latency --alloc raw --quick", "times": times,
                                "median": sorted(times)[5]}]}, f)


write_run("base")
write_run("same", jitter=0.02)
write_run("slow", alloc_factor=1.6, kernels_factor=0.6, wall_factor=1.5, driver="590.10", rev="def456")
write_run("faster", alloc_factor=0.5)
write_run("mem", reserved_factor=1.10)
