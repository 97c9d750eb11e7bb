"""How fast this process's host runs, measured apart from the workload: the covariate of the
zoo's adjusted speed ratio (bench_stats.adjusted).

On the device VMs a process's host runs faster or slower for reasons that have nothing to
do with the allocator, between processes and within one: step times of launch-bound
workloads move 10-30% between processes of one configuration, with the allocator's own host
time moving with them. Both probes allocate nothing inside their timed loops, so the
allocator under test cannot move them:
  launch_us  host time per launch of a tiny in-place kernel (x.mul_ on 256 floats; the GPU
             keeps up, so the host's Python, dispatcher and driver path is what is timed),
             the median of REPS loops of OPS launches, each loop ended by a synchronize;
             the bench runs it before and after the workload, and a short one (STEP_OPS
             launches) after every step, outside the step's timed window: host speed
             moves within a process too, so the process's covariate is the median of
             those, taken while its steps ran;
  python_us  time of a fixed pure-Python loop (interpreter speed), median of REPS.
"""
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
