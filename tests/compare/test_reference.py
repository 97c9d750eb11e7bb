#!/usr/bin/env python3
"""Checks vramlab/rankstats.py against reference values from scipy and brute
force (tests/compare/gen_reference.py): always against the stored tests/compare/
reference.json, and with --live against values computed afresh with scipy, which
must then be importable (run.sh picks a python3 that has it, or reports the skip).
One line per check; exit 1 when one fails, 77 when --live finds no scipy."""
import json
import math
import sys

import refcheck  # noqa: E402  (sets the path to the vramlab package)
import gen_reference  # noqa: E402
from vramlab import rankstats  # noqa: E402
from refcheck import check, close  # noqa: E402


def check_all(ref, source):
    for i, c in enumerate(ref["mann_whitney_exact"]):
        p = rankstats.mann_whitney(c["a"], c["b"])
        check(f"{source}: exact Mann-Whitney p, case {i} ({len(c['a'])} vs {len(c['b'])})", close(p, c["p"]),
              f"ours {p:.10g}, reference {c['p']:.10g}")
    for i, c in enumerate(ref["mann_whitney_asymptotic"]):
        p = rankstats.mann_whitney(c["a"], c["b"])
        check(f"{source}: asymptotic Mann-Whitney p with ties, case {i} ({len(c['a'])} vs {len(c['b'])})",
              close(p, c["p"], rel=1e-7), f"ours {p:.10g}, reference {c['p']:.10g}")
    for i, c in enumerate(ref["hodges_lehmann"]):
        est, lo, hi = rankstats.hodges_lehmann(c["a"], c["b"], c["alpha"])
        ok = close(est, c["estimate"]) and (
            (c["low"] is None and math.isinf(lo) and math.isinf(hi)) or (close(lo, c["low"]) and close(hi, c["high"])))
        check(f"{source}: Hodges-Lehmann shift and interval, case {i} ({len(c['a'])} vs {len(c['b'])})", ok,
              f"ours {est:.6g} [{lo:.6g}, {hi:.6g}], reference {c['estimate']:.6g} [{c['low']}, {c['high']}]")
    for i, c in enumerate(ref["benjamini_hochberg"]):
        q = rankstats.benjamini_hochberg(c["p"])
        if "q" in c:
            check(f"{source}: Benjamini-Hochberg q-values, case {i}", all(close(x, y) for x, y in zip(q, c["q"])),
                  f"ours {q}, reference {c['q']}")
        for alpha, rejected in c["rejected"].items():
            ours = sorted(k for k, x in enumerate(q) if x <= float(alpha))
            check(f"{source}: Benjamini-Hochberg step-up decisions, case {i}, alpha {alpha}", ours == rejected,
                  f"ours {ours}, reference {rejected}")


def main(argv):
    with open(gen_reference.FIXTURE) as f:
        stored = json.load(f)
    check_all(stored, f"stored ({stored.get('generated_with', '?')})")
    if "--live" in argv:
        try:
            import scipy
        except ImportError:
            print("SKIP: live check: scipy is not importable by this python3 (apt-get install python3-scipy)")
            return 77
        live = gen_reference.reference(gen_reference.cases())
        check("live: the stored reference is what scipy computes now", all(
            close(x, y, rel=1e-7) if isinstance(x, float) else True
            for k in ("mann_whitney_exact", "mann_whitney_asymptotic")
            for x, y in ((c["p"], s["p"]) for c, s in zip(live[k], stored[k]))))
        check_all(live, f"live (scipy {scipy.__version__})")
    print(f"test_reference: {'passed' if not refcheck.failures else f'{refcheck.failures} failure(s)'}")
    return 1 if refcheck.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
