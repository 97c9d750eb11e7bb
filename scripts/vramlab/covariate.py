"""A ratio between two sets of processes, adjusted for a per-process covariate, in plain
Python (no numpy or scipy on the GPU box).

Why: on the device VMs a process's host runs fast or slow for reasons that have nothing to
do with the allocator, and a launch-bound workload's step time moves with it (10-30%
between processes of one configuration). A host-speed probe measured in the same process
(vramlab/torch/host_probe.py) explains part of that spread; regressing it out narrows the
interval of the ratio without running more processes.

docs/torch-bench.md, section "vramlab/covariate.py", has the rest."""
import math
from functools import lru_cache


def _betacf(a, b, x):
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < eps:
            break
    return h


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@lru_cache(maxsize=None)  # a run asks for a few (p, df) pairs many times
def t_quantile(p, df):
    """Student's t quantile for 0 < p < 1 and df > 0: bisection on t_cdf."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError("t_quantile: p in (0, 1) and df > 0")
    lo, hi = -1.0, 1.0
    while t_cdf(lo, df) > p:
        lo *= 2.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def _solve3(m, v):
    """m^-1 v and m^-1's diagonal, for a symmetric positive definite 3x3 m (Gauss-Jordan);
    None where m is singular."""
    a = [list(row) + [v[i]] + [1.0 if j == i else 0.0 for j in range(3)] for i, row in enumerate(m)]
    for col in range(3):
        piv = max(range(col, 3), key=lambda r: abs(a[r][col]))
        if abs(a[piv][col]) < 1e-12 * max(1.0, max(abs(x) for row in m for x in row)):
            return None
        a[col], a[piv] = a[piv], a[col]
        p = a[col][col]
        a[col] = [x / p for x in a[col]]
        for r in range(3):
            if r != col:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return [a[i][3] for i in range(3)], [a[i][4 + i] for i in range(3)]


def adjusted_ratio(ref_y, ref_x, y, x, level=0.95):
    """The ratio y / ref_y adjusted for the covariate x (module docstring). ref_y, ref_x: the
    reference side's values, one pair per process; y, x: the other side's. Non-positive
    values are not allowed (logs)."""
    pairs = [(0.0, math.log(a), math.log(b)) for a, b in zip(ref_y, ref_x)] \
        + [(1.0, math.log(a), math.log(b)) for a, b in zip(y, x)]
    n0, n1 = len(ref_y), len(y)
    if len(ref_y) != len(ref_x) or len(y) != len(x):
        raise ValueError("adjusted_ratio: one covariate value per process")
    if n0 < 2 or n1 < 2:
        return None
    rows = [(1.0, g, lx) for g, _, lx in pairs]
    ly = [v for _, v, _ in pairs]
    xtx = [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
    xty = [sum(r[i] * v for r, v in zip(rows, ly)) for i in range(3)]
    solved = _solve3(xtx, xty)
    if solved is None:
        return None
    beta, inv_diag = solved
    df = n0 + n1 - 3
    if df < 1:
        return None
    rss = sum((v - (beta[0] + beta[1] * r[1] + beta[2] * r[2])) ** 2 for r, v in zip(rows, ly))
    s2 = rss / df
    se = math.sqrt(s2 * inv_diag[1])
    t = t_quantile(0.5 + level / 2.0, df)
    m0 = sum(v for (g, v, _) in pairs if g == 0.0) / n0
    m1 = sum(v for (g, v, _) in pairs if g == 1.0) / n1
    within = sum((v - (m1 if g else m0)) ** 2 for g, v, _ in pairs) / (n0 + n1 - 2)
    return dict(ratio=_exp(beta[1]), lo=_exp(beta[1] - t * se), hi=_exp(beta[1] + t * se),
                slope=beta[2], sd_raw=math.sqrt(within), sd_adj=math.sqrt(s2), df=df)


def _exp(v):
    """exp(v), inf beyond what a float holds: a group nearly predicted by the covariate (a
    few processes, a near-collinear probe) leaves an interval wider than that."""
    return math.exp(v) if v < 709.0 else math.inf
