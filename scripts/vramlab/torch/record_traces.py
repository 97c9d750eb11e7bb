"""Records PyTorch allocation traces of real workloads and the peak memory each
allocator needs for them (the baseline vramlab must beat).

Out (--out DIR): W.pickle, W.csv, W.tiny.csv, peaks.csv, logs/. --fixtures DIR copies
the tiny traces there. Exit 77 with one line when torch or a GPU is missing.

docs/torch-bench.md, section "vramlab/torch/record_traces.py", has the rest."""
import argparse
import concurrent.futures as cf
import csv
import json
import os
import shutil
import subprocess
import sys
import time

from vramlab import ROOT
from vramlab.torch import gpu_check

TO_CSV = os.path.join(ROOT, "scripts", "torch-snapshot-to-csv")
# The command that runs this module: each worker process runs it again.
LAUNCHER = [sys.executable, os.path.join(ROOT, "scripts", "vl"), "torch.record_traces"]

ALLOCATORS = {
    # name: (environment, uses the plugin, records the trace)
    "torch": ({}, False, True),
    "torch-expandable": ({"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}, False, False),
    "vramlab": ({"VRAMLAB_ALLOC": "caching"}, True, False),
    "vramlab-expandable": ({"VRAMLAB_ALLOC": "caching:segments=expandable"}, True, False),
    # unmaps only on trim or under memory pressure, as PyTorch's expandable segments
    "vramlab-expandable-noreclaim": ({"VRAMLAB_ALLOC": "caching:segments=expandable,reclaim=-1"}, True, False),
}


def worker(args):
    import torch

    from vramlab.torch import workloads

    plugin = None
    if args.plugin:
        import ctypes

        plugin = ctypes.CDLL(args.plugin)
        plugin.vl_torch_stat.restype = ctypes.c_int64
        plugin.vl_torch_stat.argtypes = [ctypes.c_int, ctypes.c_char_p]
        alloc = torch.cuda.memory.CUDAPluggableAllocator(args.plugin, "vl_alloc", "vl_free")
        torch.cuda.memory.change_current_allocator(alloc)
    if args.record:
        torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python",
                                                 max_entries=2_000_000)
    t0 = time.monotonic()
    result = workloads.RUN[args.workload](args.size, args.seed)
    torch.cuda.synchronize()
    seconds = time.monotonic() - t0
    if args.record:
        torch.cuda.memory._dump_snapshot(args.record)
        torch.cuda.memory._record_memory_history(enabled=None)
    if plugin is not None:
        peak_alloc = plugin.vl_torch_stat(0, b"peak_allocated_bytes")
        peak_res = plugin.vl_torch_stat(0, b"peak_reserved_bytes")
        spec = os.environ.get("VRAMLAB_ALLOC", "caching")
    else:
        peak_alloc = torch.cuda.max_memory_allocated()
        peak_res = torch.cuda.max_memory_reserved()
        spec = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "default")
    out = dict(workload=args.workload, size=args.size, allocator=args.allocator, spec=spec,
               peak_allocated_bytes=peak_alloc, peak_reserved_bytes=peak_res,
               seconds=round(seconds, 3), result=result[:8],
               torch=torch.__version__, gpu=torch.cuda.get_device_name(0))
    with open(args.json, "w") as f:
        json.dump(out, f)


def job(args, workload, allocator, size):
    env_extra, plugin, record = ALLOCATORS[allocator]
    tag = f"{workload}.{allocator}" if size == "full" else f"{workload}.tiny"
    cmd = LAUNCHER + ["--worker", "--workload", workload,
           "--allocator", allocator, "--size", size, "--seed", str(args.seed),
           "--json", os.path.join(args.out, "logs", tag + ".json")]
    if record:
        cmd += ["--record", os.path.join(args.out, (workload if size == "full" else tag) + ".pickle")]
    if plugin:
        cmd += ["--plugin", os.path.abspath(args.plugin)]
    env = dict(os.environ, PYTHONUNBUFFERED="1", **env_extra)
    return tag, cmd, env


def run_job(tag, cmd, env, logdir, timeout):
    t0 = time.monotonic()
    with open(os.path.join(logdir, tag + ".log"), "w") as log:
        try:
            rc = subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            log.write(f"record_traces: killed after {timeout} s\n")
            rc = 124
    return tag, rc, time.monotonic() - t0


def convert_folder(folder, fixtures):
    """Snapshot pickles -> torch-csv through the converter (which loads plain data only,
    vramlab/torch/snapshot_load.py). Returns how many failed."""
    failed = 0
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".pickle"):
            continue
        src = os.path.join(folder, name)
        dst = src[: -len(".pickle")] + ".csv"
        if subprocess.call([sys.executable, TO_CSV, f"--output={dst}", "--", src]) != 0:
            failed += 1
            continue
        if fixtures and name.endswith(".tiny.pickle"):
            os.makedirs(fixtures, exist_ok=True)
            shutil.copy(dst, os.path.join(fixtures, os.path.basename(dst)))
    return failed


def driver(args):
    rc = gpu_check.skip()  # 77 with one line without torch or a GPU
    if rc:
        return rc
    allocators = [a for a in args.allocators.split(",") if a]
    for a in allocators:
        if a not in ALLOCATORS:
            print(f"record_traces: unknown allocator {a!r}; known: {', '.join(ALLOCATORS)}", file=sys.stderr)
            return 2
        if ALLOCATORS[a][1] and not (args.plugin and os.path.exists(args.plugin)):
            print(f"record_traces: {a} needs --plugin build/lib/libvramlab_caching.so", file=sys.stderr)
            return 2
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    jobs = [job(args, w, a, "full") for w in args.workloads.split(",") for a in allocators]
    if args.tiny:
        jobs += [job(args, w, "torch", "tiny") for w in args.workloads.split(",")]
    failed = 0
    with cf.ThreadPoolExecutor(max_workers=args.parallel) as pool:
        for tag, rc, secs in pool.map(lambda j: run_job(*j, os.path.join(args.out, "logs"), args.job_timeout), jobs):
            print(f"{tag:34s} rc={rc} {secs:6.1f} s", flush=True)
            failed += rc != 0

    failed += convert_folder(args.out, args.fixtures)

    # Peaks: one table, PyTorch's figures next to vramlab's.
    rows = []
    for name in sorted(os.listdir(os.path.join(args.out, "logs"))):
        if name.endswith(".json"):
            with open(os.path.join(args.out, "logs", name)) as f:
                rows.append(json.load(f))
    with open(os.path.join(args.out, "peaks.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        if rows:
            f.write(f"# torch: {rows[0]['torch']}\n# gpu: {rows[0]['gpu']}\n# seed: {args.seed}\n")
        w.writerow(("workload", "size", "allocator", "spec", "peak_allocated_bytes", "peak_reserved_bytes",
                    "reserved_over_allocated", "run_s"))
        for r in rows:
            ratio = r["peak_reserved_bytes"] / r["peak_allocated_bytes"] if r["peak_allocated_bytes"] > 0 else ""
            w.writerow((r["workload"], r["size"], r["allocator"], r["spec"], r["peak_allocated_bytes"],
                        r["peak_reserved_bytes"], f"{ratio:.4f}" if ratio != "" else "", r["seconds"]))
    with open(os.path.join(args.out, "peaks.csv")) as f:
        sys.stdout.write(f.read())
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "traces"))
    ap.add_argument("--workloads", default="transformer,gpt2,resnet50")
    ap.add_argument("--allocators", default="torch,torch-expandable,vramlab,vramlab-expandable")
    ap.add_argument("--plugin", default=os.path.join(ROOT, "build", "lib", "libvramlab_caching.so"))
    ap.add_argument("--fixtures", default=None, help="copy the tiny traces here")
    ap.add_argument("--no-tiny", dest="tiny", action="store_false")
    ap.add_argument("--parallel", type=int, default=4, help="processes at a time")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--job-timeout", type=float, default=None, help="seconds one worker may run")
    # worker mode (one workload on one allocator, in this fresh process)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--workload", help=argparse.SUPPRESS)
    ap.add_argument("--allocator", help=argparse.SUPPRESS)
    ap.add_argument("--size", default="full", help=argparse.SUPPRESS)
    ap.add_argument("--record", help=argparse.SUPPRESS)
    ap.add_argument("--json", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        if not ALLOCATORS[args.allocator][1]:
            args.plugin = None
        worker(args)
        return 0
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
