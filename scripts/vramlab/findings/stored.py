"""Where a block's stored data is: a folder under results/reference/, the newest of those
a glob matches, or an archive of one (.tgz), unpacked once into a scratch folder."""
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


def exists(root, folder):
    """Whether any stored folder or archive matches FOLDER."""
    import glob
    return any(os.path.isdir(p) or p.endswith(ARCHIVES) for p in glob.glob(os.path.join(root, folder)))


def resolve_folder(root, folder):
    """FOLDER, or the newest (by name) of the folders its glob matches; an archive
    (.tgz, .tar.gz, .txz) is read as the folder it unpacks to."""
    import glob
    matches = sorted(p for p in glob.glob(os.path.join(root, folder))
                     if os.path.isdir(p) or (os.path.isfile(p) and p.endswith(ARCHIVES)))
    if not matches:
        raise SpecError(f"no stored data at {folder}")
    return unpack(matches[-1]) if os.path.isfile(matches[-1]) else matches[-1]
