"""Converts a PyTorch memory snapshot into vramlab's torch-csv trace format.

Input: a pickle written by torch.cuda.memory._dump_snapshot(path), or of the dict that
torch.cuda.memory._snapshot() returns; only the standard library is needed, and
vramlab/torch/snapshot_load.py refuses anything but plain data within its limits.
Output: CSV with the header `action,addr,size,stream,time_us`, one line per entry of
snapshot["device_traces"][DEVICE] (bench/replay --format torch-csv), by default made
self-consistent for replay. docs/benchmarks.md, section "scripts/torch-snapshot-to-csv",
has the details.

Exit status: 0, 2 on a bad command line, an unreadable/unexpected input file or a
refused output (one line on stderr, never a traceback)."""
import argparse
import csv
import sys

from vramlab import outputs
from vramlab.torch import snapshot_load

BLOCK_ACTIONS = ("alloc", "free_requested", "free_completed")
SEGMENT_ACTIONS = ("segment_alloc", "segment_free", "segment_map", "segment_unmap")
OTHER_ACTIONS = ("snapshot", "oom")


def fail(msg):
    one_line = " ".join(str(msg).split())  # exception texts may span lines
    print(f"torch-snapshot-to-csv: {one_line}", file=sys.stderr)
    sys.exit(2)


def load_traces(path):
    try:
        snap = snapshot_load.load_path(path)
    except (OSError, snapshot_load.SnapshotError) as e:
        fail(f"{path}: cannot read a snapshot pickle: {e}")
    if not isinstance(snap, dict) or "device_traces" not in snap:
        fail(f"{path}: not a PyTorch memory snapshot (no 'device_traces'; was history recorded?)")
    traces = snap["device_traces"]
    if not isinstance(traces, list):
        fail(f"{path}: 'device_traces' is not a list")
    return traces


def pick_device(traces, device, path):
    if device is not None:
        if device < 0 or device >= len(traces):
            fail(f"{path}: no device {device} (the snapshot has {len(traces)})")
        return device
    busy = [i for i, t in enumerate(traces) if t]
    if not busy:
        fail(f"{path}: every device trace is empty")
    if len(busy) > 1:
        fail(f"{path}: devices {busy} have traces: choose one with --device")
    return busy[0]


def field(e, key, where):
    """An entry's integer field (0 when absent, as PyTorch leaves some out)."""
    v = e.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        # A scalar's first characters only; a container by its type alone: shared
        # references make its text exponential in the pickle's size.
        shown = f" {str(v[:40] if isinstance(v, (str, bytes)) else v)[:40]!r}" \
            if isinstance(v, (str, bytes, int, float, type(None))) else ""
        fail(f"{where}: '{key}' is {type(v).__name__}{shown}, not a non-negative integer")
    return v


def convert(entries, keep_actions, keep_unmatched, where):
    """Returns the rows (action, addr, size, stream, time_us) and how many frees were dropped."""
    live = set()  # addresses allocated inside the trace whose free has not completed
    dropped = 0
    out = []
    if not isinstance(entries, list):
        fail(f"{where} is {type(entries).__name__}, not a list of entries")
    for i, e in enumerate(entries):
        at = f"{where}[{i}]"
        if not isinstance(e, dict):
            fail(f"{at} is {type(e).__name__}, not an entry (a dict)")
        action = e.get("action")
        if not isinstance(action, str):
            fail(f"{at}: 'action' is {type(action).__name__}, not a string")
        if action not in keep_actions:
            continue
        addr, size = field(e, "addr", at), field(e, "size", at)
        if action == "alloc":
            live.add(addr)
        elif action == "free_requested":
            if addr not in live and not keep_unmatched:
                dropped += 1
                continue
        elif action == "free_completed":
            if addr not in live and not keep_unmatched:
                dropped += 1
                continue
            live.discard(addr)
        out.append((action, addr, size, field(e, "stream", at), field(e, "time_us", at)))
    return out, dropped


def write_csv(f, rows):
    w = csv.writer(f, lineterminator="\n")
    w.writerow(("action", "addr", "size", "stream", "time_us"))
    w.writerows(rows)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, as every other failure
        fail(f"{message} (see --help)")


def main():
    ap = Parser(description=__doc__.splitlines()[0],
                epilog=f"A snapshot is refused past these limits: {snapshot_load.LIMITS}. "
                "Put -- before a snapshot whose name starts with -.")
    ap.add_argument("snapshot", help="snapshot pickle, or - for standard input")
    ap.add_argument("-o", "--output", default="-", help="CSV file (default: standard output)")
    ap.add_argument("--device", type=int, default=None,
                    help="CUDA device whose trace to convert (default: the only one with entries)")
    ap.add_argument("--all-actions", action="store_true", help="keep snapshot and oom entries too")
    ap.add_argument("--keep-unmatched", action="store_true",
                    help="keep frees of blocks allocated before the trace began")
    ap.add_argument("--limit", type=int, default=0, help="keep only the first N lines (0: all)")
    args = ap.parse_args()
    if args.limit < 0:
        fail("--limit must be >= 0")
    try:
        outputs.check_output(args.output, inputs=[args.snapshot])  # before the work, and again to write
    except outputs.OutputError as e:
        fail(f"-o {e}")

    traces = load_traces(args.snapshot)
    dev = pick_device(traces, args.device, args.snapshot)
    keep = set(BLOCK_ACTIONS + SEGMENT_ACTIONS + (OTHER_ACTIONS if args.all_actions else ()))
    rows, dropped = convert(traces[dev], keep, args.keep_unmatched, f"{args.snapshot}: device_traces[{dev}]")
    if args.limit:
        rows = rows[: args.limit]

    try:
        with outputs.open_output(args.output, inputs=[args.snapshot], newline="") as f:
            write_csv(f, rows)
    except outputs.OutputError as e:
        fail(f"-o {e}")
    except OSError as e:
        fail(f"{args.output}: {e}")
    if dropped:
        print(f"torch-snapshot-to-csv: dropped {dropped} frees of blocks allocated before the trace began",
              file=sys.stderr)


def run():
    """main, with running out of memory a refusal of one line as any other."""
    try:
        main()
    except MemoryError:
        fail("out of memory")


if __name__ == "__main__":
    run()
