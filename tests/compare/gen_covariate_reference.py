#!/usr/bin/env python3
"""The reference values that vramlab/covariate.py is checked against, computed
with numpy (least squares, the inverse of X'X) and scipy (Student's t quantile), never with
the project's own code. gen_covariate_reference.py (numpy and scipy needed) rewrites
tests/compare/covariate_reference.json; test_covariate.py checks covariate.py against that
file, and against values computed afresh here where scipy is importable.

Cases (fixed seed): t quantiles over p and df; adjusted ratios on synthetic processes whose
log step time is a shift per side plus a slope times the log probe plus noise, from 2+2 to
20+20 processes, slopes 0 to 1.3 (the range the zoo shows)."""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "covariate_reference.json")


def cases():
    rng = random.Random(20261126)
    tq = [dict(p=p, df=df) for p in (0.6, 0.9, 0.975, 0.995, 0.025) for df in (1, 2, 3, 5, 13, 37, 200)]
    adj = []
    for n0, n1, slope, shift in ((2, 2, 0.5, 0.0), (3, 4, 1.0, 0.05), (4, 4, 0.0, -0.02), (8, 8, 0.4, 0.01),
                                 (10, 9, 1.3, 0.0), (20, 20, 0.7, 0.03)):
        ref_x = [rng.uniform(6.3, 12.0) for _ in range(n0)]
        x = [rng.uniform(6.3, 12.0) for _ in range(n1)]
        ref_y = [30.0 * (v / 8.0) ** slope * rng.lognormvariate(0, 0.03) for v in ref_x]
        y = [30.0 * (v / 8.0) ** slope * rng.lognormvariate(shift, 0.03) for v in x]
        adj.append(dict(ref_y=ref_y, ref_x=ref_x, y=y, x=x))
    return tq, adj


def reference():
    import math
    import numpy as np
    from scipy import stats
    tq, adj = cases()
    for c in tq:
        c["t"] = float(stats.t.ppf(c["p"], c["df"]))
    for c in adj:
        g = [0.0] * len(c["ref_y"]) + [1.0] * len(c["y"])
        lx = np.log(np.array(c["ref_x"] + c["x"]))
        ly = np.log(np.array(c["ref_y"] + c["y"]))
        X = np.column_stack([np.ones(len(g)), np.array(g), lx])
        beta, *_ = np.linalg.lstsq(X, ly, rcond=None)
        df = len(g) - 3
        s2 = float(np.sum((ly - X @ beta) ** 2)) / df
        se = math.sqrt(s2 * float(np.linalg.inv(X.T @ X)[1, 1]))
        t = float(stats.t.ppf(0.975, df))
        c.update(ratio=math.exp(beta[1]), lo=math.exp(beta[1] - t * se), hi=math.exp(beta[1] + t * se),
                 slope=float(beta[2]), sd_adj=math.sqrt(s2), df=df)
    return dict(t_quantile=tq, adjusted_ratio=adj)


if __name__ == "__main__":
    with open(FIXTURE, "w") as f:
        json.dump(reference(), f, indent=1)
    print("wrote", FIXTURE)
