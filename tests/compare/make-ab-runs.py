#!/usr/bin/env python3
"""Writes synthetic scripts/ab experiments for tests/compare/run.sh, in the files and format
that make bench writes (scripts/bench.sh's names, lib/runinfo.c's '#' metadata, the
programs' real headers, manifest.csv, machine.txt, COMPLETE), with a fixed seed. Each
side holds every variant the suite writes of alloc_latency and random_churn on a GPU
box (alloc_latency.<tag>.csv, alloc_latency.beyond.<tag>.sim.csv,
random_churn.<tag>.csv, random_churn.<tag>.sim.csv, random_churn.churn300k.<tag>.sim.csv)
and device_info.csv. Processes land in a fast or a slow mode, as on GPU VMs.
  OUT/slow/{A,B}      A alloc=caching, B alloc=caching:segments=expandable, 12 pairs;
                      B's alloc medians 25-30% slower (every size, both alloc_latency variants)
  OUT/aa/{A,B}        alloc=caching on both sides, 12 pairs, no change
  OUT/cross/{A,B}     caching against caching:segments=expandable, 12 pairs, no change
  OUT/disjoint/{A,B}  A only alloc_latency, B only random_churn (device_info on both)
  OUT/quick/{A,B}     A --quick, B the full configuration (the parameters differ)
  OUT/partial/A       as slow/A, but rep-3 has no COMPLETE (an interrupted repetition)
Usage: make-ab-runs.py OUT"""
import os
import random
import sys

out = sys.argv[1]
rng = random.Random(28)
SIZES = (512, 8192, 131072, 2 << 20, 32 << 20, 512 << 20, 1 << 30)
STATS = ("median", "p1", "p25", "p75", "p99", "min", "max", "iqr")


def group(prefix, unit):
    return [f"{prefix}_n"] + [f"{prefix}_{s}_{unit}" for s in STATS]


def summary(median, n=40):
    return [n, median, median * 0.8, median * 0.98, median * 1.02, median * 2, median * 0.7, median * 3, median * 0.04]


def tag_of(spec):
    return spec.translate(str.maketrans(":,=/", "____")) if spec != "none" else "default"


def header(path, spec, device, args, quick):
    simulated = device.startswith("sim")
    cmd = f"build/bin/{os.path.basename(path).split('.')[0]} -o {path}"
    cmd += f" --alloc {spec}" if spec != "none" else ""
    cmd += " --device sim" if device == "sim" else ""
    cmd += " --quick" if quick else ""
    cmd += f" {args}" if args else ""
    return "".join(f"# {k}: {v}\n" for k, v in (
        ("vramlab", "0.1.0"), ("git_revision", "57fad876f2e6"), ("date_utc", f"2026-11-25T08:{rng.randint(10, 59)}:00Z"),
        ("host", "gpu01"), ("gpu", "simulated" if simulated else "NVIDIA H100 80GB HBM3"),
        ("driver", "n/a" if simulated else "580.159.04"), ("runtime", "n/a" if simulated else "13.0"),
        ("device_memory_bytes", 85899345920), ("device", device),
        ("simulated", "yes (no GPU: times are host CPU time of the allocator's policy code, not GPU times)"
         if simulated else "no"), ("alloc", spec), ("command", cmd), ("seed", 42)) + (("quick", "yes"),) * quick)


def write(path, head, columns, rows):
    with open(path, "w") as f:
        f.write(head + ",".join(columns) + "\n")
        for r in rows:
            f.write(",".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in r) + "\n")


def alloc_latency(d, spec, device, label, slow, mode, quick):
    name = f"alloc_latency.{label + '.' if label else ''}{tag_of(spec)}{'.sim' if device != 'cuda' else ''}.csv"
    path = os.path.join(d, name)
    cols = ["size_bytes"] + group("alloc", "ns") + group("free", "ns") + group("cycle_sync", "ns") + \
        ["first_alloc_ns", "first_free_ns", "ooms"]
    sizes = SIZES if quick else SIZES + (4 << 30,)
    rows = []
    for i, size in enumerate(sizes):
        j = lambda: rng.uniform(0.98, 1.02)  # noqa: E731
        rows.append([size] + summary(mode * (1 + 0.05 * i) * slow[i] * j()) + summary(mode * 1.3 * j())
                    + summary(mode * 4 * j()) + [round(mode * 40 * j()), round(mode * j()), 0])
    args = "--device sim:capacity=100TiB --beyond-device" if label == "beyond" else ""
    write(path, header(path, spec, device if not label else "sim:capacity=100TiB", args, quick), cols, rows)
    return name


def random_churn(d, spec, device, label, mode, quick):
    name = f"random_churn.{label + '.' if label else ''}{tag_of(spec)}{'.sim' if device != 'cuda' else ''}.csv"
    path = os.path.join(d, name)
    cols = ["simulated", "dist", "min_size_bytes", "max_size_bytes", "slots", "alloc_prob", "ops", "allocs", "frees",
            "ooms", "ns_per_op"] + group("batch_op", "ns") + group("alloc", "ns") + group("free", "ns") + \
        ["peak_requested_bytes", "peak_allocated_bytes", "peak_reserved_bytes", "reserved_over_allocated"]
    j = lambda: rng.uniform(0.98, 1.02)  # noqa: E731
    ops = 20000 if quick else 200000
    row = [int(device != "cuda"), "log-uniform", 512, 4194304, 10000, "0.730", ops, 14351, 5649, 0, mode * 0.4 * j()] + \
        summary(mode * 0.3 * j(), 20) + summary(mode * 0.1 * j(), 14351) + summary(mode * 0.1 * j(), 5649) + \
        [4294964329, 4496406528, 4578082816, 1.0182]
    args = ("--device sim:capacity=4TiB --slots 30000 --min-size 1MiB --max-size 8MiB --max-live 256GiB --ops 20000 "
            "--warmup-ops 30000") if label == "churn300k" else ""
    write(path, header(path, spec, device if not label else "sim:capacity=4TiB", args, quick), cols, [row])
    return name


def device_info(d):
    path = os.path.join(d, "device_info.csv")
    write(path, header(path, "none", "cuda", "", False), ["ordinal", "name", "total_bytes", "free_bytes", "sm_count"],
          [[0, "NVIDIA H100 80GB HBM3", 85899345920, 84500000000 + rng.randint(0, 10) * 2097152, 132]])
    return "device_info.csv"


def process_set(d, spec, programs, slow_range=None, quick=True, complete=True):
    """One pass of scripts/bench.sh --only PROGRAMS --alloc SPEC: each job a process."""
    os.makedirs(d, exist_ok=True)
    mode = lambda: 470.0 if rng.random() < 1 / 3 else 760.0  # noqa: E731
    slow = [rng.uniform(*slow_range) if slow_range else 1.0 for _ in range(len(SIZES) + 1)]
    files = [device_info(d)]
    if "alloc_latency" in programs:
        files.append(alloc_latency(d, spec, "cuda", "", slow, mode(), quick))
        files.append(alloc_latency(d, spec, "sim", "beyond", slow, mode() / 10, quick))
    if "random_churn" in programs:
        files.append(random_churn(d, spec, "cuda", "", mode(), quick))
        files.append(random_churn(d, spec, "sim", "", mode() / 10, quick))
        files.append(random_churn(d, spec, "sim", "churn300k", mode() / 10, quick))
    with open(os.path.join(d, "manifest.csv"), "w") as f:
        f.write("program,device,alloc,status,exit_code,seconds,csv,note\n")
        for name in files[1:]:
            f.write(f"{name.split('.')[0]},{'sim' if '.sim.' in name else 'cuda'},\"{spec}\",ok,0,0.75,{name},\"\"\n")
    with open(os.path.join(d, "machine.txt"), "w") as f:
        f.write(f"gpu0_sm_clock_mhz: 1980\ngpu0_temperature_c: {rng.randint(30, 34)}\ngpu_processes: none\n"
                f"cpu_model: AMD EPYC\ncpus: 16\nloadavg_1m: 0.{rng.randint(10, 40)}\nvm: kvm\n")
    if complete:
        with open(os.path.join(d, "COMPLETE"), "w") as f:
            f.write(f"complete 2026-11-25T09:00:00Z jobs={len(files) - 1}\n")


def experiment(name, a, b, pairs=12, programs=("alloc_latency", "random_churn"), slow_range=None,
               programs_b=None, quick_b=True, incomplete_rep=None):
    """OUT/NAME/{A,B}/rep-<k> and ab.txt, as scripts/ab writes them (balanced order)."""
    top = os.path.join(out, name)
    for k in range(1, pairs + 1):
        order = ("A", "B") if k % 2 else ("B", "A")
        for side in order:
            spec = a if side == "A" else b
            process_set(os.path.join(top, side, f"rep-{k}"), spec, programs if side == "A" else programs_b or programs,
                        slow_range if side == "B" else None, quick_b if side == "B" else True,
                        complete=not (side == "A" and k == incomplete_rep))
    with open(os.path.join(top, "ab.txt"), "w") as f:
        f.write(f"pairs: {pairs}\nA: alloc={a}\nB: alloc={b}\n")


experiment("slow", "caching", "caching:segments=expandable", slow_range=(1.25, 1.30))
experiment("aa", "caching", "caching")
experiment("cross", "caching", "caching:segments=expandable")
experiment("disjoint", "caching", "caching", pairs=4, programs=("alloc_latency",), programs_b=("random_churn",))
experiment("quick", "caching", "caching", pairs=4, quick_b=False)
experiment("partial", "caching", "caching:segments=expandable", pairs=4, incomplete_rep=3)
