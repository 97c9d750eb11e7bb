"""Where a block's stored data is: a folder under results/reference/, the newest of those
a glob matches, or an archive of one (.tgz), unpacked once into a scratch folder.

A folder of many small files (a run's repetitions) may be stored as an archive of itself:
FOLDER.txz beside where FOLDER would be, holding FOLDER's contents. Every path here reads
it as FOLDER (glob_stored), so a citation or a figure names FOLDER either way."""
import glob
import os

from vramlab.findings.spec import SpecError

ARCHIVES = (".tgz", ".tar.gz", ".txz", ".tar.xz")
_unpacked = {}


def unpack(archive):
    """A stored archive's files, unpacked once into a scratch folder (removed at exit)."""
    if archive not in _unpacked:
        import atexit
        import shutil
        import tarfile
        import tempfile
        scratch = tempfile.mkdtemp(prefix="findings.")
        atexit.register(shutil.rmtree, scratch, True)
        try:
            with tarfile.open(archive) as t:
                members = [m for m in t.getmembers() if m.isfile() or m.isdir()]  # no links, no devices
                for m in members:
                    if m.name.startswith("/") or ".." in m.name.split("/"):
                        raise SpecError(f"{archive}: member {m.name} leaves the archive's folder")
                t.extractall(scratch, members)
        except (tarfile.TarError, OSError) as e:
            raise SpecError(f"{archive}: cannot unpack: {e}")
        _unpacked[archive] = scratch
    return _unpacked[archive]


def _stand_ins(base, name):
    """The archives under BASE that stand for a folder matching NAME (a glob component),
    unpacked, with the folder name each stands for."""
    out = []
    for ext in ARCHIVES:
        for a in glob.glob(os.path.join(glob.escape(base), name + ext)):
            if os.path.isfile(a):
                out.append((os.path.basename(a)[:-len(ext)], unpack(a)))
    return out


def glob_stored(pattern):
    """The paths PATTERN (an absolute glob) matches, sorted by the names they stand for,
    where any folder on the way may be stored as FOLDER.txz (read as FOLDER)."""
    parts = pattern.split(os.sep)
    found = [("", os.sep if pattern.startswith(os.sep) else "")]  # (name as cited, real path)
    for part in parts:
        if not part:
            continue
        step = []
        for cited, real in found:
            names = {}
            for p in glob.glob(os.path.join(glob.escape(real), part)):
                names[os.path.basename(p)] = p
            for name, scratch in _stand_ins(real, part):
                if not os.path.isdir(names.get(name, "")):
                    names[name] = scratch
            step += [(os.path.join(cited, n), names[n]) for n in sorted(names)]
        found = step
    return [real for cited, real in sorted(found)]


def exists(root, folder):
    """Whether any stored folder or archive matches FOLDER."""
    return any(os.path.isdir(p) or p.endswith(ARCHIVES) for p in glob_stored(os.path.join(root, folder)))


def resolve_folder(root, folder):
    """FOLDER, or the newest (by name) of the folders its glob matches; an archive
    (.tgz, .tar.gz, .txz) is read as the folder it unpacks to."""
    matches = [p for p in glob_stored(os.path.join(root, folder))
               if os.path.isdir(p) or (os.path.isfile(p) and p.endswith(ARCHIVES))]
    if not matches:
        raise SpecError(f"no stored data at {folder}")
    return unpack(matches[-1]) if os.path.isfile(matches[-1]) else matches[-1]
