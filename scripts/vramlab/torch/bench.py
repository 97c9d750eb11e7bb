"""make torch-bench: the PyTorch workload zoo under several allocators, a process a sample.

The zoo (zoo.py, workloads.py) runs one fresh process per sample, interleaved: every
round runs each workload under every allocator (default columns torch,
torch-expandable, vramlab, vramlab-expandable; also torch-async, rmm-pool, rmm-async,
--define NAME=SPEC and paired A+B), the order rotated each round. Statistics and
verdict: bench_stats.py. Out: results/torch-bench/RUN_ID/ (samples.csv, summary.csv,
verdict.csv, report.txt, ...). docs/torch-bench.md, section "vramlab/torch/bench.py",
has the columns, what each process measures, and the options in full.
  scripts/vl torch.bench [--quick] [--zoo tune|confirm|all] [--rounds N] [--workloads a,b]
           [--allocators a,b] [--define NAME=SPEC]... [--run-id ID] [--budget S] [--resume]
  scripts/vl torch.bench --summarize DIR | --dry-run | --check
Exit: 0; 1 when a process failed; 2 usage; 77 (one line) without torch or a GPU;
124 stopped by a signal (samples.csv holds the finished processes: --resume)."""
import argparse
import csv
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import time

from vramlab import ROOT, rankstats
from vramlab.results import git_revision
from vramlab.torch import bench_stats, gpu_check, host_probe, zoo

# The command that runs this module: the worker processes run it again (scripts/vl torch.bench).
LAUNCHER = [sys.executable, os.path.join(ROOT, "scripts", "vl"), "torch.bench"]

# The plugin's statistics a process records where known: what plan=1 did (lib/caching/plan.h)
# and the reclaim budget with its relocation (lib/caching/budget.c).
PLUGIN_STATS = ("plan_served", "plan_activations", "plan_ends", "budget_ppm", "relocation_maps_hidden",
                "relocation_maps_exposed", "relocation_map_ns", "relocation_exposed_ns", "relocation_unmap_ns")
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
# the zoo's verdict needs torch (the speed reference) and vramlab-expandable (the judged
# one); the two others place them
ZOO_ALLOCATORS = "torch,torch-expandable,vramlab,vramlab-expandable"
TINY_WARMUP = 1  # size "tiny": the first (cold) step is not timed
# 4 against 4 processes is the fewest for which the rank-sum interval of the ratio reaches
# 95% (97.1%); 3 against 3 cannot (the smallest two-sided p-value is 0.1)
ROUNDS = 4


def define(text):
    """Adds the plugin allocator NAME=SPEC (--define) to ALLOCATORS; an error message or ''."""
    name, eq, spec = text.partition("=")
    if not eq or not name or not spec or "," in name or not name.replace("-", "").replace("_", "").isalnum():
        return f"--define {text!r}: expected NAME=SPEC, NAME of letters, digits, - and _"
    if name in ALLOCATORS and ALLOCATORS[name] != ({"VRAMLAB_ALLOC": spec}, True):
        return f"--define {text!r}: {name} is already an allocator"
    ALLOCATORS[name] = ({"VRAMLAB_ALLOC": spec}, True)
    return ""


PAIR_ORDER = (0, 1, 1, 0)  # which allocator serves step i of a pair: PAIR_ORDER[i % 4]


def hold_ballast(plugin, torch):
    """In a pair, called as B starts serving: a block in B as large as what A holds then.

    The workload made its long-lived memory (model, optimizer state) under A, before B
    served anything. Without a counterpart B's stream would hold nothing between its
    steps, which a single-allocator run never sees: a policy keyed to an idle stream
    or to the stream's peak allocated would act every step. Returns the tensor (kept
    to the end of the process) or None when A's allocated bytes are unknown or 0."""
    held = plugin.vl_torch_stat(0, b"allocated_bytes")
    if held <= 0:
        return None
    free = torch.cuda.mem_get_info()[0]
    if held > free:  # B would return NULL, which PyTorch does not check (lib/torch/vramlab_caching.h)
        raise SystemExit(f"bench: paired mode needs B to hold what A holds, {held} bytes, with {free} free: "
                         "a workload that takes over half the GPU cannot run as a pair")
    return torch.empty(held, dtype=torch.uint8, device="cuda")


def resolve(name):
    """Registers the pair A+B (both plugin allocators) in ALLOCATORS; an error message or ''."""
    if name in ALLOCATORS:
        return ""
    a, plus, b = name.partition("+")
    if not plus or a not in ALLOCATORS or b not in ALLOCATORS or a == b:
        return f"unknown allocator {name!r}; known: {', '.join(ALLOCATORS)}, or A+B of two plugin ones"
    if not (ALLOCATORS[a][1] and ALLOCATORS[b][1]) or a.startswith("rmm") or b.startswith("rmm"):
        return f"{name}: a pair needs two vramlab plugin allocators"
    ALLOCATORS[name] = ({"VRAMLAB_ALLOC": ALLOCATORS[a][0]["VRAMLAB_ALLOC"],
                         "VRAMLAB_ALLOC_B": ALLOCATORS[b][0]["VRAMLAB_ALLOC"]}, True)
    return ""


def spec_of(allocator):
    env, _ = ALLOCATORS[allocator]
    if "VRAMLAB_ALLOC_B" in env:
        return f"{env['VRAMLAB_ALLOC']} + {env['VRAMLAB_ALLOC_B']}"
    return env.get("VRAMLAB_ALLOC") or env.get("PYTORCH_CUDA_ALLOC_CONF") or "default"


def warmup_of(workload, size):
    """Steps (requests) of the workload not timed: the zoo's figure, TINY_WARMUP at size tiny."""
    if size == "tiny":
        return TINY_WARMUP
    return zoo.BY_NAME[workload].warmup if workload in zoo.BY_NAME else 3


def select_workloads(args):
    """The workloads to run: --workloads where given, else the --zoo half (--quick: a few)."""
    if args.workloads:
        return [w for w in args.workloads.split(",") if w]
    if args.quick and not args.zoo:
        return list(zoo.QUICK)
    return list(zoo.HALVES[args.zoo or "all"])


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

    # VL_BENCH_WORKLOADS: another module with RUN (tests/torch/test_bench.py's stand-in, no GPU)
    workloads = importlib.import_module(os.environ.get("VL_BENCH_WORKLOADS", "vramlab.torch.workloads"))

    plugin = None
    pair = "VRAMLAB_ALLOC_B" in ALLOCATORS[args.allocator][0]
    if ALLOCATORS[args.allocator][1]:  # args.plugin has a default: only plugin allocators load it
        plugin = ctypes.CDLL(args.plugin)
        plugin.vl_torch_stat.restype = ctypes.c_int64
        plugin.vl_torch_stat.argtypes = [ctypes.c_int, ctypes.c_char_p]
        if pair and plugin.vl_torch_serve(PAIR_ORDER[0]) != 0:
            raise SystemExit("bench: the plugin refused paired mode (VRAMLAB_ALLOC_B)")
        alloc = torch.cuda.memory.CUDAPluggableAllocator(args.plugin, "vl_alloc", "vl_free")
        torch.cuda.memory.change_current_allocator(alloc)
    deterministic(torch)
    free, total = torch.cuda.mem_get_info()  # context only: nothing allocated yet

    def alloc_ns():
        """ns spent in vl_alloc + vl_free so far; None where a counter is unknown (no
        plugin, VRAMLAB_TIME unset, or an allocator not open yet: B before its first
        allocation, which opens it)."""
        if plugin is None:
            return None
        names = (b"alloc_ns", b"free_ns") + ((b"b.alloc_ns", b"b.free_ns") if pair else ())
        got = [plugin.vl_torch_stat(0, n) for n in names]
        return sum(got) if min(got) >= 0 else None

    def device_calls():
        """(maps, unmaps) so far: the allocator's calls that map or create device memory
        and those that unmap or release it; None for a counter it does not keep."""
        if pair:  # two allocators' calls in one process: not one allocator's figure
            return None, None
        if plugin is not None:
            got = [plugin.vl_torch_stat(0, n) for n in (b"device_allocs", b"device_frees")]
            return tuple(x if x >= 0 else None for x in got)
        if "cudaMallocAsync" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""):
            return None, None  # the driver's pool: memory_stats() has these keys, but at 0
        ms = torch.cuda.memory_stats()
        return ms.get("num_device_alloc"), ms.get("num_device_free")

    # the host's speed before and after the workload and after every step (host_probe.py):
    # the covariate of the adjusted ratio; its one small tensor stays live, nothing is
    # allocated while it is timed
    probe_x = host_probe.tensor(torch)
    probes = dict(probe_launch_us_before=host_probe.launch_us(torch, probe_x), probe_python_us=host_probe.python_us())
    state = dict(used_base=total - free, used_max=total - free, times=[], alloc_ns=[], ns=alloc_ns(),
                 calls=[device_calls()], probe_steps=[])

    def on_step(_i):
        torch.cuda.synchronize()
        now = time.perf_counter()
        state["times"].append(now - state["t"])
        ns = alloc_ns()
        state["alloc_ns"].append(bench_stats.counter_delta(state["ns"], ns))
        state["ns"] = ns
        state["calls"].append(device_calls())
        if pair:
            serve = PAIR_ORDER[len(state["times"]) % 4]
            plugin.vl_torch_serve(serve)
            if serve == 1 and "ballast" not in state:  # B's first step: outside the timed units
                state["ballast"] = hold_ballast(plugin, torch)
                torch.cuda.synchronize()
                state["ns"] = alloc_ns()
        f, t = torch.cuda.mem_get_info()
        state["used_max"] = max(state["used_max"], t - f)
        state["probe_steps"].append(host_probe.launch_us(torch, probe_x, host_probe.STEP_OPS, 1))
        state["t"] = time.perf_counter()

    state["t"] = time.perf_counter()
    # a pair runs every step twice, same shapes: one served by A, one by B (PAIR_ORDER)
    result = workloads.RUN[args.workload](args.size, args.seed, on_step, repeats=2 if pair else 1)
    torch.cuda.synchronize()
    f, t = torch.cuda.mem_get_info()
    probes["probe_launch_us_after"] = host_probe.launch_us(torch, probe_x)
    first = min(args.warmup, len(state["times"]) - 1)  # the first timed step
    timed_ms = [x * 1e3 for x in state["times"][first:]]
    # state["calls"][i]: the counters before step i (0) or after step i - 1
    calls = dict(maps_per_step=bench_stats.per_step([c[0] for c in state["calls"]], first),
                 unmaps_per_step=bench_stats.per_step([c[1] for c in state["calls"]], first),
                 maps_total=state["calls"][-1][0], unmaps_total=state["calls"][-1][1])
    alloc_ms = [x / 1e6 for x in state["alloc_ns"][first:] if x is not None]
    # the probe after each timed step, its median: the process's host speed while it ran
    probes["probe_launch_us_steps"] = rankstats.quantile_median(state["probe_steps"][first:])
    paired_out = {}
    served_by = [PAIR_ORDER[u % 4] for u in range(len(state["times"]))] if pair else None
    if pair:  # each step ran twice (units 2i, 2i+1), once under A, once under B
        steps = len(state["times"]) // 2
        ms, al, log_ratios = {0: [], 1: []}, {0: [], 1: []}, []
        for i in range(min(args.warmup, steps - 1), steps):
            step_ms = {}
            for u in (2 * i, 2 * i + 1):
                k = PAIR_ORDER[u % 4]
                step_ms[k] = state["times"][u] * 1e3
                ms[k].append(step_ms[k])
                if state["alloc_ns"][u] is not None:
                    al[k].append(state["alloc_ns"][u] / 1e6)
            log_ratios.append(math.log(step_ms[1] / step_ms[0]))
        med = rankstats.quantile_median
        if ms[0]:  # A's steps are the row's step time (B's go to step_ms_median_b)
            timed_ms, alloc_ms = ms[0], al[0]
            # B's time over A's on the same step, the median over the steps; and B's
            # timed steps' total over A's (rare slow steps count: what an epoch takes)
            paired_out = dict(step_ms_median_b=med(ms[1]), paired_ratio=math.exp(med(log_ratios)),
                              paired_total_ratio=bench_stats.pair_total_ratio(
                                  state["times"], served_by, min(args.warmup, steps - 1)),
                              alloc_ms_median_b=med(al[1]) if al[1] else None)

    def stat(name):
        v = plugin.vl_torch_stat(0, name.encode())
        return v if v >= 0 else None

    if pair:  # the peaks mix both allocators: no waste figure
        peaks = dict(peak_allocated_bytes=None, peak_reserved_bytes=None, peak_requested_bytes=None)
        spec = spec_of(args.allocator)
        source = "vramlab paired mode (peaks not kept)"
    elif plugin is not None:
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
               steps_s=sum(state["times"]),  # against process_s: what the process spent outside its steps
               step_ms_median=rankstats.quantile_median(timed_ms),
               step_ms_mean=sum(timed_ms) / len(timed_ms),
               alloc_ms_median=rankstats.quantile_median(alloc_ms) if alloc_ms else None,
               # the mean: what the timed steps paid in all (relocation comes in bursts the median hides)
               alloc_ms_mean=sum(alloc_ms) / len(alloc_ms) if alloc_ms else None,
               stats_from=source, **paired_out, **calls, **probes,
               device_used_base_bytes=state["used_base"], device_used_max_bytes=max(state["used_max"], t - f),
               device_used_end_bytes=t - f, **peaks,
               # a pair ran every step twice: its results are not the workload's
               results="" if pair else bench_stats.format_results(result),
               torch=torch.__version__, cuda=torch.version.cuda, gpu=torch.cuda.get_device_name(0),
               # every step's time (warm-up included), and in a pair which allocator served it
               # (0 = A, 1 = B): the per-process figures above can be recomputed from the
               # logs with another estimator, without a GPU run
               step_ms_all=[x * 1e3 for x in state["times"]], probe_us_all=state["probe_steps"],
               maps_all=[c[0] for c in state["calls"]], unmaps_all=[c[1] for c in state["calls"]],
               served_by=served_by)
    if plugin is not None and not pair:  # what plan=1 and the reclaim budget did (absent where unknown)
        out.update({k: v for k in PLUGIN_STATS if (v := stat(k)) is not None})
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


# --- stopping: SIGTERM / SIGINT / SIGHUP (timeout, Ctrl-C, a lost session) -------------------------

class Stop:
    """Set by the signal handler: the driver kills the running process, records no row
    for it, writes what it has and exits STOPPED."""
    signum = 0
    since = 0.0
    child = None  # the running worker's Popen
    part_date = ""  # when this part started


STOPPED = 124  # the exit status after a stop signal, as timeout(1)'s
KILL_AFTER = 5.0  # seconds a terminated worker gets before SIGKILL


def on_signal(signum, _frame):
    if not Stop.signum:
        Stop.signum, Stop.since = signum, time.monotonic()
    child = Stop.child
    if child is not None and child.returncode is None:
        try:
            child.terminate()
        except OSError:
            pass


def wait_child(proc, timeout, fh):
    """The worker's exit status; 124 when it ran past timeout (killed)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return proc.wait(timeout=0.25)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if Stop.signum and now - Stop.since > KILL_AFTER:
            proc.kill()
        elif now > deadline:
            proc.kill()
            proc.wait()
            fh.write(f"bench: killed after {timeout} s\n")
            return 124


def run_one(args, outdir, rnd, order, workload, allocator, size):
    """The sample of one process, or None where a stop signal cut it (no row)."""
    env_extra, through_plugin = ALLOCATORS[allocator]
    tag = f"r{rnd}.{workload}.{allocator}"
    js = os.path.join(outdir, "logs", tag + ".json")
    cmd = LAUNCHER + ["--worker", "--workload", workload, "--allocator",
           allocator, "--size", size, "--seed", str(args.seed), "--json", js,
           "--warmup", str(warmup_of(workload, size))]
    for d in args.define:
        cmd += ["--define", d]
    if through_plugin:
        cmd += ["--plugin", os.path.abspath(args.plugin)]
    env = dict(os.environ, PYTHONUNBUFFERED="1", CUBLAS_WORKSPACE_CONFIG=":4096:8", **env_extra)
    if through_plugin:
        env["VRAMLAB_TIME"] = "1"
    if allocator.startswith("torch"):
        env.pop("VRAMLAB_ALLOC", None)
    else:
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    log = os.path.join(outdir, "logs", tag + ".log")
    if os.path.exists(log):  # an earlier attempt (resumed run): its log is kept aside
        os.replace(log, os.path.join(outdir, "logs", f"{tag}.{time.strftime('%Y%m%d-%H%M%S')}.log"))
    if os.path.exists(js):
        os.remove(js)
    t0 = time.monotonic()
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT)
        Stop.child = proc
        if Stop.signum:  # signalled between two processes
            proc.terminate()
        try:
            rc = wait_child(proc, args.job_timeout, fh)
        finally:
            Stop.child = None
        if Stop.signum and rc != 0:
            fh.write(f"bench: stopped by signal {Stop.signum}\n")
            return None
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


# --- the run folder: samples.csv (incremental) and conditions.txt (one line per part) ---------------

def job_key(row):
    """A sample's job: (round, workload, allocator), as strings (rows read back are)."""
    return str(row.get("round")), str(row.get("workload")), str(row.get("allocator"))


def load_samples(path):
    """(rows, comments) of a samples.csv; ([], []) where there is none. A torn last line
    (a writer killed in the middle of a row) and rows without a status are dropped."""
    if not os.path.exists(path):
        return [], []
    with open(path, newline="") as f:
        text = f.read()
    if text and not text.endswith("\n"):
        print(f"bench: {path}: an unfinished last line, dropped", file=sys.stderr)
        text = text[: text.rfind("\n") + 1]
    lines = text.splitlines(keepends=True)
    comments = [ln[2:].rstrip("\r\n") for ln in lines if ln.startswith("# ")]
    rows = [r for r in csv.DictReader(ln for ln in lines if not ln.startswith("#")) if r.get("status")]
    return rows, comments


def latest(rows):
    """One row per job, in first-seen order: a later attempt (a failed process re-run by
    --resume) replaces the earlier one in its place."""
    out, at = [], {}
    for r in rows:
        k = job_key(r)
        if k in at:
            out[at[k]] = r
        else:
            at[k] = len(out)
            out.append(r)
    return out


def read_conditions(outdir):
    path = os.path.join(outdir, "conditions.txt")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [ln.rstrip("\n") for ln in f if ln.strip()]


def field(lines, key):
    for ln in lines:
        if ln.startswith(key + ": "):
            return ln[len(key) + 2:]
    return ""


def earlier_parts(prev):
    """The part lines of the conditions of earlier parts; one made up from their date and
    git lines where they have none (a run folder of a bench.py without --resume)."""
    parts = [ln for ln in prev if ln.startswith("part ")]
    if not parts and field(prev, "date"):
        parts = [f"part 1: date {field(prev, 'date')}, git {field(prev, 'git')}, host {field(prev, 'host')}"]
    return parts


def conditions(args, rows, skipped, prev=(), part=""):
    """conditions.txt's lines. rows: this part's samples. prev: the earlier parts'
    conditions (--resume): their figures stand where this part has none, a different one
    is a warning line, and every part has its own line (date, git revision, host)."""
    info = next((r["_info"] for r in rows if r.get("_info")), {})
    rmm_version = ""
    vf = os.path.join(ROOT, ".deps", "rmm", "librmm", "VERSION")
    if os.path.exists(vf):
        with open(vf) as fh:
            rmm_version = fh.read().strip()
    now = {"host": platform.node(), "device": info.get("gpu") or "", "nvidia-smi": nvidia_smi(),
           "driver CUDA version": info.get("driver_cuda") or "", "torch": info.get("torch") or "",
           "torch CUDA": info.get("cuda") or "", "rmm": rmm_version or "not here", "git": git_revision(ROOT),
           "python": platform.python_version()}
    fig, warnings = {}, [ln for ln in prev if ln.startswith("warning: ")]
    parts = earlier_parts(prev)
    for key, value in now.items():
        before = field(prev, key)
        fig[key] = before or value
        if before and value and before != value:
            warnings.append(f"warning: part {len(parts) + 1} ran with {key} {value}, earlier parts {before}")
    date = Stop.part_date or time.strftime("%Y-%m-%dT%H:%M:%S%z")  # this part's start
    c = [f"run_id: {args.run_id}", f"date: {field(prev, 'date') or date}"]
    c += [f"{k}: {fig[k]}" for k in ("host", "device", "nvidia-smi", "driver CUDA version", "torch",
                                     "torch CUDA", "rmm", "git", "python")]
    c += [f"size: {args.size}", f"rounds: {args.rounds}", f"seed: {args.seed}",
          "deterministic: use_deterministic_algorithms(warn_only), cudnn.deterministic, "
          "no cudnn.benchmark, no flash/mem-efficient/cudnn SDPA, CUBLAS_WORKSPACE_CONFIG=:4096:8"]
    c += parts + [f"part {len(parts) + 1}: date {date}, git {now['git']}, host {now['host']}"
                  + (f", {part}" if part else "")]
    c += [w for w in dict.fromkeys(warnings)]
    c += [f"skipped {a}: {why}" for a, why in skipped.items()]
    return c


def write_conditions(outdir, comments):
    path = os.path.join(outdir, "conditions.txt")
    with open(path + ".tmp", "w") as fh:
        fh.write("\n".join(comments) + "\n")
    os.replace(path + ".tmp", path)


def finish(outdir, rows, allocators, comments, plots=True):
    for r in rows:
        r.pop("_info", None)
    text = bench_stats.write_summary(outdir, rows, allocators, comments)
    shutil.copy(os.path.join(outdir, "summary.csv"), os.path.join(outdir, "torch_bench.summary.csv"))
    print(text)
    print(f"table: {os.path.join(outdir, 'zoo.md')}")
    later = f"make plots RUN={os.path.relpath(outdir, ROOT)}"
    if not plots:
        print(f"stopped: no figure; render it with  {later}")
    elif shutil.which("gnuplot"):
        subprocess.call([os.path.join(ROOT, "scripts", "plots.sh"), outdir])
    else:
        print(f"no gnuplot here: render elsewhere with  {later}")


def summarize_only(outdir):
    rows, comments = load_samples(os.path.join(outdir, "samples.csv"))
    finish(outdir, latest(rows), None, comments or read_conditions(outdir))
    return 0


def driver(args):
    workloads = select_workloads(args)
    allocators = [a for a in args.allocators.split(",") if a]
    for a in allocators:
        why = resolve(a)
        if why:
            print(f"bench: {why}", file=sys.stderr)
            return 2
    for w in workloads:
        if w not in zoo.BY_NAME:
            print(f"bench: unknown workload {w!r}", file=sys.stderr)
            return 2
    skipped = {}
    if any(a.startswith("rmm") for a in allocators):
        why = rmm_reason(args)
        if why:
            skipped.update({a: why for a in allocators if a.startswith("rmm")})
            allocators = [a for a in allocators if a not in skipped]
    jobs = schedule(workloads, allocators, args.rounds)
    outdir = os.path.abspath(os.path.join(args.out, args.run_id))
    samples_csv = os.path.join(outdir, "samples.csv")
    previous, _ = load_samples(samples_csv)
    done = {job_key(r) for r in previous if r.get("status") == "ok"}
    todo = [j for j in jobs if (str(j[0]), j[2], j[3]) not in done]
    if args.dry_run:
        for why in sorted(set(skipped.values())):
            print(f"skipped {','.join(a for a in skipped if skipped[a] == why)}: {why}")
        for rnd, order, w, a in jobs:
            print(f"round {rnd} #{order:3d} {w:12s} {a:20s} {spec_of(a)}"
                  + ("  (done)" if (str(rnd), w, a) in done else ""))
        return 0
    if previous and not args.resume:
        print(f"bench: {outdir} holds {len(previous)} samples: --resume (RESUME=1) to continue that run, "
              "or another --run-id", file=sys.stderr)
        return 2
    if any(ALLOCATORS[a][1] for a in allocators) and not os.path.exists(args.plugin):
        print(f"bench: no plugin {args.plugin} (make plugin)", file=sys.stderr)
        return 2
    prev = read_conditions(outdir) if args.resume else []
    if args.resume:
        seeds = sorted({str(r.get("seed")) for r in previous} - {str(args.seed)})
        if seeds or (field(prev, "size") and field(prev, "size") != args.size):
            print(f"bench: {outdir} ran with seed {','.join(seeds) or args.seed}, size "
                  f"{field(prev, 'size') or '?'}: resume it with the same --seed, and --quick as it was",
                  file=sys.stderr)
            return 2
        failed = [r for r in previous if r.get("status") != "ok" and job_key(r) not in done]
        print(f"bench: resuming {outdir}: {len(jobs) - len(todo)} of {len(jobs)} processes done, "
              f"{len(failed)} failed ones to run again" if previous else f"bench: nothing to resume in {outdir}: "
              "starting it", flush=True)
    os.makedirs(os.path.join(outdir, "logs"), exist_ok=True)
    mark = os.path.join(outdir, "COMPLETE")  # written last, when every process has a sample
    if os.path.exists(mark):
        os.remove(mark)
    for why in sorted(set(skipped.values())):
        print(f"skipped {','.join(a for a in skipped if skipped[a] == why)}: {why}")
    Stop.part_date = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    comments = conditions(args, [], skipped, prev, f"started, {len(todo)} of {len(jobs)} processes to run")
    write_conditions(outdir, comments)
    # samples.csv from here on grows by a row per finished process (bench_stats.append_csv)
    bench_stats.write_csv(samples_csv, bench_stats.SAMPLE_FIELDS, previous, comments, digits=9)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    rows, t0 = [], time.monotonic()
    reran = 0
    for i, (rnd, order, w, a) in enumerate(todo):
        if Stop.signum:
            break
        longest = max((bench_stats.num(r.get("process_s")) or 0 for r in previous + rows), default=0)
        if args.budget and time.monotonic() - t0 + longest > args.budget:
            print(f"bench: time budget of {args.budget} s reached after {i} of {len(todo)} processes; "
                  "summarizing those (--resume continues the run)", flush=True)
            skipped["(the rest)"] = (f"time budget {args.budget} s: {len(todo) - i} of {len(jobs)} processes "
                                     "not run (--resume continues the run)")
            break
        row = run_one(args, outdir, rnd, order, w, a, args.size)
        if row is None:  # stopped: the cut process leaves no row
            break
        bench_stats.append_csv(samples_csv, bench_stats.SAMPLE_FIELDS, row, digits=9)
        rows.append(row)
        reran += any(job_key(r) == job_key(row) for r in previous)
        print(f"[{len(jobs) - len(todo) + i + 1:3d}/{len(jobs)}] round {rnd} {w:12s} {a:20s} "
              + (f"{row['step_ms_median']:9.2f} ms/step" if row.get("status") == "ok" else row["error"])
              + f"  {row['process_s']:5.1f} s (total {time.monotonic() - t0:6.0f} s)", flush=True)
    stopped = Stop.signum if len(rows) < len(todo) else 0  # a signal after the last process: a whole run
    if stopped:
        name = signal.Signals(stopped).name
        print(f"bench: stopped by {name}: this part's {len(rows)} finished processes are in samples.csv; "
              "--resume continues the run", flush=True)
        skipped["(the rest)"] = (f"stopped by {name}: {len(todo) - len(rows)} of {len(jobs)} processes not run "
                                 "(--resume continues the run)")
    part = f"{len(rows)} process{'' if len(rows) == 1 else 'es'} run" \
        + (f" ({reran} failed ones again)" if reran else "") \
        + (f", stopped by {signal.Signals(stopped).name}" if stopped else "")
    all_rows = latest(previous + rows)
    comments = conditions(args, rows, skipped, prev, part)
    write_conditions(outdir, comments)
    seen = list(dict.fromkeys(r["allocator"] for r in all_rows))
    finish(outdir, all_rows, allocators + [a for a in seen if a not in allocators], comments, plots=not stopped)
    print("\n".join(comments))
    print(f"results: {outdir}")
    ok = {job_key(r) for r in all_rows if r.get("status") == "ok"}
    left = sum((str(rnd), w, a) not in ok for rnd, _, w, a in jobs)
    print(f"bench: {left} of {len(jobs)} processes without a sample: run again with --resume (RESUME=1)"
          if left else f"bench: complete: all {len(jobs)} processes have a sample", flush=True)
    if not left:
        with open(mark + ".tmp", "w") as f:
            f.write(f"complete {time.strftime('%Y-%m-%dT%H:%M:%S%z')} processes={len(jobs)}\n")
        os.replace(mark + ".tmp", mark)
    if stopped:
        return STOPPED
    return 1 if any(r.get("status") != "ok" for r in all_rows) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "torch-bench"))
    ap.add_argument("--run-id", default=None)
    ap.add_argument("--workloads", default="", help="a,b: these workloads (default: the --zoo half)")
    ap.add_argument("--zoo", choices=sorted(zoo.HALVES), default=None,
                    help="the zoo's half to run: tune, confirm or all (default all; --quick: a few)")
    ap.add_argument("--allocators", default=ZOO_ALLOCATORS,
                    help=f"a,b (default {ZOO_ALLOCATORS}); known: {', '.join(ALLOCATORS)}, A+B, --define'd")
    ap.add_argument("--define", action="append", default=[], metavar="NAME=SPEC",
                    help="one more plugin allocator: VRAMLAB_ALLOC=SPEC under the name NAME (repeatable)")
    ap.add_argument("--plugin", default=os.path.join(ROOT, "build", "lib", "libvramlab_caching.so"))
    ap.add_argument("--rounds", type=int, default=None,
                    help=f"processes per (workload, allocator); default {ROUNDS}, quick 2")
    ap.add_argument("--quick", action="store_true", help="tiny models, 2 rounds: checks the machinery")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--job-timeout", type=float, default=300, help="seconds one process may run")
    ap.add_argument("--dry-run", action="store_true", help="print the schedule and exit")
    ap.add_argument("--check", action="store_true", help="exit 0 where torch and a GPU are, else 77 with one line")
    ap.add_argument("--budget", type=float, default=0,
                    help="seconds: start no process that could end past this (whole rounds run first, "
                         "so a cut run still interleaves); 0: no limit")
    ap.add_argument("--resume", action="store_true",
                    help="continue the run --run-id: skip the processes its samples.csv has with status ok "
                         "(failed ones run again), run the rest of the same schedule, summarize all")
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
    for d in args.define:
        why = define(d)
        if why:
            ap.error(why)
    args.size = args.size or ("tiny" if args.quick else "bench")
    if args.rounds is None:
        args.rounds = 2 if args.quick else ROUNDS
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.worker:
        why = resolve(args.allocator or "")
        if why:
            ap.error(why)
        worker(args)
        return 0
    if args.summarize:
        return summarize_only(args.summarize)
    if args.resume and not args.run_id:
        ap.error("--resume needs the --run-id (RUN=) of the run to continue")
    if not args.dry_run or args.check:
        rc = gpu_check.skip()  # 77 with one line without torch or a GPU
        if rc or args.check:
            return rc
    args.run_id = args.run_id or time.strftime("%Y%m%d-%H%M%S") + ("-quick" if args.quick else "")
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
