"""What the reference tests of the vramlab package (test_reference.py, test_covariate.py)
share: the module path, one printed line per check, a failure count, and closeness of a
computed value to a reference one."""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))  # the vramlab package
sys.path.insert(0, HERE)

failures = 0


def check(what, ok, detail=""):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail else ''}")
    failures += not ok


def close(x, y, rel=1e-9, abs_=1e-12):
    return x is not None and y is not None and abs(x - y) <= max(abs_, rel * max(abs(x), abs(y)))
