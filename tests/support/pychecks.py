"""The check counter of the Python tests: check() counts a check and prints FAIL with its
detail when it does not hold, skip() says a check that cannot run here; counts() gives
(checks, failures, skips) for the test's last line, which scripts/run-tests.sh reads."""

_checks = _failures = _skips = 0


def check(what, ok, detail=""):
    global _checks, _failures
    _checks += 1
    if not ok:
        _failures += 1
        print(f"FAIL {what}: {detail}")


def skip(what, why):
    """A check that cannot run here: said, and counted apart from the passes."""
    global _skips
    _skips += 1
    print(f"SKIP {what}: {why}")


def counts():
    return _checks, _failures, _skips
