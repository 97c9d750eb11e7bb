#!/usr/bin/env python3
"""Checks scripts/torch-snapshot-to-csv on synthetic snapshots (no torch, no GPU):
the header, the order, action filtering, dropping frees of blocks allocated before
the trace, --limit, device choice, one-line errors with exit 2 on bad input (no
traceback on a malformed entry), that a malicious pickle (os.system, subprocess,
builtins.eval, alone or hidden in a valid snapshot) runs nothing through the converter,
its standard input, record_traces's folder conversion, or bench/replay when built,
that hostile pickles (memo indexes, shared or deep nesting, huge integers) fail in one
line within seconds under a 2 GB address space, that names like "-o" stay file names,
and the output rules of vramlab/outputs.py.
Run by `make test-torch-snapshot` (mk/torch.mk). Exit 0 passed, 1 failed."""
import os
import pickle
import resource
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "scripts", "torch-snapshot-to-csv")
REPLAY = os.path.join(ROOT, "build", "bin", "replay")
sys.path.insert(0, os.path.join(ROOT, "scripts"))  # the vramlab package, as the converter's launcher has it
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


AS_LIMIT = 2_000_000 * 1024  # ulimit -v 2000000


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def run(snapshot, *args, limited=False):
    """The converter on a snapshot (a pickled object, or bytes as they are); limited: under
    a 2 GB address space and 10 s (a timeout is rc 124)."""
    with tempfile.NamedTemporaryFile(suffix=".pickle", delete=False) as f:
        if isinstance(snapshot, bytes):
            f.write(snapshot)
        else:
            pickle.dump(snapshot, f)
    try:
        p = subprocess.run([sys.executable, TOOL, *args, "--", f.name], capture_output=True, text=True,
                           preexec_fn=limit_memory if limited else None, timeout=10 if limited else None)
        return p.returncode, p.stdout.splitlines(), p.stderr
    except subprocess.TimeoutExpired:
        return 124, [], "timed out after 10 s"
    finally:
        os.unlink(f.name)


def one_line(err):
    return len(err.strip().splitlines()) == 1 and "Traceback" not in err


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

# record_traces's folder conversion (the same converter, the same loader).
from vramlab.torch import record_traces  # noqa: E402
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

# --- hostile pickles: one line, exit 2, within 10 s, under a 2 GB address space -------
def with_size(value_ops, proto=2):
    """A valid snapshot pickle whose one entry's 'size' is the value value_ops builds."""
    data = pickle.dumps({"device_traces": [[entry("alloc", 16, "@@SIZE@@", 1)]]}, protocol=proto)
    placeholder = b"X\x08\x00\x00\x00@@SIZE@@"
    assert data.count(placeholder) == 1
    return data.replace(placeholder, value_ops)


def shared(levels):
    x = [1]
    for _ in range(levels):
        x = [x, x]
    return x


def long_binget(i):
    return b"j" + i.to_bytes(4, "little")


def long_binput(i):
    return b"r" + i.to_bytes(4, "little")


N = 100_000
HOSTILE = {
    "LONG_BINPUT 0x04000000 (a 1 GiB memo)": b"\x80\x02]r\x00\x00\x00\x04.",
    "LONG_BINPUT 0xffffffff (a 64 GiB memo)": b"\x80\x02]r\xff\xff\xff\xff.",
    "BINPUT 200 on an empty memo": b"\x80\x02]q\xc8.",
    "text PUT 10^9": b"(lp1000000000\n.",
    "GET of an index never stored": b"\x80\x02" + long_binget(1 << 26) + b".",
    "a size that is a list shared 39 levels deep": pickle.dumps(
        {"device_traces": [[entry("alloc", 16, shared(39), 1)]]}, protocol=2),
    "the same, protocol 0": pickle.dumps({"device_traces": [[entry("alloc", 16, shared(39), 1)]]}, protocol=0),
    # By hand: building that dict here would hash the key, 2^39 steps.
    "a dict key that is a tuple shared 39 levels deep": b"\x80\x02}K\x01\x85" + long_binput(0) + b"0" + b"".join(
        long_binget(i) * 2 + b"\x86" + long_binput(i + 1) + b"0" for i in range(39)) + long_binget(39) + b"K\x01s.",
    "a list 100k deep": b"\x80\x02" + b"]" * N + b"a" * (N - 1) + b".",
    "a size that is a list 100k deep": with_size(b"]" * N + b"a" * (N - 1)),
    "100k open MARKs": b"\x80\x02" + b"(" * N + b".",
    "100k nested lists through the memo (a short stack)": b"\x80\x02]" + long_binput(0) + b"".join(
        b"]" + long_binget(i - 1) + b"a" + long_binput(i) for i in range(1, N)) + b".",
    "a list inside itself": b"\x80\x02]q\x00h\x00a.",
    "a list changed after it was nested": b"\x80\x02]q\x00]h\x00aq\x01h\x00K\x01a.",
    "an addr of 5,000 digits (LONG4)": pickle.dumps({"device_traces": [[entry("alloc", 10 ** 5000, 1, 1)]]},
                                                    protocol=2),
    "an addr of 5,000 digits (text LONG)": b"(dp0\nVaddr\np1\nL" + b"9" * 5000 + b"L\ns.",
    "an INT of 5,000 digits": b"I" + b"9" * 5000 + b"\n.",
    "a LONG4 of 2^31 - 1 bytes": b"\x80\x02\x8b\xff\xff\xff\x7f" + b"\x00" * 16 + b".",
    "a BINUNICODE8 of 2^62 bytes": b"\x80\x04\x8d" + (1 << 62).to_bytes(8, "little") + b"abc.",
    "a FRAME of 2^62 bytes": b"\x80\x04\x95" + (1 << 62).to_bytes(8, "little") + b"N.",
    "a dict with an odd number of items": b"(K\x01d.",
}
for name, data in HOSTILE.items():
    rc, lines, err = run(data, limited=True)
    check(f"hostile: {name}: exit 2, one line, bounded", rc == 2 and one_line(err), f"rc={rc} err={err[-300:]!r}")

rc, lines, err = run({"segments": [], "device_traces": [TRACE]}, limited=True)
check("a valid snapshot converts under a 2 GB address space", rc == 0 and len(lines) == 6, err)
p = subprocess.run([sys.executable, TOOL, "--", "-"], input=pickle.dumps({"device_traces": [TRACE * 5000]}),
                   capture_output=True, preexec_fn=limit_memory, timeout=60)
check("a valid snapshot on standard input, under 2 GB", p.returncode == 0 and p.stdout.count(b"\n") == 1 + 5 * 5000,
      p.stderr)
small_env = dict(os.environ, VRAMLAB_SNAPSHOT_MAX_BYTES="100")
p = subprocess.run([sys.executable, TOOL, "--", "-"], input=pickle.dumps({"device_traces": [TRACE]}),
                   capture_output=True, text=False, env=small_env)
check("over VRAMLAB_SNAPSHOT_MAX_BYTES on standard input: refused", p.returncode == 2 and b"larger than 100" in p.stderr)
with tempfile.NamedTemporaryFile(suffix=".pickle") as f:
    pickle.dump({"device_traces": [TRACE]}, f)
    f.flush()
    p = subprocess.run([sys.executable, TOOL, "--", f.name], capture_output=True, text=True, env=small_env)
    check("over VRAMLAB_SNAPSHOT_MAX_BYTES in a file: refused", p.returncode == 2 and "larger than 100" in p.stderr
          and one_line(p.stderr), p.stderr)

# The limits at their edge, in the loader itself (no process per case).
from vramlab.torch import snapshot_load  # noqa: E402


def nested(levels):
    return b"\x80\x02" + b"]" * levels + b"a" * (levels - 1) + b"."


def refused(data, what):
    try:
        snapshot_load.loads(data)
    except snapshot_load.SnapshotError as e:
        return what in str(e)
    return False


check("loader: 64 levels load, 65 are refused", snapshot_load.loads(nested(64)) is not None
      and refused(nested(65), "nesting deeper than 64"))
check("loader: 2^256 - 1 loads, 2^256 is refused", snapshot_load.loads(pickle.dumps(2 ** 256 - 1)) == 2 ** 256 - 1
      and refused(pickle.dumps(2 ** 256), "256 bits") and refused(pickle.dumps(-2 ** 256, protocol=0), "256 bits"))
saved_max = snapshot_load.MAX_OBJECTS
snapshot_load.MAX_OBJECTS = 1000


def shared_refs(n):  # an empty list, then a list of n references to it: n + 2 pushes
    return b"\x80\x02]q\x00](" + b"h\x00" * n + b"e."


check("loader: objects counted, shared references each time (1,000 load, 1,001 refused)",
      snapshot_load.loads(b"\x80\x02](" + b"N" * 999 + b"e.") == [None] * 999
      and refused(b"\x80\x02](" + b"N" * 1000 + b"e.", "more than 1000 objects")
      and snapshot_load.loads(shared_refs(998)) == [[]] * 998 and refused(shared_refs(999), "more than 1000 objects"))
snapshot_load.MAX_OBJECTS = saved_max
check("loader: memo indexes in order (the next one, a stored one; never past them)",
      snapshot_load.loads(b"\x80\x02K\x01q\x00K\x02q\x01h\x00q\x00h\x00h\x01\x87.") == (1, 1, 2)
      and refused(b"\x80\x02K\x01q\x01.", "memo index 1 past the 0 stored"))
p = subprocess.run([sys.executable, TOOL, "--help"], capture_output=True, text=True)
check("--help states every limit", p.returncode == 0 and all(
    w in " ".join(p.stdout.split()) for w in (f"{snapshot_load.MAX_BYTES} bytes", "VRAMLAB_SNAPSHOT_MAX_BYTES",
                                              "64 levels of nesting", f"{snapshot_load.MAX_OBJECTS} objects",
                                              "256 bits", "memo indexes", "Put --")), p.stdout)

# --- names that look like options stay file names ("--" before them) ------------------
good_snapshot = pickle.dumps({"device_traces": [TRACE]})
opt_dir = os.path.join(scratch, "optnames")
os.makedirs(opt_dir)
for name in ("--help", "-o"):
    with open(os.path.join(opt_dir, name), "wb") as f:
        f.write(good_snapshot)
    p = subprocess.run([sys.executable, TOOL, "-o", "out.csv", "--", name], cwd=opt_dir, capture_output=True, text=True)
    check(f"a snapshot named {name} converts after --", p.returncode == 0
          and open(os.path.join(opt_dir, "out.csv")).readline().strip() == HEADER, p.stderr)
os.makedirs(os.path.join(opt_dir, "-traces"))
with open(os.path.join(opt_dir, "-traces", "good.pickle"), "wb") as f:
    f.write(good_snapshot)
cwd = os.getcwd()
os.chdir(opt_dir)
try:
    failed = record_traces.convert_folder("-traces", None)
finally:
    os.chdir(cwd)
check("record_traces: a folder named -traces converts", failed == 0
      and os.path.exists(os.path.join(opt_dir, "-traces", "good.csv")), f"failed={failed}")
if os.access(REPLAY, os.X_OK):
    for name in ("--help", "-o"):
        p = subprocess.run([REPLAY, "--device", "sim", "--quick", "--trace", name, "-o", "-"], cwd=opt_dir,
                           capture_output=True, text=True)
        check(f"replay --trace {name}: the converter reads it as a file", p.returncode == 0 and "pass," in p.stdout,
              p.stderr)

# --- -o through vramlab/outputs.py ---------------------------------------------------
from vramlab import outputs  # noqa: E402
import socket  # noqa: E402
import threading  # noqa: E402

out_dir = os.path.join(scratch, "outputs")
os.makedirs(out_dir)
snap_path = os.path.join(out_dir, "t.pickle")
with open(snap_path, "wb") as f:
    f.write(good_snapshot)


def convert_to(output, snapshot=snap_path, stdin=None):
    p = subprocess.run([sys.executable, TOOL, "-o", output, "--", snapshot], stdin=stdin, capture_output=True,
                       text=True, timeout=30)
    return p.returncode, p.stderr


fifo = os.path.join(out_dir, "fifo")
os.mkfifo(fifo)
got = []
reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
reader.start()
rc, err = convert_to(fifo)
if reader.is_alive():  # the converter never opened it: release the reader
    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
reader.join()
check("-o FIFO: written in place, still a FIFO", rc == 0 and got and got[0].startswith(HEADER + "\n")
      and stat.S_ISFIFO(os.stat(fifo).st_mode), err)
rc, err = convert_to(os.devnull)
check("-o /dev/null: still a character device", rc == 0 and stat.S_ISCHR(os.stat(os.devnull).st_mode), err)
for name, output in (("the input", snap_path), ("a hard link to the input", os.path.join(out_dir, "hard")),
                     ("a symbolic link to the input", os.path.join(out_dir, "soft"))):
    if output.endswith("hard"):
        os.link(snap_path, output)
    elif output.endswith("soft"):
        os.symlink(snap_path, output)
    rc, err = convert_to(output)
    check(f"-o {name}: refused in one line, the input unchanged",
          rc == 2 and one_line(err) and open(snap_path, "rb").read() == good_snapshot, err)
csv_path = os.path.join(out_dir, "t.csv")
with open(csv_path, "wb") as f:
    f.write(good_snapshot)
with open(csv_path, "rb") as stdin:
    rc, err = convert_to(csv_path, "-", stdin)
check("-o t.csv < t.csv with input -: refused, t.csv unchanged",
      rc == 2 and "standard input" in err and one_line(err) and open(csv_path, "rb").read() == good_snapshot, err)
rc, err = convert_to(out_dir)
check("-o a folder: refused in one line", rc == 2 and one_line(err) and os.path.isdir(out_dir), err)
os.chmod(csv_path, 0o640)
rc, err = convert_to(csv_path)
left = sorted(n for n in os.listdir(out_dir) if n.startswith("."))
check("-o an existing file: replaced whole, its mode kept, no temporary left",
      rc == 0 and open(csv_path).readline().strip() == HEADER and stat.S_IMODE(os.stat(csv_path).st_mode) == 0o640
      and not left, f"{err} left={left}")
sock = socket.socket(socket.AF_UNIX)
sock_path = os.path.join(out_dir, "sock")
sock.bind(sock_path)
rc, err = convert_to(sock_path)
sock.close()
check("-o a socket: refused in one line", rc == 2 and one_line(err), err)


def output_error(*args, **kw):
    try:
        with outputs.open_output(*args, **kw) as f:
            f.write("x")
    except outputs.OutputError as e:
        return isinstance(e, ValueError) and "\n" not in str(e)
    return False


new = os.path.join(out_dir, "new.csv")
check("outputs: two outputs of one run that are one new path (spelled two ways): refused",
      output_error(new, others=[os.path.join(out_dir, "..", "outputs", "new.csv")]) and not os.path.exists(new))
check("outputs: two outputs that are one existing file (a hard link): refused",
      output_error(snap_path, others=[os.path.join(out_dir, "hard")]))
check("outputs: /dev/null twice is allowed", not output_error(os.devnull, others=[os.devnull]))
try:
    with outputs.open_output(csv_path) as f:
        f.write("partial")
        raise RuntimeError("interrupted")
except RuntimeError:
    pass
check("outputs: an exception in the block leaves the old file and no temporary",
      open(csv_path).readline().strip() == HEADER and not [n for n in os.listdir(out_dir) if n.startswith(".")])

# --- the loader under mutation: plain data or SnapshotError, nothing ever called -------
# Seeded, VL_FUZZ_SNAPSHOT_RUNS mutations (default 3000; `make proptest`-style long runs
# set more). Mutations flip bytes, truncate, and splice in the opcodes that import, call
# or build objects; every attempt to run something is caught by stubs of os.system and
# subprocess (the payloads' targets), and every result must be made of the plain types.
import random  # noqa: E402

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
