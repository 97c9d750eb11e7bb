"""Loads a PyTorch memory snapshot pickle without running anything it holds.

A snapshot (torch.cuda.memory._snapshot() / _dump_snapshot()) is plain data: dicts,
lists, tuples, strings, bytes, ints, floats, bools and None. pickle.load would also
import and call whatever a crafted file names (GLOBAL + REDUCE: os.system, ...), so
every reader of snapshots (scripts/torch-snapshot-to-csv, and through it replay and
record_traces.py) loads them here instead:

  1. every opcode of the stream is checked against the plain-data opcodes below before
     anything is built (pickletools reads, it never executes), so GLOBAL, REDUCE,
     BUILD, INST, OBJ, NEWOBJ, extension and persistent-id opcodes are refused with
     their byte offset;
  2. the unpickler that then builds the data refuses every class lookup as well, so a
     gap in (1) still imports nothing.

Inputs larger than MAX_BYTES (or $VRAMLAB_SNAPSHOT_MAX_BYTES) are refused before they
are read whole.
"""
import io
import os
import pickle
import pickletools
import sys

MAX_BYTES = 4 << 30  # 4 GiB: a day of recorded history is well under 1 GiB

# Opcodes that build only the plain types of a snapshot, or manage the stack and memo.
PLAIN_OPCODES = frozenset((
    "PROTO", "FRAME", "STOP", "MARK", "POP", "POP_MARK", "DUP",
    "PUT", "BINPUT", "LONG_BINPUT", "GET", "BINGET", "LONG_BINGET", "MEMOIZE",
    "NONE", "NEWTRUE", "NEWFALSE",
    "INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT",
    "STRING", "BINSTRING", "SHORT_BINSTRING",
    "UNICODE", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8",
    "BINBYTES", "SHORT_BINBYTES", "BINBYTES8",
    "EMPTY_LIST", "APPEND", "APPENDS", "LIST",
    "EMPTY_TUPLE", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3",
    "EMPTY_DICT", "DICT", "SETITEM", "SETITEMS",
))


class SnapshotError(Exception):
    """The input is not a plain snapshot pickle; str() is one line."""


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise SnapshotError(f"refuses to import {module}.{name} (a snapshot holds only plain data)")

    def persistent_load(self, pid):
        raise SnapshotError("refuses a persistent id (a snapshot holds only plain data)")


def max_bytes():
    env = os.environ.get("VRAMLAB_SNAPSHOT_MAX_BYTES", "")
    if env:
        try:
            return max(0, int(env))
        except ValueError:
            raise SnapshotError(f"VRAMLAB_SNAPSHOT_MAX_BYTES={env!r} is not a number of bytes")
    return MAX_BYTES


def _read_limited(f, limit):
    data = f.read(limit + 1)
    if len(data) > limit:
        raise SnapshotError(f"larger than {limit} bytes (the limit; set VRAMLAB_SNAPSHOT_MAX_BYTES to raise it)")
    return data


def check_opcodes(data):
    """Raises SnapshotError at the first opcode that is not plain data."""
    try:
        for op, arg, pos in pickletools.genops(data):
            if op.name not in PLAIN_OPCODES:
                what = f" ({' '.join(str(arg).split())[:60]})" if isinstance(arg, str) else ""
                raise SnapshotError(f"opcode {op.name}{what} at byte {pos} is refused "
                                    "(a snapshot holds only dicts, lists, strings and numbers)")
    except SnapshotError:
        raise
    except Exception as e:  # pickletools: truncated or corrupt stream
        raise SnapshotError(f"not a pickle: {' '.join(str(e).split())}")


def loads(data):
    """The plain data of a pickle held in bytes, or SnapshotError."""
    check_opcodes(data)
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except SnapshotError:
        raise
    except Exception as e:  # corrupt data the opcode scan let through (bad memo index, ...)
        raise SnapshotError(f"not a pickle: {type(e).__name__}: {' '.join(str(e).split())}")


def load(f):
    """Reads a binary file object whole (up to the limit) and returns its plain data."""
    return loads(_read_limited(f, max_bytes()))


def load_path(path):
    """'-' reads standard input. OSError and SnapshotError propagate."""
    if path == "-":
        return load(sys.stdin.buffer)
    with open(path, "rb") as f:
        return load(f)
