"""Output files for the Python tools, by the rules of the C programs' -o.

open_output(PATH, inputs, others) writes
  - a regular file or a new path through a temporary file in the same folder, renamed
    over PATH when complete: an interrupted run leaves no partial file under the name;
  - a character device or a FIFO (/dev/null, a pipe to a reader) in place;
and refuses a directory, a socket or a block device, the same file as one of inputs
(by device and inode; "-" is standard input) and the same file as one of others (the
run's other outputs: by inode, or by real path while they do not exist). A refusal is
an OutputError (a ValueError) of one line. "-" is standard output.
"""
import contextlib
import os
import stat
import sys
import tempfile


class OutputError(ValueError):
    """An output refused; str() is one line."""


def _stat(path):
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _identity(path):
    """What makes two names one file: its inode, or (not there yet) the real path it
    would be created at."""
    st = _stat(path)
    return ("inode", st.st_dev, st.st_ino) if st else ("path", os.path.realpath(path))


def check_output(path, inputs=(), others=()):
    """Raises OutputError if path may not be written; returns its stat (None when new)."""
    if not path:
        raise OutputError("an empty output name")
    st = _stat(path)
    if st:
        for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"),
                           (stat.S_ISBLK, "a block device")):
            if test(st.st_mode):
                raise OutputError(f"{path}: is {what}, not a file to write")
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            raise OutputError(f"{path}: is not a regular file, a character device or a FIFO")
        # A character device keeps nothing: /dev/null may be an input and every output.
        if stat.S_ISCHR(st.st_mode):
            return st
        for name in inputs:
            try:
                src = os.fstat(0) if name == "-" else os.stat(name)
            except OSError:
                continue  # an input that is not there is its reader's error
            if (src.st_dev, src.st_ino) == (st.st_dev, st.st_ino):
                what = "standard input" if name == "-" else f"the input {name}"
                raise OutputError(f"{path}: is the same file as {what}: refused, the input is left as it was")
    me = _identity(path)
    for name in others:
        if name != "-" and _identity(name) == me:
            raise OutputError(f"{path}: is the same file as the output {name}: refused")
    return st


def _umask():
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def open_output(path, inputs=(), others=(), mode="w", **kw):
    """A file object open for writing (mode "w" or "wb", kw as for open()), committed
    when the block ends without an exception and discarded when it raises."""
    if path == "-":
        yield sys.stdout.buffer if "b" in mode else sys.stdout
        return
    st = check_output(path, inputs, others)
    if st and not stat.S_ISREG(st.st_mode):
        with open(path, mode, **kw) as f:
            yield f
        return
    final = os.path.realpath(path)  # through a symbolic link: the link stays, its target is replaced
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(final)}.", dir=os.path.dirname(final))
    except OSError as e:
        raise OSError(e.errno, e.strerror, path) from None
    try:
        # mkstemp makes it 0600: give the mode a plain open() would, or the replaced file's.
        os.fchmod(fd, stat.S_IMODE(st.st_mode) if st else 0o666 & ~_umask())
        with open(fd, mode, **kw) as f:
            yield f
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
