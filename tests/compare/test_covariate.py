#!/usr/bin/env python3
"""Checks vramlab/covariate.py against reference values from numpy and scipy
(tests/compare/gen_covariate_reference.py): always against the stored
covariate_reference.json, and with --live against values computed afresh (scipy needed;
exit 77 without it). Also what it refuses: too few processes, a probe that does not vary.
One line per check; exit 1 when one fails."""
import json
import math
import sys

import refcheck  # noqa: E402  (sets the path to the vramlab package)
from vramlab import covariate  # noqa: E402
import gen_covariate_reference as gen  # noqa: E402
from refcheck import check  # noqa: E402


def close(x, y, rel=1e-8):
    return refcheck.close(x, y, rel=rel, abs_=rel)


def check_all(ref, source):
    for c in ref["t_quantile"]:
        t = covariate.t_quantile(c["p"], c["df"])
        check(f"{source}: t quantile p={c['p']} df={c['df']}", close(t, c["t"]), f"ours {t:.12g}, reference {c['t']:.12g}")
    for i, c in enumerate(ref["adjusted_ratio"]):
        got = covariate.adjusted_ratio(c["ref_y"], c["ref_x"], c["y"], c["x"])
        for k in ("ratio", "lo", "hi", "slope", "sd_adj", "df"):
            check(f"{source}: adjusted ratio case {i} ({len(c['ref_y'])} + {len(c['y'])}): {k}",
                  got is not None and close(got[k], c[k]), f"ours {got and got[k]}, reference {c[k]}")


if "--live" in sys.argv:
    try:
        import scipy  # noqa: F401
    except ImportError:
        print("SKIP scipy not importable: no live reference")
        sys.exit(77)
    check_all(gen.reference(), "live")
else:
    with open(gen.FIXTURE) as f:
        check_all(json.load(f), "stored")
    check("the stored cases are the generator's", [c["ref_x"] for c in json.load(open(gen.FIXTURE))["adjusted_ratio"]]
          == [c["ref_x"] for c in gen.cases()[1]])
    check("one process a side: no interval", covariate.adjusted_ratio([1.0], [2.0], [1.0, 2.0], [2.0, 3.0]) is None)
    check("a probe that does not vary: no interval",
          covariate.adjusted_ratio([1.0, 1.1], [5.0, 5.0], [1.2, 1.3], [5.0, 5.0]) is None)
    wide = covariate.adjusted_ratio([1.0, 1.3], [5.0, 5.001], [1.2, 1.0], [6.0, 6.001])
    check("a probe that nearly tells the sides apart: an interval open above, not a crash",
          wide is not None and wide["hi"] == math.inf and wide["lo"] >= 0, str(wide))
    try:
        covariate.adjusted_ratio([1.0, 1.1], [5.0], [1.2, 1.3], [5.0, 6.0])
        check("a missing covariate value is refused", False)
    except ValueError:
        check("a missing covariate value is refused", True)
print(f"test_covariate: {refcheck.failures} failed")
sys.exit(1 if refcheck.failures else 0)
