"""How fast this process's host runs, measured apart from the workload: the covariate of the
zoo's adjusted speed ratio (bench_stats.adjusted_ratio).

On the device VMs a process lands in a fast or a slow host mode and stays there: step times
of launch-bound workloads move 10-30% between processes of one configuration, with the
allocator's own host time moving with them. Both probes allocate nothing inside their timed
loops, so the allocator under test cannot move them:
  launch_us  host time per launch of a tiny in-place kernel (x.mul_ on 256 floats; the GPU
             keeps up, so the host's Python, dispatcher and driver path is what is timed),
             the median of REPS loops of OPS launches, each loop ended by a synchronize;
             the bench runs it before and after the workload, and a short one (STEP_OPS
             launches) after every step, outside the step's timed window: host speed
             moves within a process too, so a step is best compared with its own probe;
  python_us  time of a fixed pure-Python loop (interpreter speed), median of REPS.
"""
import time

OPS = 2000
REPS = 5
STEP_OPS = 200
PY_ITERS = 100_000


def _median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


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
    return _median(per)


def python_us():
    per = []
    for _ in range(REPS):
        t = time.perf_counter()
        acc = 0
        for i in range(PY_ITERS):
            acc += i * i
        per.append((time.perf_counter() - t) * 1e6)
    return _median(per)
