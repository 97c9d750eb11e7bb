"""How fast this process's host runs, measured apart from the workload: the covariate of the
zoo's adjusted speed ratio (bench_stats.adjusted).

docs/torch-bench.md, section "vramlab/torch/host_probe.py", has the rest."""
import statistics
import time

OPS = 2000
REPS = 5
STEP_OPS = 200
PY_ITERS = 100_000


def tensor(torch):
    """The probes' tensor: allocated once, before the workload, outside every timed loop."""
    return torch.ones(256, device="cuda")


def launch_us(torch, x, ops=OPS, reps=REPS):
    torch.cuda.synchronize()
    per = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(ops):
            x.mul_(1.0)
        torch.cuda.synchronize()
        per.append((time.perf_counter() - t) / ops * 1e6)
    return statistics.median(per)


def python_us():
    per = []
    for _ in range(REPS):
        t = time.perf_counter()
        acc = 0
        for i in range(PY_ITERS):
            acc += i * i
        per.append((time.perf_counter() - t) * 1e6)
    return statistics.median(per)
