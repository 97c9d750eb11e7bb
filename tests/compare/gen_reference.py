#!/usr/bin/env python3
"""The reference values that scripts/compare's statistics (vramlab/rankstats.py)
are checked against, computed with scipy and by brute force, never with the project's
own code. `gen_reference.py` (scipy needed: apt-get install python3-scipy) rewrites
tests/compare/reference.json; test_reference.py checks rankstats against that file,
and against values computed afresh here when scipy is importable.

Cases (fixed seed):
  - Mann-Whitney U two-sided p-values: exact (scipy method='exact', samples without
    ties, up to 30 values in all) and asymptotic (method='asymptotic' with continuity
    and tie correction, more than 30 values, ties included);
  - Hodges-Lehmann shift: the median of every pairwise difference (numpy), and its
    1 - alpha interval by inverting scipy's exact test: the shifts d for which the test
    of a against b - d does not reject, the ends being pairwise differences;
  - Benjamini-Hochberg: scipy.stats.false_discovery_control where scipy has it (1.11),
    else the step-up rule itself: for each alpha on a grid, which hypotheses it rejects."""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "reference.json")


def cases():
    """The inputs, the same on every machine (random.Random, not numpy's generator)."""
    rng = random.Random(20261125)
    exact, asym, hl, bh = [], [], [], []
    for na, nb in ((3, 3), (4, 4), (4, 7), (6, 6), (8, 8), (10, 12), (15, 15)):
        for shift in (0.0, 0.4, 1.5):
            pool = rng.sample(range(100000), na + nb)  # distinct values: no ties
            a = [x / 1000 for x in pool[:na]]
            b = [x / 1000 + shift * 30 for x in pool[na:]]
            exact.append({"a": a, "b": b})
    for na, nb in ((16, 16), (20, 25), (40, 40)):
        for shift in (0.0, 0.5, 1.0):
            a = [round(rng.gauss(0, 1), 1) for _ in range(na)]  # one decimal: ties
            b = [round(rng.gauss(shift, 1), 1) for _ in range(nb)]
            asym.append({"a": a, "b": b})
    for na, nb in ((4, 4), (6, 6), (8, 10), (12, 12)):
        for shift in (0.0, 0.3):
            a = [rng.lognormvariate(6.5, 0.2) for _ in range(na)]
            b = [rng.lognormvariate(6.5 + shift, 0.2) for _ in range(nb)]
            hl.append({"a": a, "b": b, "alpha": 0.05})
    for m in (1, 5, 20):
        bh.append({"p": [rng.random() ** 3 for _ in range(m)]})
    bh.append({"p": [0.01, 0.04, 0.03, 0.005, 0.2, 0.04]})  # ties and an order to undo
    return {"mann_whitney_exact": exact, "mann_whitney_asymptotic": asym, "hodges_lehmann": hl,
            "benjamini_hochberg": bh}


def reference(c):
    """c (from cases()) with the reference values added."""
    import numpy as np
    from scipy import stats

    for case in c["mann_whitney_exact"]:
        case["p"] = float(stats.mannwhitneyu(case["a"], case["b"], alternative="two-sided", method="exact").pvalue)
    for case in c["mann_whitney_asymptotic"]:
        case["p"] = float(stats.mannwhitneyu(case["a"], case["b"], alternative="two-sided", method="asymptotic",
                                             use_continuity=True).pvalue)
    for case in c["hodges_lehmann"]:
        a, b, alpha = case["a"], case["b"], case["alpha"]
        diffs = sorted(y - x for x in a for y in b)
        case["estimate"] = float(np.median(diffs))
        # Inversion: the interval is every d the exact test does not reject at alpha;
        # its ends are pairwise differences, so trying just inside each one suffices.
        eps = 1e-9 * (diffs[-1] - diffs[0] or 1)
        kept = [d for d in diffs for probe in (d - eps, d + eps)
                if stats.mannwhitneyu(a, [y - probe for y in b], alternative="two-sided",
                                      method="exact").pvalue > alpha]
        case["low"], case["high"] = (min(kept), max(kept)) if kept else (None, None)
    for case in c["benjamini_hochberg"]:
        p = case["p"]
        if hasattr(stats, "false_discovery_control"):
            case["q"] = [float(x) for x in stats.false_discovery_control(p)]
        m, order = len(p), sorted(range(len(p)), key=lambda i: p[i])
        grid = [0.001, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.5]
        case["rejected"] = {}
        for alpha in grid:  # step-up: reject the k smallest, k the largest with p_(k) <= k alpha / m
            k = max([r for r in range(1, m + 1) if p[order[r - 1]] <= r * alpha / m], default=0)
            case["rejected"][str(alpha)] = sorted(order[:k])
    return c


def main():
    try:
        import scipy
    except ImportError:
        print("gen_reference: scipy is not installed (apt-get install python3-scipy)", file=sys.stderr)
        return 2
    data = reference(cases())
    data["generated_with"] = f"scipy {scipy.__version__}"
    with open(FIXTURE, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(f"gen_reference: {FIXTURE} (scipy {scipy.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
