#!/usr/bin/env python3
"""Checks scripts/torch-snapshot-to-csv on synthetic snapshots (no torch, no GPU):
the header, the order, action filtering, dropping frees of blocks allocated before
the trace, --limit, device choice, and one-line errors with exit 2 on bad input.
Run by `make test-torch-snapshot` (mk/torch.mk). Exit 0 passed, 1 failed."""
import os
import pickle
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "torch-snapshot-to-csv")
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


failures = 0


def check(name, cond, detail=""):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL {name} {detail}")
    else:
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

print(f"{'FAILED' if failures else 'passed'}: {failures} failure(s)")
sys.exit(1 if failures else 0)
