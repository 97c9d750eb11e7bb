#!/usr/bin/env python3
"""make torch-bench: live PyTorch workloads (workloads.py, size "bench") under several
allocators, one fresh process per sample (PyTorch reads its allocator settings once):

  torch               PyTorch's caching allocator, default settings
  torch-expandable    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  torch-async         PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
  vramlab             libvramlab_caching.so, VRAMLAB_ALLOC=caching (classic)
  vramlab-expandable  the same with caching:segments=expandable
  rmm-pool, rmm-async RAPIDS RMM through the same plugin (VRAMLAB_ALLOC=rmm:...; the
                      shim build/lib/libvramlab_peer_rmm.so from `make peers`); skipped,
                      with the reason in conditions.txt, where the shim is not built

Processes run one at a time, interleaved: every round runs each workload under every
allocator, the allocators' order rotated by one each round. Per process: step times
(torch.cuda.synchronize() after each step, host monotonic clock; the median over the
steps after the warm-up), peak allocated / reserved / requested from the allocator's own
counters (torch.cuda.memory_stats for PyTorch's, vl_torch_stat for the plugin, whose
figures for rmm-* are the RMM shim's), device memory in use (cudaMemGetInfo) before,
at most (sampled after every step) and at the end, and the results (losses, token
sums), compared with PyTorch-default's. Deterministic algorithms, no cuDNN autotuning,
no fused attention kernels (their backward passes use atomics): equal results are the
expected outcome. Statistics and verdict: bench_stats.py.

Out: results/torch-bench/RUN_ID/{samples.csv, summary.csv, verdict.csv, report.txt,
conditions.txt, torch_bench.summary.csv (for `make plots`), logs/, plots/}.
  bench.py [--quick] [--rounds N] [--workloads a,b] [--allocators a,b] [--run-id ID]
  bench.py --summarize DIR     recomputes the summary of DIR/samples.csv (no torch needed)
  bench.py --dry-run           prints the schedule
  bench.py --check             exit 0 where torch and a GPU are, else 77 with one line
Exit: 0; 1 when a process failed; 2 usage; 77 (one line) without torch or a GPU.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import bench_stats  # noqa: E402

RMM_POOL_SPEC = "rmm:pool,initial=256MiB"  # RMM's default initial pool is half the free memory
ALLOCATORS = {
    # name: (environment, through the plugin)
    "torch": ({}, False),
    "torch-expandable": ({"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}, False),
    "torch-async": ({"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}, False),
    "vramlab": ({"VRAMLAB_ALLOC": "caching"}, True),
    "vramlab-expandable": ({"VRAMLAB_ALLOC": "caching:segments=expandable"}, True),
    "rmm-pool": ({"VRAMLAB_ALLOC": RMM_POOL_SPEC}, True),
    "rmm-async": ({"VRAMLAB_ALLOC": "rmm:async"}, True),
}
WARMUP = dict(transformer=5, resnet50=4, gpt2=2, moe=4)  # steps (requests) not timed
DEFAULT_WORKLOADS = "transformer,resnet50,gpt2,moe"


def spec_of(allocator):
    env, _ = ALLOCATORS[allocator]
    return env.get("VRAMLAB_ALLOC") or env.get("PYTORCH_CUDA_ALLOC_CONF") or "default"


def schedule(workloads, allocators, rounds):
    """[(round, order, workload, allocator)]: each round every workload under every
    allocator, the allocators' order rotated by one per round."""
    jobs, k = [], 0
    for r in range(rounds):
        shift = r % len(allocators)
        order = allocators[shift:] + allocators[:shift]
        for w in workloads:
            for a in order:
                jobs.append((r + 1, k, w, a))
                k += 1
    return jobs


# --- one process: one workload under one allocator ---------------------------------------------

def deterministic(torch):
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    for name in ("enable_flash_sdp", "enable_mem_efficient_sdp", "enable_cudnn_sdp"):
        fn = getattr(torch.backends.cuda, name, None)
        if fn is not None:
            fn(False)


def worker(args):
    import ctypes
    import importlib

    import torch

    # VL_BENCH_WORKLOADS: another module with RUN (test_bench.py's stand-in, no GPU)
    workloads = importlib.import_module(os.environ.get("VL_BENCH_WORKLOADS", "workloads"))

    plugin = None
    if ALLOCATORS[args.allocator][1]:  # args.plugin has a default: only plugin allocators load it
        plugin = ctypes.CDLL(args.plugin)
        plugin.vl_torch_stat.restype = ctypes.c_int64
        plugin.vl_torch_stat.argtypes = [ctypes.c_int, ctypes.c_char_p]
        alloc = torch.cuda.memory.CUDAPluggableAllocator(args.plugin, "vl_alloc", "vl_free")
        torch.cuda.memory.change_current_allocator(alloc)
    deterministic(torch)
    free, total = torch.cuda.mem_get_info()  # context only: nothing allocated yet
    state = dict(used_base=total - free, used_max=total - free, times=[])

    def on_step(_i):
        torch.cuda.synchronize()
        now = time.perf_counter()
        state["times"].append(now - state["t"])
        f, t = torch.cuda.mem_get_info()
        state["used_max"] = max(state["used_max"], t - f)
        state["t"] = time.perf_counter()

    state["t"] = time.perf_counter()
    result = workloads.RUN[args.workload](args.size, args.seed, on_step)
    torch.cuda.synchronize()
    f, t = torch.cuda.mem_get_info()
    timed = state["times"][min(args.warmup, len(state["times"]) - 1):]
    timed_ms = sorted(x * 1e3 for x in timed)

    def stat(name):
        v = plugin.vl_torch_stat(0, name.encode())
        return v if v >= 0 else None

    if plugin is not None:
        peaks = dict(peak_allocated_bytes=stat("peak_allocated_bytes"),
                     peak_reserved_bytes=stat("peak_reserved_bytes"),
                     peak_requested_bytes=stat("peak_requested_bytes"))
        spec = os.environ.get("VRAMLAB_ALLOC", "caching")
        source = ("RMM shim" if spec.startswith("rmm") else "vramlab") + " via vl_torch_stat"
    else:
        ms = torch.cuda.memory_stats()
        peaks = {f"peak_{k}_bytes": ms.get(f"{k}_bytes.all.peak") for k in ("allocated", "reserved", "requested")}
        if not peaks["peak_requested_bytes"]:  # cudaMallocAsync keeps no requested figure: 0
            peaks["peak_requested_bytes"] = None
        spec = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "default")
        source = "torch.cuda.memory_stats"
    out = dict(workload=args.workload, allocator=args.allocator, spec=spec, seed=args.seed, status="ok",
               steps=len(state["times"]), steps_timed=len(timed_ms),
               step_ms_median=bench_stats.rankstats.quantile_median(timed_ms),
               step_ms_mean=sum(timed_ms) / len(timed_ms), stats_from=source,
               device_used_base_bytes=state["used_base"], device_used_max_bytes=max(state["used_max"], t - f),
               device_used_end_bytes=t - f, results=bench_stats.format_results(result), **peaks,
               torch=torch.__version__, cuda=torch.version.cuda, gpu=torch.cuda.get_device_name(0))
    try:
        v = torch._C._cuda_getDriverVersion()
        out["driver_cuda"] = f"{v // 1000}.{v % 1000 // 10}"
    except Exception:  # a private API: conditions only
        pass
    if plugin is not None and args.verbose:
        plugin.vl_torch_print_summary(0)
    with open(args.json, "w") as fh:
        json.dump(out, fh)


# --- the driver -----------------------------------------------------------------------------------

def git_rev():
    if os.environ.get("VL_GIT_REV"):
        return os.environ["VL_GIT_REV"]
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev + ("-dirty" if dirty else "") if rev else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def nvidia_smi():
    if not shutil.which("nvidia-smi"):
        return ""
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                               "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def rmm_reason(args):
    """'' when the RMM shim is here, else why the rmm-* columns are skipped."""
    shim = os.path.join(os.path.dirname(os.path.abspath(args.plugin)), "libvramlab_peer_rmm.so")
    if os.environ.get("VL_PEER_DIR"):
        shim = os.path.join(os.environ["VL_PEER_DIR"], "libvramlab_peer_rmm.so")
    if not os.path.exists(shim):
        return f"no RMM shim {shim} (scripts/fetch-deps.sh, then make peers)"
    return ""


def run_one(args, outdir, rnd, order, workload, allocator, size):
    env_extra, through_plugin = ALLOCATORS[allocator]
    tag = f"r{rnd}.{workload}.{allocator}"
    js = os.path.join(outdir, "logs", tag + ".json")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--workload", workload, "--allocator",
           allocator, "--size", size, "--seed", str(args.seed), "--json", js,
           "--warmup", str(0 if size == "tiny" else WARMUP.get(workload, 3))]
    if through_plugin:
        cmd += ["--plugin", os.path.abspath(args.plugin)]
    env = dict(os.environ, PYTHONUNBUFFERED="1", CUBLAS_WORKSPACE_CONFIG=":4096:8", **env_extra)
    if allocator.startswith("torch"):
        env.pop("VRAMLAB_ALLOC", None)
    else:
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    t0 = time.monotonic()
    log = os.path.join(outdir, "logs", tag + ".log")
    with open(log, "w") as fh:
        try:
            rc = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, timeout=args.job_timeout,
                                cwd=ROOT).returncode
        except subprocess.TimeoutExpired:
            fh.write(f"bench: killed after {args.job_timeout} s\n")
            rc = 124
    secs = time.monotonic() - t0
    row = dict(run_id=args.run_id, round=rnd, order=order, workload=workload, allocator=allocator,
               spec=spec_of(allocator), seed=args.seed, process_s=round(secs, 2))
    if rc == 0 and os.path.exists(js):
        with open(js) as fh:
            got = json.load(fh)
        row.update({k: v for k, v in got.items() if k in bench_stats.SAMPLE_FIELDS and k not in row})
        row["spec"] = got.get("spec", row["spec"])
        row["_info"] = {k: got.get(k) for k in ("torch", "cuda", "gpu", "driver_cuda")}
    else:
        with open(log) as fh:
            lines = [ln.strip() for ln in fh if ln.strip()]
        row.update(status="failed", error=f"exit {rc}: " + (lines[-1][:200] if lines else "no output"))
    return row


def conditions(args, rows, skipped):
    info = next((r["_info"] for r in rows if r.get("_info")), {})
    rmm_version = ""
    vf = os.path.join(ROOT, ".deps", "rmm", "librmm", "VERSION")
    if os.path.exists(vf):
        with open(vf) as fh:
            rmm_version = fh.read().strip()
    c = [f"run_id: {args.run_id}", f"date: {time.strftime('%Y-%m-%dT%H:%M:%S%z')}", f"host: {platform.node()}",
         f"device: {info.get('gpu', '')}", f"nvidia-smi: {nvidia_smi()}",
         f"driver CUDA version: {info.get('driver_cuda', '')}", f"torch: {info.get('torch', '')}",
         f"torch CUDA: {info.get('cuda', '')}", f"rmm: {rmm_version or 'not here'}", f"git: {git_rev()}",
         f"python: {platform.python_version()}", f"size: {args.size}", f"rounds: {args.rounds}",
         f"seed: {args.seed}", "deterministic: use_deterministic_algorithms(warn_only), cudnn.deterministic, "
         "no cudnn.benchmark, no flash/mem-efficient/cudnn SDPA, CUBLAS_WORKSPACE_CONFIG=:4096:8"]
    c += [f"skipped {a}: {why}" for a, why in skipped.items()]
    return c


def finish(outdir, rows, allocators, comments):
    for r in rows:
        r.pop("_info", None)
    text = bench_stats.write_summary(outdir, rows, allocators, comments)
    shutil.copy(os.path.join(outdir, "summary.csv"), os.path.join(outdir, "torch_bench.summary.csv"))
    print(text)
    if shutil.which("gnuplot"):
        subprocess.call([os.path.join(ROOT, "scripts", "plots.sh"), outdir])
    else:
        print(f"no gnuplot here: render elsewhere with  make plots RUN={os.path.relpath(outdir, ROOT)}")


def summarize_only(outdir):
    rows = bench_stats.read_csv(os.path.join(outdir, "samples.csv"))
    comments = []
    with open(os.path.join(outdir, "samples.csv")) as fh:
        comments = [ln[2:].rstrip("\n") for ln in fh if ln.startswith("# ")]
    finish(outdir, rows, None, comments)
    return 0


def driver(args):
    workloads = [w for w in args.workloads.split(",") if w]
    allocators = [a for a in args.allocators.split(",") if a]
    for a in allocators:
        if a not in ALLOCATORS:
            print(f"bench: unknown allocator {a!r}; known: {', '.join(ALLOCATORS)}", file=sys.stderr)
            return 2
    for w in workloads:
        if w not in DEFAULT_WORKLOADS.split(","):
            print(f"bench: unknown workload {w!r}", file=sys.stderr)
            return 2
    skipped = {}
    if any(a.startswith("rmm") for a in allocators):
        why = rmm_reason(args)
        if why:
            skipped.update({a: why for a in allocators if a.startswith("rmm")})
            allocators = [a for a in allocators if a not in skipped]
    jobs = schedule(workloads, allocators, args.rounds)
    if args.dry_run:
        for why in sorted(set(skipped.values())):
            print(f"skipped {','.join(a for a in skipped if skipped[a] == why)}: {why}")
        for rnd, order, w, a in jobs:
            print(f"round {rnd} #{order:3d} {w:12s} {a:20s} {spec_of(a)}")
        return 0
    if any(ALLOCATORS[a][1] for a in allocators) and not os.path.exists(args.plugin):
        print(f"bench: no plugin {args.plugin} (make plugin)", file=sys.stderr)
        return 2
    outdir = os.path.abspath(os.path.join(args.out, args.run_id))
    os.makedirs(os.path.join(outdir, "logs"), exist_ok=True)
    for why in sorted(set(skipped.values())):
        print(f"skipped {','.join(a for a in skipped if skipped[a] == why)}: {why}")
    rows, t0 = [], time.monotonic()
    for i, (rnd, order, w, a) in enumerate(jobs):
        longest = max((r["process_s"] for r in rows), default=0)
        if args.budget and time.monotonic() - t0 + longest > args.budget:
            print(f"bench: time budget of {args.budget} s reached after {i} of {len(jobs)} processes; "
                  "summarizing those", flush=True)
            skipped["(the rest)"] = f"time budget {args.budget} s: {len(jobs) - i} of {len(jobs)} processes not run"
            break
        row = run_one(args, outdir, rnd, order, w, a, args.size)
        rows.append(row)
        print(f"[{i + 1:3d}/{len(jobs)}] round {rnd} {w:12s} {a:20s} "
              + (f"{row['step_ms_median']:9.2f} ms/step" if row.get("status") == "ok" else row["error"])
              + f"  {row['process_s']:5.1f} s (total {time.monotonic() - t0:6.0f} s)", flush=True)
    comments = conditions(args, rows, skipped)
    with open(os.path.join(outdir, "conditions.txt"), "w") as fh:
        fh.write("\n".join(comments) + "\n")
    print("\n".join(comments))
    finish(outdir, rows, allocators, comments)
    print(f"results: {outdir}")
    return 1 if any(r.get("status") != "ok" for r in rows) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "torch-bench"))
    ap.add_argument("--run-id", default=None)
    ap.add_argument("--workloads", default=DEFAULT_WORKLOADS)
    ap.add_argument("--allocators", default=",".join(ALLOCATORS))
    ap.add_argument("--plugin", default=os.path.join(ROOT, "build", "lib", "libvramlab_caching.so"))
    ap.add_argument("--rounds", type=int, default=None, help="processes per (workload, allocator); default 5, quick 2")
    ap.add_argument("--quick", action="store_true", help="tiny models, 2 rounds: checks the machinery")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--job-timeout", type=float, default=300, help="seconds one process may run")
    ap.add_argument("--dry-run", action="store_true", help="print the schedule and exit")
    ap.add_argument("--check", action="store_true", help="exit 0 where torch and a GPU are, else 77 with one line")
    ap.add_argument("--budget", type=float, default=0,
                    help="seconds: start no process that could end past this (whole rounds run first, "
                         "so a cut run still interleaves); 0: no limit")
    ap.add_argument("--summarize", metavar="DIR", help="recompute DIR's summary from DIR/samples.csv")
    # worker mode (one workload under one allocator, in this fresh process)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--workload", help=argparse.SUPPRESS)
    ap.add_argument("--allocator", help=argparse.SUPPRESS)
    ap.add_argument("--size", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--warmup", type=int, default=3, help=argparse.SUPPRESS)
    ap.add_argument("--json", help=argparse.SUPPRESS)
    ap.add_argument("--verbose", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.size = args.size or ("tiny" if args.quick else "bench")
    if args.rounds is None:
        args.rounds = 2 if args.quick else 5
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.worker:
        worker(args)
        return 0
    if args.summarize:
        return summarize_only(args.summarize)
    if not args.dry_run or args.check:
        try:
            import torch
        except ImportError:
            print("no torch for python3")
            return 77
        if not torch.cuda.is_available():
            print("no CUDA device")
            return 77
        if args.check:
            return 0
    args.run_id = args.run_id or time.strftime("%Y%m%d-%H%M%S") + ("-quick" if args.quick else "")
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
