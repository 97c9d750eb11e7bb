"""Loads a PyTorch memory snapshot pickle without running anything it holds.

A snapshot (torch.cuda.memory._snapshot() / _dump_snapshot()) is plain data: dicts,
lists, tuples, strings, bytes, ints, floats, bools and None. pickle.load would also
import and call whatever a crafted file names (GLOBAL + REDUCE: os.system, ...), so
every reader of snapshots (scripts/torch-snapshot-to-csv, and through it replay and
vramlab.torch.record_traces) loads them here instead, in two passes: every opcode is
checked against the plain-data ones before anything is built, and the unpickler then
refuses every class lookup as well (docs/benchmarks.md, section
"vramlab/torch/snapshot_load.py", says how).

Inputs larger than MAX_BYTES (or $VRAMLAB_SNAPSHOT_MAX_BYTES) are refused before they
are read whole."""
import io
import os
import pickle
import pickletools
import stat
import sys

MAX_BYTES = 4 << 30  # 4 GiB: a day of recorded history is well under 1 GiB
# A snapshot nests 6-8 containers deep (snapshot, device_traces, a trace, an entry, its
# frames, a frame); deep nesting only serves to exhaust what walks the data.
MAX_DEPTH = 64
# Values pushed by the stream, shared ones (memo GET, DUP) counted each time: a
# snapshot pushes one per 5-15 bytes, 1 GiB of one about 10^8-2*10^8.
MAX_OBJECTS = 1 << 29
# Addresses, sizes, streams and times are 64-bit; an integer of thousands of digits
# only costs time (and str() of one over 4,300 digits raises).
MAX_INT_BITS = 256
MAX_INT_TEXT = 80  # characters of a text INT/LONG/GET/PUT argument: 78 digits, a sign, an L
LIMITS = (f"at most {MAX_BYTES} bytes (4 GiB; $VRAMLAB_SNAPSHOT_MAX_BYTES sets another), "
          f"{MAX_DEPTH} levels of nesting (containers, and open MARKs), {MAX_OBJECTS} objects (values pushed, "
          f"a shared one each time it is fetched), integers of {MAX_INT_BITS} bits ({MAX_INT_TEXT} characters "
          "as text), memo indexes in order (a PUT at most one past the entries stored, a GET of a stored one)")

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
_SCALAR_OPS = ("NONE", "NEWTRUE", "NEWFALSE", "BININT", "BININT1", "BININT2", "FLOAT", "BINFLOAT",
               "STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE",
               "BINUNICODE8", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8")
# What the opcode pass does with each opcode: its kind (an index into the branches of
# check_opcodes) and its argument reader.
(_REFUSED, _VALUE, _TEXT_INT, _BIN_INT, _PUT, _TEXT_PUT, _MEMOIZE, _GET, _TEXT_GET, _EMPTY, _APPEND, _APPENDS,
 _SETITEM, _SETITEMS, _MARK, _FROM_MARK, _TUPLE_N, _DUP, _POP, _POP_MARK, _FRAME, _STOP, _PROTO) = range(23)
_KIND = dict({n: _VALUE for n in _SCALAR_OPS}, INT=_TEXT_INT, LONG=_TEXT_INT, LONG1=_BIN_INT, LONG4=_BIN_INT,
             BINPUT=_PUT, LONG_BINPUT=_PUT, PUT=_TEXT_PUT, MEMOIZE=_MEMOIZE, BINGET=_GET, LONG_BINGET=_GET,
             GET=_TEXT_GET, EMPTY_LIST=_EMPTY, EMPTY_DICT=_EMPTY, EMPTY_TUPLE=_EMPTY, APPEND=_APPEND,
             APPENDS=_APPENDS, SETITEM=_SETITEM, SETITEMS=_SETITEMS, MARK=_MARK, LIST=_FROM_MARK,
             TUPLE=_FROM_MARK, DICT=_FROM_MARK, TUPLE1=_TUPLE_N, TUPLE2=_TUPLE_N, TUPLE3=_TUPLE_N, DUP=_DUP,
             POP=_POP, POP_MARK=_POP_MARK, FRAME=_FRAME, STOP=_STOP, PROTO=_PROTO)
assert set(_KIND) == PLAIN_OPCODES
_OPS = {op.code.encode("latin-1"): (op.name, _KIND.get(op.name, _REFUSED), op.arg and op.arg.reader)
        for op in pickletools.opcodes}
_KINDS = {"EMPTY_LIST": "list", "EMPTY_DICT": "dict", "EMPTY_TUPLE": "tuple", "LIST": "list", "DICT": "dict",
          "TUPLE": "tuple", "TUPLE1": "tuple", "TUPLE2": "tuple", "TUPLE3": "tuple"}
_SCALAR = "scalar"  # what the opcode pass keeps on its stack for any non-container value


class SnapshotError(Exception):
    """The input is not a plain snapshot pickle; str() is one line."""


class _Container:
    """A list, tuple or dict as the opcode pass sees it: its kind and nesting depth, and
    whether it was put inside another (then it must not change, or a depth already
    counted in its parents would grow, and a cycle could form)."""
    __slots__ = ("kind", "depth", "inside")

    def __init__(self, kind, depth=1):
        self.kind, self.depth, self.inside = kind, depth, False


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


def _too_large(limit):
    return SnapshotError(f"larger than {limit} bytes (the limit; set VRAMLAB_SNAPSHOT_MAX_BYTES to raise it)")


def _read_limited(f, limit):
    """f to its end, at most limit bytes. A request is never larger than what a regular
    file holds or a chunk: read(limit + 1) would reserve the whole limit up front."""
    chunk = 1 << 24
    want = chunk
    try:
        st = os.fstat(f.fileno())
        if stat.S_ISREG(st.st_mode):
            left = st.st_size - f.tell()
            if left > limit:
                raise _too_large(limit)
            want = max(left, 0) + 1  # one read takes it all; +1 sees a file that grew
    except (AttributeError, OSError, io.UnsupportedOperation):
        pass  # a pipe, a terminal, an in-memory file: chunks
    parts, total = [], 0
    try:
        while True:
            part = f.read(min(want, limit + 1 - total))
            if not part:
                break
            parts.append(part)
            total += len(part)
            if total > limit:
                raise _too_large(limit)
            want = chunk
        return parts[0] if len(parts) == 1 else b"".join(parts)
    except MemoryError:
        raise SnapshotError(f"out of memory after reading {total} bytes")


def check_opcodes(data):
    """Raises SnapshotError at the first opcode that is not plain data, or that goes past
    a limit (LIMITS), or that the unpickler would refuse. It follows the unpickler's
    stack (each value reduced to _SCALAR or a _Container), marks and memo, building
    nothing."""
    f = io.BytesIO(data)
    read, tell, find = f.read, f.tell, data.find
    stack, marks, memo = [], [], []  # marks: the stack's length at each open MARK
    fence = 0  # the stack's length at the last open MARK: nothing below it may be popped
    pushed = pos = 0
    max_int_bytes = MAX_INT_BITS // 8 + 1
    ops, sized = _OPS, frozenset((_TEXT_INT, _TEXT_PUT, _TEXT_GET, _BIN_INT))

    def refuse(msg):
        raise SnapshotError(f"{msg} at byte {pos}")

    def pop_mark():
        nonlocal fence
        if not marks:
            refuse("no MARK on the stack")
        items = stack[fence:]
        del stack[fence:]
        marks.pop()
        fence = marks[-1] if marks else 0
        return items

    def put_inside(box, items):
        for item in items:
            if item is _SCALAR:
                continue
            if item is box:
                refuse(f"a {box.kind} inside itself")
            item.inside = True
            if item.depth >= box.depth:
                box.depth = item.depth + 1
                if box.depth > MAX_DEPTH:
                    refuse(f"nesting deeper than {MAX_DEPTH} levels")

    def set_items(box, items):
        if len(items) % 2:
            refuse("an odd number of items for a dict")
        for key in items[::2]:
            if key is not _SCALAR:
                refuse(f"a dict key that is a {key.kind} (a snapshot's keys are strings)")
        put_inside(box, items[1::2])

    def target(kind):
        box = stack[-1] if len(stack) > fence else None
        if not isinstance(box, _Container) or box.kind != kind:
            what = box.kind if isinstance(box, _Container) else "scalar" if box else "MARK or an empty stack"
            refuse(f"items added to a {what}, not a {kind}")
        if box.inside:
            refuse(f"a {kind} changed after it was put inside another")
        return box

    try:
        while True:
            pos = tell()
            code = read(1)
            name, kind, reader = ops.get(code) or refuse(f"not a pickle: opcode {code!r} unknown" if code
                                                         else "not a pickle: no STOP")
            if kind == _REFUSED:
                arg = reader(f) if reader else None  # readers only read: GLOBAL's names, for the message
                what = f" ({' '.join(arg.split())[:60]})" if isinstance(arg, str) else ""
                raise SnapshotError(f"opcode {name}{what} at byte {pos} is refused "
                                    "(a snapshot holds only dicts, lists, strings and numbers)")
            # Sizes before the reader decodes them: a text integer's length, a binary one's bytes.
            if kind in sized:
                if kind != _BIN_INT and find(b"\n", pos + 1, pos + 2 + MAX_INT_TEXT) < 0:
                    refuse(f"an integer (or memo index) of more than {MAX_INT_TEXT} characters")
                if kind == _BIN_INT and int.from_bytes(data[pos + 1:pos + (2 if name == "LONG1" else 5)], "little",
                                                      signed=name == "LONG4") > max_int_bytes:
                    refuse(f"an integer of more than {MAX_INT_BITS} bits")
            arg = reader(f) if reader else None
            if kind == _VALUE:
                stack.append(_SCALAR)
                pushed += 1
            elif kind == _PUT or kind == _MEMOIZE or kind == _TEXT_PUT:
                if len(stack) <= fence:
                    refuse("memo store with no value on the stack")
                i = len(memo) if kind == _MEMOIZE else arg
                if type(i) is not int or not 0 <= i <= len(memo):
                    # The unpickler would size its memo to the index: 2^32 entries for 5 bytes.
                    refuse(f"memo index {i} past the {len(memo)} stored (a pickle stores them in order)")
                if i == len(memo):
                    memo.append(stack[-1])
                else:
                    memo[i] = stack[-1]
                continue
            elif kind == _GET or kind == _TEXT_GET:
                if type(arg) is not int or not 0 <= arg < len(memo):
                    refuse(f"memo index {arg} fetched but never stored")
                stack.append(memo[arg])
                pushed += 1
            elif kind == _SETITEMS:
                items = pop_mark()
                set_items(target("dict"), items)
            elif kind == _APPENDS:
                items = pop_mark()
                put_inside(target("list"), items)
            elif kind == _MARK:
                if len(marks) >= MAX_DEPTH:
                    refuse(f"more than {MAX_DEPTH} open MARKs")
                fence = len(stack)
                marks.append(fence)
            elif kind == _EMPTY:
                stack.append(_Container(_KINDS[name]))
                pushed += 1
            elif kind == _TEXT_INT or kind == _BIN_INT:
                if type(arg) is int and arg.bit_length() > MAX_INT_BITS:
                    refuse(f"an integer of more than {MAX_INT_BITS} bits")
                stack.append(_SCALAR)
                pushed += 1
            elif kind == _APPEND or kind == _SETITEM or kind == _TUPLE_N:
                n = 1 if kind == _APPEND else 2 if kind == _SETITEM else int(name[5])
                if len(stack) - n < fence:
                    refuse("stack underflow")
                items = stack[-n:]
                del stack[-n:]
                if kind == _APPEND:
                    put_inside(target("list"), items)
                elif kind == _SETITEM:
                    set_items(target("dict"), items)
                else:
                    box = _Container("tuple")
                    put_inside(box, items)
                    stack.append(box)
                    pushed += 1
            elif kind == _FROM_MARK:
                items = pop_mark()
                box = _Container(_KINDS[name])
                if name == "DICT":
                    set_items(box, items)
                else:
                    put_inside(box, items)
                stack.append(box)
                pushed += 1
            elif kind == _DUP:
                if len(stack) <= fence:
                    refuse("DUP with no value on the stack")
                stack.append(stack[-1])
                pushed += 1
            elif kind == _POP:
                if len(stack) > fence:
                    stack.pop()
                else:
                    pop_mark()  # as the unpickler does: POP at a MARK drops the MARK
            elif kind == _POP_MARK:
                pop_mark()
            elif kind == _FRAME:
                if arg > len(data) - tell():
                    refuse(f"a frame of {arg} bytes, past the end of the data,")
            elif kind == _STOP:
                if len(stack) <= fence:
                    refuse("STOP with no value on the stack")
                return
            if pushed > MAX_OBJECTS:
                refuse(f"more than {MAX_OBJECTS} objects")
    except SnapshotError:
        raise
    except MemoryError:
        stack.clear(), memo.clear()  # room for the message
        raise SnapshotError(f"out of memory checking it, at byte {pos}")
    except Exception as e:  # pickletools' readers: truncated or corrupt arguments
        raise SnapshotError(f"not a pickle: {' '.join(str(e).split())} at byte {pos}")


def loads(data):
    """The plain data of a pickle held in bytes, or SnapshotError."""
    check_opcodes(data)
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except SnapshotError:
        raise
    except MemoryError:
        raise SnapshotError(f"out of memory building it from {len(data)} bytes")
    except Exception as e:  # corrupt data the opcode scan let through
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
