#!/usr/bin/env python3
"""Writes synthetic results folders for tests/compare/run.sh. Each process lands in a fast
or a slow mode (a third fast: 470 against 760 ns), as processes on GPU VMs do, and all
timings of one process share its mode.
Single runs (one process per program):
  OUT/base, OUT/same     two runs of one build
  OUT/slow               a slowed allocator (x1.6), another driver and git revision
Repeated runs (OUT/NAME/rep-<k>, as make bench REPEAT=N writes them, machine.txt included):
  OUT/r-a, OUT/r-b       20 repetitions each of one build
  OUT/r-slow             20 repetitions, alloc x1.2 (free unchanged), SM clock 1980 -> 1755 MHz
  OUT/r-fast             20 repetitions, alloc x0.8
  OUT/r-mem              6 repetitions, peak reserved 10% larger
  OUT/r-bad              4 repetitions, one CSV with a short row
Usage: make-runs.py OUT"""
import json
import os
import random
import sys

out = sys.argv[1]
rng = random.Random(7)
SIZES = (512, 8192, 131072, 2 << 20, 32 << 20, 1 << 30)


def meta(driver, rev, alloc):
    return (f"# vramlab: 0.1.0\n# git_revision: {rev}\n# date_utc: 2026-11-22T00:00:{rng.randint(10, 59)}Z\n"
            f"# gpu: NVIDIA H100 80GB HBM3\n# driver: {driver}\n# runtime: 13.0\n# alloc: {alloc}\n"
            f"# command: build/bin/x -o {rng.random()}\n")


def summary(median, rel_iqr=0.04):
    p25, p75 = median * (1 - rel_iqr / 2), median * (1 + rel_iqr / 2)
    return (f"40,{median:.6g},{median * 0.8:.6g},{p25:.6g},{p75:.6g},{median * 2:.6g},{median * 0.7:.6g},"
            f"{median * 3:.6g},{p75 - p25:.6g}")


def cols(prefix, unit):
    return ",".join([f"{prefix}_n"] + [f"{prefix}_{s}_{unit}" for s in ("median", "p1", "p25", "p75", "p99", "min",
                                                                          "max", "iqr")])


def mark_complete(d, jobs):
    """What scripts/bench.sh writes last into a folder whose jobs all finished."""
    with open(os.path.join(d, "COMPLETE"), "w") as f:
        f.write(f"complete 2026-11-22T00:01:00Z jobs={jobs}\n")


def write_process_set(d, alloc_factor, reserved_factor, driver, rev, sm_clock, short_row=False):
    """One pass of the suite: every program a new process with its own mode."""
    os.makedirs(os.path.join(d, "hyperfine"), exist_ok=True)
    mark_complete(d, 3)
    mode = lambda: 470.0 if rng.random() < 1 / 3 else 760.0  # noqa: E731
    j = lambda: rng.uniform(0.97, 1.03)  # noqa: E731
    base = mode()
    with open(os.path.join(d, "alloc_latency.plugin.csv"), "w") as f:
        f.write(meta(driver, rev, "plugin:libslow_alloc.so") +
                f"size_bytes,{cols('alloc', 'ns')},{cols('free', 'ns')},first_alloc_ns,ooms\n")
        for i, size in enumerate(SIZES):
            f.write(f"{size},{summary(base * (1 + 0.05 * i) * alloc_factor * j())},"
                    f"{summary(base * 1.3 * j())},{base * 20 * j():.0f},0\n")
        if short_row:
            f.write("4096,40,1\n")
    base = mode() / 2
    with open(os.path.join(d, "random_churn.caching.csv"), "w") as f:
        f.write(meta(driver, rev, "caching") +
                f"dist,ops,allocs,{cols('batch_op', 'ns')},peak_allocated_bytes,peak_reserved_bytes,status\n")
        f.write(f"log-uniform,20000,14351,{summary(base * j())},4294967296,{int(4563402752 * reserved_factor)},ok\n")
    times = [0.5 * (1 + rng.uniform(-0.02, 0.02)) for _ in range(5)]
    with open(os.path.join(d, "hyperfine", "hyperfine.raw.json"), "w") as f:
        json.dump({"results": [{"command": "alloc_latency --alloc raw --quick", "times": times}]}, f)
    with open(os.path.join(d, "machine.txt"), "w") as f:
        f.write(f"gpu0_sm_clock_mhz: {sm_clock}\ngpu0_temperature_c: {rng.randint(30, 34)}\ngpu_processes: none\n"
                f"cpu_model: AMD EPYC\ncpus: 16\nloadavg_1m: 0.{rng.randint(10, 40)}\nvm: kvm\n")


def write_run(name, reps=0, alloc_factor=1.0, reserved_factor=1.0, driver="580.159.04", rev="abc123",
              sm_clock=1980, short_row=False):
    d = os.path.join(out, name)
    if reps == 0:
        write_process_set(d, alloc_factor, reserved_factor, driver, rev, sm_clock)
        return
    for k in range(1, reps + 1):
        write_process_set(os.path.join(d, f"rep-{k}"), alloc_factor, reserved_factor, driver, rev, sm_clock,
                          short_row and k == 2)


write_run("base")
write_run("same")
write_run("slow", alloc_factor=1.6, driver="590.10", rev="def456")
write_run("r-a", reps=20)
write_run("r-b", reps=20)
write_run("r-slow", reps=20, alloc_factor=1.2, sm_clock=1755)
write_run("r-fast", reps=20, alloc_factor=0.8)
write_run("r-mem", reps=6, reserved_factor=1.10)
write_run("r-bad", reps=4, short_row=True)
