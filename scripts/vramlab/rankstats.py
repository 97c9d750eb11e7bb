"""Two-sample statistics for scripts/compare, in plain Python (no numpy or scipy needed
on a GPU box that cannot install them).

One sample is one process (or one whole repetition of the suite): the values of one
metric over the repetitions of run A and of run B. Within-process spread (p25..p75 of
one process) says nothing about the process-to-process noise, which on a VM can be
bimodal (one process at 450 ns, the next at 750 ns), so nothing here assumes a normal
distribution:

docs/comparing.md, section "vramlab/rankstats.py", has the rest."""
import math
from functools import lru_cache

EXACT_MAX = 30


def _ranks(values):
    """Midranks (1-based) of values, in their order; ties share the mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@lru_cache(maxsize=256)
def _rank_sum_distribution(doubled_ranks, n_a):
    """{2 x rank sum: number of ways} over all choices of n_a of the pooled items.
    doubled_ranks: the sorted pooled midranks times 2 (integers). Cached: every metric
    of one comparison without ties shares one pattern."""
    # ways[k] maps a doubled sum to the number of k-subsets that reach it.
    ways = [dict() for _ in range(n_a + 1)]
    ways[0][0] = 1
    for r in doubled_ranks:
        for k in range(min(n_a, len(doubled_ranks)) - 1, -1, -1):
            if not ways[k]:
                continue
            nxt = ways[k + 1]
            for s, c in ways[k].items():
                nxt[s + r] = nxt.get(s + r, 0) + c
    return ways[n_a]


def mann_whitney(a, b):
    """Two-sided p-value of the rank-sum test of a against b (1.0 when it cannot tell)."""
    na, nb = len(a), len(b)
    if na == 0 or nb == 0:
        return 1.0
    pooled = list(a) + list(b)
    ranks = _ranks(pooled)
    n = na + nb
    if len(set(pooled)) == 1:
        return 1.0
    rank_sum_a = sum(ranks[:na])
    mean = na * (n + 1) / 2
    if n <= EXACT_MAX:
        doubled = tuple(sorted(int(round(2 * r)) for r in ranks))
        dist = _rank_sum_distribution(doubled, na)
        total = sum(dist.values())
        observed = abs(2 * rank_sum_a - 2 * mean)
        # Two-sided: every arrangement at least as far from the mean as the observed one.
        extreme = sum(c for s, c in dist.items() if abs(s - 2 * mean) >= observed - 1e-9)
        return min(1.0, extreme / total)
    tie_term = 0.0
    counts = {}
    for v in pooled:
        counts[v] = counts.get(v, 0) + 1
    for t in counts.values():
        tie_term += t ** 3 - t
    var = na * nb / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = max(0.0, abs(rank_sum_a - mean) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def min_p(na, nb):
    """The smallest two-sided p-value of the rank-sum test with these sample sizes: exact
    up to 60 values in all, beyond through log-gamma (math.comb of thousands of values
    is a huge integer: reps_for_shift's search spent minutes building them)."""
    if na == 0 or nb == 0:
        return 1.0
    if na + nb <= 60:
        return min(1.0, 2 / math.comb(na + nb, na))
    log_comb = math.lgamma(na + nb + 1) - math.lgamma(na + 1) - math.lgamma(nb + 1)
    return min(1.0, 2 * math.exp(-log_comb))


def normal_quantile(p):
    """Inverse of the standard normal CDF (Acklam's rational approximation, |err| < 1e-8
    after one Newton step)."""
    if not 0 < p < 1:
        raise ValueError("p must be in (0, 1)")
    a = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
         1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
    b = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
         6.680131188771972e+01, -1.328068155288572e+01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
         -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)
    lo = 0.02425
    if p < lo:
        q = math.sqrt(-2 * math.log(p))
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / \
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    elif p <= 1 - lo:
        q = p - 0.5
        r = q * q
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / \
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    else:
        q = math.sqrt(-2 * math.log(1 - p))
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / \
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    e = 0.5 * math.erfc(-x / math.sqrt(2)) - p
    u = e * math.sqrt(2 * math.pi) * math.exp(x * x / 2)
    return x - u / (1 + x * u / 2)


@lru_cache(maxsize=256)
def _u_lower_critical(na, nb, alpha):
    """The largest c with P(U <= c) <= alpha / 2 under the null (no ties), or -1 when even
    U = 0 is more likely than that. Exact while small, else the normal approximation."""
    if na + nb <= EXACT_MAX:
        dist = _rank_sum_distribution(tuple(range(2, 2 * (na + nb) + 1, 2)), na)
        total = sum(dist.values())
        base = na * (na + 1)  # 2 x the smallest rank sum: U = (doubled sum - base) / 2
        cum, c = 0, -1
        for s in sorted(dist):
            cum += dist[s]
            if cum / total > alpha / 2:
                break
            c = (s - base) // 2
        return c
    z = normal_quantile(1 - alpha / 2)
    return int(math.floor(na * nb / 2 - z * math.sqrt(na * nb * (na + nb + 1) / 12)))


def hodges_lehmann(a, b, alpha=0.05):
    """(estimate, low, high): the shift of b against a and its 1 - alpha interval
    (low/high are -inf/inf when the sample sizes cannot bound it)."""
    diffs = sorted(y - x for x in a for y in b)
    m = len(diffs)
    if m == 0:
        return math.nan, -math.inf, math.inf
    mid = m // 2
    estimate = diffs[mid] if m % 2 else (diffs[mid - 1] + diffs[mid]) / 2
    c = _u_lower_critical(len(a), len(b), alpha)
    if c < 0:
        return estimate, -math.inf, math.inf
    # Moses: the (c+1)-th smallest and the (c+1)-th largest pairwise difference.
    return estimate, diffs[c], diffs[m - 1 - c]


@lru_cache(maxsize=256)
def _signed_rank_lower_tail(n):
    """[P(T+ <= t) for t = 0 .. n(n+1)/2] of the signed-rank statistic of n values
    (no ties, no zeros): the number of subsets of 1..n with each rank sum, over 2^n."""
    ways = [1] + [0] * (n * (n + 1) // 2)
    for r in range(1, n + 1):
        for t in range(len(ways) - 1, r - 1, -1):
            ways[t] += ways[t - r]
    cum, out = 0, []
    for w in ways:
        cum += w
        out.append(cum / 2 ** n)
    return out


def signed_rank_interval(values, alpha=0.05):
    """(estimate, low, high, coverage): the pseudo-median of values and its signed-rank
    interval, the (c+1)-th smallest and largest Walsh average (x_i + x_j) / 2, i <= j,
    with c the largest count such that P(T+ <= c) <= alpha / 2; coverage is
    1 - 2 P(T+ <= c). Exact up to 60 values, the normal approximation above. Too few
    values to reach 1 - alpha (fewer than 6 at 0.05): (estimate, min, max, the coverage
    of that range, 1 - 2^(1-n))."""
    v = list(values)
    n = len(v)
    if n == 0:
        return math.nan, math.nan, math.nan, 0.0
    walsh = sorted((v[i] + v[j]) / 2 for i in range(n) for j in range(i, n))
    m = len(walsh)
    estimate = walsh[m // 2] if m % 2 else (walsh[m // 2 - 1] + walsh[m // 2]) / 2
    if n <= 60:
        tail = _signed_rank_lower_tail(n)
        c = -1
        while c + 1 < len(tail) and tail[c + 1] <= alpha / 2:
            c += 1
        coverage = 1 - 2 * tail[max(c, 0)]  # c < 0: the coverage of min..max
    else:
        z = normal_quantile(1 - alpha / 2)
        c = int(math.floor(m / 2 - z * math.sqrt(n * (n + 1) * (2 * n + 1) / 24)))
        coverage = 1 - alpha
    if c < 0:  # not even the extremes reach 1 - alpha: min..max, whose coverage is less
        return estimate, walsh[0], walsh[-1], coverage
    return estimate, walsh[c], walsh[m - 1 - c], coverage


def signed_rank_p(values):
    """Two-sided p-value of the Wilcoxon signed-rank test that values (paired differences)
    centre on 0; zeros are dropped (Wilcoxon's rule). Exact (the null distribution of
    T+) up to 60 values without tied magnitudes; otherwise the normal approximation with
    the tie correction of the variance and a continuity correction. 1.0 with no value
    left."""
    v = [x for x in values if x != 0]
    n = len(v)
    if n == 0:
        return 1.0
    ranks = _ranks([abs(x) for x in v])
    t_plus = sum(r for r, x in zip(ranks, v) if x > 0)
    mean = n * (n + 1) / 4
    if n <= 60 and len({abs(x) for x in v}) == n:
        tail = _signed_rank_lower_tail(n)
        t = int(round(min(t_plus, n * (n + 1) / 2 - t_plus)))
        return min(1.0, 2 * tail[t])
    counts = {}
    for x in v:
        counts[abs(x)] = counts.get(abs(x), 0) + 1
    var = n * (n + 1) * (2 * n + 1) / 24 - sum(t ** 3 - t for t in counts.values()) / 48
    if var <= 0:
        return 1.0
    z = max(0.0, abs(t_plus - mean) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def benjamini_hochberg(pvalues):
    """q-values (BH-adjusted p-values), in the order given."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    q = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * (m / rank))  # m / rank first: exact when rank = m
        q[i] = running
    return q


def pooled_sd(a, b):
    """The within-side standard deviation, pooled (0 when neither side varies)."""
    def ss(v):
        mean = sum(v) / len(v)
        return sum((x - mean) ** 2 for x in v)
    dof = len(a) + len(b) - 2
    if dof <= 0:
        return math.nan
    return math.sqrt((ss(a) + ss(b)) / dof)


def residual_differences(a, b):
    """Sorted differences x - y of every ordered pair of distinct pooled residuals (each
    value less its side's median): the distribution of X - X' for two draws of the noise,
    whatever its shape (bimodal, skewed), with any shift between the sides removed."""
    ma, mb = quantile_median(a), quantile_median(b)
    r = [x - ma for x in a] + [x - mb for x in b]
    return sorted(x - y for i, x in enumerate(r) for j, y in enumerate(r) if i != j)


def quantile(sorted_values, q):
    """The q-quantile of sorted values, interpolated linearly between neighbours."""
    pos = q * (len(sorted_values) - 1)
    i = int(pos)
    if i + 1 >= len(sorted_values):
        return sorted_values[-1]
    return sorted_values[i] + (pos - i) * (sorted_values[i + 1] - sorted_values[i])


def _shift_for(diffs, na, nb, z):
    """Noether: the rank test's power at a shift d is about
    Phi(sqrt(12 na nb / (N + 1)) (P(Y > X) - 1/2) - z_{1-alpha/2}), and P(Y > X) under
    the shift is the share of noise differences below d. Returns the d at which the
    square root times (P - 1/2) reaches z; inf when no shift can."""
    if not diffs:
        return math.inf
    p = 0.5 + z / math.sqrt(12 * na * nb / (na + nb + 1))
    return math.inf if p >= 1 else max(0.0, quantile(diffs, p))


def min_detectable_shift(a, b, alpha=0.05, power=0.8):
    """The smallest shift the rank test would find with this power at level alpha (one
    metric tested alone), from the noise of both sides as measured (Noether's formula
    on their residuals, not a normal model: on bimodal process noise the normal model
    put the power of its 'mde' anywhere from 40% to 97%; tests/compare/test_stats.py
    checks this one by simulation). inf when the sample sizes cannot reach alpha."""
    if min_p(len(a), len(b)) > alpha:
        return math.inf
    z = normal_quantile(1 - alpha / 2) + normal_quantile(power)
    return _shift_for(residual_differences(a, b), len(a), len(b), z)


def reps_for_shift(a, b, shift, alpha=0.05, power=0.8, limit=100000):
    """Repetitions per side at which a shift of this size would be found (min_detectable_
    shift <= shift), with the noise measured in a and b; None beyond limit."""
    diffs = residual_differences(a, b)
    z = normal_quantile(1 - alpha / 2) + normal_quantile(power)
    n = 2
    while min_p(n, n) > alpha or _shift_for(diffs, n, n, z) > shift:
        n = n + 1 if n < 64 else int(n * 1.1)
        if n > limit:
            return None
    return n


def quantile_median(values):
    """The median (mean of the middle two for an even count); None for no values."""
    v = sorted(values)
    if not v:
        return None
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def median_interval(values, alpha=0.05):
    """(median, low, high, coverage): the median and its distribution-free interval, the
    k-th smallest and k-th largest value with k the largest count such that
    P(Binomial(n, 1/2) < k) <= alpha / 2; coverage is 1 - 2 P(Binomial(n, 1/2) < k).
    Too few values to reach 1 - alpha (fewer than 6 at 0.05): (median, min, max, the
    coverage of that range). None for no values."""
    v = sorted(values)
    n = len(v)
    if not n:
        return None
    below = lambda k: sum(math.comb(n, i) for i in range(k)) / 2 ** n  # noqa: E731  P(B < k)
    k = 1
    while k + 1 <= (n + 1) // 2 and below(k + 1) <= alpha / 2:
        k += 1
    return quantile_median(v), v[k - 1], v[n - k], 1 - 2 * below(k)
