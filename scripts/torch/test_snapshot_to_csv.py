#!/usr/bin/env python3
"""Checks scripts/torch-snapshot-to-csv on synthetic snapshots (no torch, no GPU):
the header, the order, action filtering, dropping frees of blocks allocated before
the trace, --limit, device choice, one-line errors with exit 2 on bad input (no
traceback on a malformed entry), and that a malicious pickle (os.system, subprocess,
builtins.eval, alone or hidden in a valid snapshot) runs nothing through the converter,
its standard input, record_traces.py's folder conversion, or bench/replay when built.
Run by `make test-torch-snapshot` (mk/torch.mk). Exit 0 passed, 1 failed."""
import os
import pickle
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "scripts", "torch-snapshot-to-csv")
REPLAY = os.path.join(ROOT, "build", "bin", "replay")
HEADER = "action,addr,size,stream,time_us"


def entry(action, addr, size, t, stream=0):
    return {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": t, "frames": []}


TRACE = [
    entry("free_requested", 999, 512, 1), entry("free_completed", 999, 512, 2),   # before the trace
    entry("segment_alloc", 4096, 2097152, 3), entry("alloc", 4096, 512, 4, stream=7),
    entry("snapshot", 0, 0, 5), entry("free_requested", 4096, 512, 6, stream=7),
    entry("free_completed", 4096, 512, 7, stream=7), entry("oom", 0, 1 << 40, 8),
    entry("segment_free", 4096, 2097152, 9),
]


def run(snapshot, *args):
    with tempfile.NamedTemporaryFile(suffix=".pickle", delete=False) as f:
        if isinstance(snapshot, bytes):
            f.write(snapshot)
        else:
            pickle.dump(snapshot, f)
    try:
        p = subprocess.run([sys.executable, TOOL, f.name, *args], capture_output=True, text=True)
        return p.returncode, p.stdout.splitlines(), p.stderr
    finally:
        os.unlink(f.name)


failures = passes = 0


def check(name, cond, detail=""):
    global failures, passes
    if not cond:
        failures += 1
        print(f"FAIL {name} {detail}")
    else:
        passes += 1
        print(f"ok   {name}")


rc, lines, err = run({"segments": [], "device_traces": [TRACE]})
check("exit 0", rc == 0, err)
check("header", lines[:1] == [HEADER], lines[:1])
check("default rows", lines[1:] == ["segment_alloc,4096,2097152,0,3", "alloc,4096,512,7,4",
                                    "free_requested,4096,512,7,6", "free_completed,4096,512,7,7",
                                    "segment_free,4096,2097152,0,9"], lines)
check("dropped frees counted", "dropped 2 frees" in err, err)

rc, lines, err = run({"device_traces": [TRACE]}, "--all-actions", "--keep-unmatched")
check("all actions kept", len(lines) == 1 + len(TRACE) and lines[1].startswith("free_requested,999"), lines)

rc, lines, _ = run({"device_traces": [TRACE]}, "--limit", "2")
check("--limit", lines == [HEADER, "segment_alloc,4096,2097152,0,3", "alloc,4096,512,7,4"], lines)

rc, lines, err = run({"device_traces": [[], TRACE]})
check("picks the only busy device", rc == 0 and lines[1] == "segment_alloc,4096,2097152,0,3", err)
rc, lines, err = run({"device_traces": [TRACE, TRACE]})
check("two busy devices need --device", rc == 2 and "--device" in err, err)
rc, lines, err = run({"device_traces": [TRACE, []]}, "--device", "1")
check("an empty device gives only the header", rc == 0 and lines == [HEADER], lines)

rc, lines, err = run({"segments": []})
check("no device_traces: exit 2", rc == 2 and len(err.strip().splitlines()) == 1, err)
rc, lines, err = run(b"not a pickle")
check("garbage: exit 2, one line", rc == 2 and len(err.strip().splitlines()) == 1, err)

# --- malformed entries: one line, exit 2, no traceback ---------------------------------
for bad, what in (([TRACE[2], "not a dict"], "an entry that is a string"),
                  ([entry("alloc", "0x10", 512, 1)], "an address that is a string"),
                  ([entry("alloc", 16, -5, 1)], "a negative size"),
                  ([dict(entry("alloc", 16, 5, 1), action=["alloc"])], "an action that is a list"),
                  ("not a list", "device trace that is a string")):
    rc, lines, err = run({"device_traces": [bad]})
    check(f"malformed entry ({what}): exit 2, one line, no traceback",
          rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err)

# --- malicious pickles: nothing runs through any entry point ---------------------------
scratch = tempfile.mkdtemp()
MARK = os.path.join(scratch, "PWNED")


class Reduce:
    """Pickles as a call of fn(*args) (GLOBAL/STACK_GLOBAL + REDUCE)."""
    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


import builtins  # noqa: E402
import subprocess as sp  # noqa: E402

touch = f"touch {MARK}"
EVIL = {
    "os.system": pickle.dumps(Reduce(os.system, touch)),
    "subprocess.call": pickle.dumps(Reduce(sp.call, ["touch", MARK])),
    "builtins.eval": pickle.dumps(Reduce(builtins.eval, f"__import__('os').system({touch!r})")),
    "protocol 0 GLOBAL": f"cos\nsystem\n(S'{touch}'\ntR.".encode(),
    "hidden in a valid snapshot": pickle.dumps({"segments": [], "device_traces": [TRACE + [Reduce(os.system, touch)]]}),
    "hidden in a frame": pickle.dumps({"device_traces": [[dict(TRACE[3], frames=[Reduce(os.system, touch)])]]}),
    "BUILD on a dict": b"\x80\x02}q\x00}q\x01X\x01\x00\x00\x00aK\x01sb.",
}


def no_mark(name, rc, err):
    check(f"{name}: refused with one line, nothing ran",
          rc != 0 and not os.path.exists(MARK) and len(err.strip().splitlines()) == 1 and "Traceback" not in err,
          f"rc={rc} mark={os.path.exists(MARK)} err={err!r}")
    if os.path.exists(MARK):
        os.unlink(MARK)


for name, data in EVIL.items():
    rc, _, err = run(data)
    no_mark(f"converter: {name}", rc, err)
    p = subprocess.run([sys.executable, TOOL, "-"], input=data, capture_output=True)
    no_mark(f"converter stdin: {name}", p.returncode, p.stderr.decode())

# record_traces.py's folder conversion (the same converter, the same loader).
sys.path.insert(0, HERE)
import record_traces  # noqa: E402
folder = os.path.join(scratch, "traces")
os.makedirs(folder)
with open(os.path.join(folder, "evil.pickle"), "wb") as f:
    f.write(EVIL["hidden in a valid snapshot"])
with open(os.path.join(folder, "good.pickle"), "wb") as f:
    pickle.dump({"device_traces": [TRACE]}, f)
failed = record_traces.convert_folder(folder, None)
check("record_traces: the evil snapshot fails, runs nothing; the good one converts",
      failed == 1 and not os.path.exists(MARK) and not os.path.exists(os.path.join(folder, "evil.csv"))
      and open(os.path.join(folder, "good.csv")).readline().strip() == HEADER, f"failed={failed}")

# bench/replay: a file (whatever its name) and standard input, where it is built.
if os.access(REPLAY, os.X_OK):
    good = pickle.dumps({"device_traces": [TRACE]})
    for name, data in EVIL.items():
        for trace_name in ("evil.pickle", "trace.csv"):
            path = os.path.join(scratch, trace_name)
            with open(path, "wb") as f:
                f.write(data)
            p = subprocess.run([REPLAY, "--device", "sim", "--quick", "--trace", path, "-o", "-"],
                               capture_output=True, text=True)
            no_mark(f"replay --trace {trace_name}: {name}", p.returncode, p.stderr)
        p = subprocess.run([REPLAY, "--device", "sim", "--quick", "--trace", "-", "-o", "-"], input=data,
                           capture_output=True)
        no_mark(f"replay --trace -: {name}", p.returncode, p.stderr.decode())
    p = subprocess.run([REPLAY, "--device", "sim", "--quick", "--trace", "-", "-o", "-"], input=good,
                       capture_output=True)
    check("replay: a benign snapshot still replays", p.returncode == 0 and b"pass," in p.stdout, p.stderr)
    # A fake converter in the working directory is never run.
    fake = os.path.join(scratch, "cwd", "scripts")
    os.makedirs(fake)
    with open(os.path.join(fake, "torch-snapshot-to-csv"), "w") as f:
        f.write(f"#!/bin/sh\ntouch {MARK}\nexit 0\n")
    os.chmod(os.path.join(fake, "torch-snapshot-to-csv"), 0o755)
    with open(os.path.join(scratch, "good.pickle"), "wb") as f:
        f.write(good)
    env = {k: v for k, v in os.environ.items() if k != "VRAMLAB_TORCH_CONVERTER"}
    p = subprocess.run([REPLAY, "--device", "sim", "--quick", "--trace", os.path.join(scratch, "good.pickle"),
                        "-o", "-"], cwd=os.path.dirname(fake), capture_output=True, text=True, env=env)
    check("replay from a folder with a fake converter: the real one runs", p.returncode == 0
          and not os.path.exists(MARK), p.stderr)
else:
    print(f"SKIP replay checks: {REPLAY} is not built (make programs)")

# --- the loader under mutation: plain data or SnapshotError, nothing ever called -------
# Seeded, VL_FUZZ_SNAPSHOT_RUNS mutations (default 3000; `make proptest`-style long runs
# set more). Mutations flip bytes, truncate, and splice in the opcodes that import, call
# or build objects; every attempt to run something is caught by stubs of os.system and
# subprocess (the payloads' targets), and every result must be made of the plain types.
import random  # noqa: E402
import snapshot_load  # noqa: E402

PLAIN = (dict, list, tuple, str, bytes, int, float, bool, type(None))
DANGEROUS = [b"c", b"\x93", b"R", b"b", b"i", b"o", b"\x81", b"\x92", b"\x82", b"\x83", b"\x84", b"P", b"Q",
             b"cos\nsystem\n", b"\x8c\x02os\x8c\x06system\x93", b"cbuiltins\neval\n", b"\x97", b"\x98"]


def plain(v, depth=0):
    if depth > 200 or not isinstance(v, PLAIN):
        return depth > 200
    if isinstance(v, dict):
        return all(plain(k, depth + 1) and plain(x, depth + 1) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return all(plain(x, depth + 1) for x in v)
    return True


def mutate(rng, data):
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(4)
        pos = rng.randrange(len(b) + 1)
        if kind == 0 and b:
            b[min(pos, len(b) - 1)] = rng.randrange(256)
        elif kind == 1:
            b[pos:pos] = rng.choice(DANGEROUS)
        elif kind == 2:
            del b[pos:]
        else:
            b[pos:pos] = rng.choice(list(EVIL.values()))[: rng.randint(1, 40)]
    return bytes(b)


called = []
saved = (os.system, sp.call, sp.run, sp.Popen)
os.system = sp.call = sp.run = sp.Popen = lambda *a, **k: called.append(a)  # eval's payload calls os.system
rng = random.Random(20240601)
seeds = [pickle.dumps({"device_traces": [TRACE]}, protocol=p) for p in range(6)] + list(EVIL.values())
bad = []
runs = int(os.environ.get("VL_FUZZ_SNAPSHOT_RUNS", "3000"))
for n in range(runs):
    data = mutate(rng, rng.choice(seeds))
    try:
        if not plain(snapshot_load.loads(data)):
            bad.append((data, "not plain data"))
    except snapshot_load.SnapshotError as e:
        if "\n" in str(e):
            bad.append((data, "a message of several lines"))
    except Exception as e:  # anything else escaped the loader
        bad.append((data, f"{type(e).__name__}: {e}"))
os.system, sp.call, sp.run, sp.Popen = saved
check(f"loader fuzz: {runs} mutated pickles, only plain data or one-line SnapshotError", not bad,
      bad[0] if bad else "")
check("loader fuzz: nothing was called", not called, called[:3])

import shutil  # noqa: E402
shutil.rmtree(scratch, ignore_errors=True)

# scripts/run-tests.sh reads this line's counts.
print(f"test-torch-snapshot: {passes} passed, {failures} failed, 0 skipped")
sys.exit(1 if failures else 0)
