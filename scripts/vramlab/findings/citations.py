"""Checks that every stored run under results/reference/ is cited, and that every citation
of one points to something stored (make citations-check).

  scripts/vl findings.citations [--root ROOT] [--list]

What cites a run, and what is an error: the comment below."""
# A run (an entry of results/reference/: a folder, or a file such as matrix-example.png)
# is cited when one of these names it:
#   - a file of the tree outside results/ (README.md, docs/, lib/, scripts/ with
#     vramlab/findings/figures.tsv and blocks/, tests/, mk/, Makefile, plots/, ...): as a path
#     results/reference/NAME[/...] (also ../results/reference/...), or by its bare name
#     (NAME as a whole word: `sim-park-bd709bc-fixtures/`);
#   - a block of scripts/vramlab/findings/figures.tsv: the folder its FOLDER resolves to, as
#     scripts/findings reads it (a glob: the newest match by name);
#   - the README* of a run that is itself cited (its inputs, its baseline: ../NAME/,
#     results/reference/NAME or the bare name). A run cited only by uncited runs, or only by
#     results/README.md (the catalogue of what is stored), is cited by nothing.
# A citation points to nothing when results/reference/PATH (the whole path, not just the
# run) does not exist, or when a glob inside a named run matches nothing; a figures.tsv
# block's folder that matches nothing (unless the block is "pending"); a ../PATH of a cited
# run's README that leaves the run and does not exist; a reference/PATH of results/README.md.
# Not citations: a path with a placeholder ($var, <device>, {x}), a glob over run names
# (results/reference/h100-findings-*) outside figures.tsv, a path glued to another
# ($root/results/reference/..., as tests build fake trees), a path in another commit
# (git show REV:results/reference/...), a run's name that the same file
# creates under such a fake root (what a test expects of its fake run), and this file.
#
# Also an error: an empty file under results/ (tracked or not ignored, by `git ls-files`
# in a git checkout; else every file under results/reference/ and results/README.md).
#
# Exit 1, one line per problem, on any of these; --list prints who cites each run.
import argparse
import os
import re
import subprocess
import sys

from vramlab import ROOT
from vramlab.findings import spec, stored

REF = "results/reference"
PLACEHOLDER = set("$<>{}@")
GLOB = set("*?")
# results/reference/PATH, not glued to a longer path or word ($root/results/...) or to a
# revision (git show REV:results/...: the tree of another commit); ../results/reference/
# (a Markdown link from docs/) is one
PATH_RE = re.compile(r"(?:(?<![\w/$.{}:\\-])|(?<=\.\./))results/reference/([A-Za-z0-9_.+/*?$<>{}@-]*)")
# $root/results/reference/NAME: a run a test builds in a fake tree
FAKE_RE = re.compile(r"(?<=[\w}])/results/reference/([A-Za-z0-9_.+-]+)")
# ../PATH in a run's README, relative to the README's folder
REL_RE = re.compile(r"(?<![\w.])((?:\.\./)+[A-Za-z0-9_.+/*?-]+)")
CATALOGUE_RE = re.compile(r"(?<![\w/.-])reference/([A-Za-z0-9_.+/-]+)")


def on_disk(path):
    """Whether PATH (a glob, maybe) names something stored; a folder may be stored as
    FOLDER.txz (scripts/vramlab/findings/stored.py)."""
    return os.path.lexists(path) or bool(stored.glob_stored(path))


def strip_path(p):
    return p.rstrip(".,:;")


def listed_files(root):
    """The tree's files (relative paths): tracked or not ignored in a git checkout, else
    every file but .git/ and build folders."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, check=True).stdout
        if os.path.isdir(os.path.join(root, ".git")) or os.path.isfile(os.path.join(root, ".git")):
            return sorted(p for p in set(out.decode().split("\0")) if p and os.path.isfile(os.path.join(root, p)))
    except (OSError, subprocess.CalledProcessError):
        pass
    found = []
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs if not (rel == "." and (x == ".git" or x.startswith("build")))
                   and not (rel == "results" and x != "reference")]
        found += [os.path.normpath(os.path.join(rel, f)) for f in files]
    return sorted(found)


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read(4 << 20)
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


class Checker:
    def __init__(self, root):
        self.root = root
        self.ref = os.path.join(root, REF)
        self.runs = sorted(x for x in os.listdir(self.ref) if not x.startswith(".")) if os.path.isdir(self.ref) else []
        alt = "|".join(re.escape(r) for r in sorted(self.runs, key=len, reverse=True))
        self.bare = re.compile(rf"(?<![\w.-])({alt})(?![\w-])") if self.runs else None
        self.cited = {r: [] for r in self.runs}   # run -> where
        self.problems = []

    def cite(self, run, where):
        if run in self.cited and where not in self.cited[run]:
            self.cited[run].append(where)

    def dangling(self, where, what):
        self.problems.append(f"{where}: {what} does not exist")

    def ref_path(self, path, where, fake=()):
        """A results/reference/PATH: the run it names, and whether PATH exists."""
        path = strip_path(path)
        parts = [p for p in path.split("/") if p]
        if not parts or set(parts[0]) & (PLACEHOLDER | GLOB) or parts[0] in fake:
            return
        self.cite(parts[0], where)
        literal = []
        for p in parts:
            if set(p) & PLACEHOLDER:
                break
            literal.append(p)
        full = os.path.join(self.ref, *literal)
        if not on_disk(full):
            self.dangling(where, f"{REF}/{path}")

    def scan(self, text, where_of, skip_self=None):
        fake = {m.group(1) for m in FAKE_RE.finditer(text)} - set(self.runs)
        for m in PATH_RE.finditer(text):
            self.ref_path(m.group(1), where_of(m.start()), fake)
        if self.bare:
            for m in self.bare.finditer(text):
                if m.group(1) != skip_self:
                    self.cite(m.group(1), where_of(m.start()))

    def scan_file(self, rel, skip_self=None):
        text = read_text(os.path.join(self.root, rel))
        if text is None:
            return None
        starts = [0] + [m.end() for m in re.finditer("\n", text)]

        def where_of(pos):
            import bisect
            return f"{rel}:{bisect.bisect_right(starts, pos)}"
        self.scan(text, where_of, skip_self)
        return text, where_of

    def figures_tsv(self, rel):
        path = os.path.join(self.root, rel)
        if not os.path.isfile(path):
            return
        try:
            blocks = spec.load(path)
        except (spec.SpecError, OSError) as e:
            self.problems.append(f"{rel}: {e}")
            return
        for b in blocks:
            where = f"{rel}:{b.line} (block {b.name})"
            matches = [p for p in stored.glob_stored(os.path.join(self.root, b.folder))
                       if os.path.isdir(p) or (os.path.isfile(p) and p.endswith(stored.ARCHIVES))]
            if not matches:
                if not b.pending:
                    self.dangling(where, b.folder)
                continue
            rel_folder = os.path.relpath(matches[-1], self.ref)
            if not rel_folder.startswith(".."):
                self.cite(rel_folder.split(os.sep)[0], where)

    def run_readmes(self, run):
        """The README* files of a stored run, at any depth."""
        top = os.path.join(self.ref, run)
        if not os.path.isdir(top):
            return []
        out = []
        for d, dirs, files in os.walk(top):
            dirs.sort()
            out += [os.path.relpath(os.path.join(d, f), self.root) for f in sorted(files) if f.startswith("README")]
        return out

    def check(self, files):
        me = os.path.relpath(os.path.abspath(__file__), self.root)
        sources = [f for f in files if not f.startswith("results/") and f != me]
        for rel in sources:
            self.scan_file(rel)
        self.figures_tsv("scripts/vramlab/findings/figures.tsv")
        # the READMEs of cited runs, until no new run is cited
        done = set()
        while True:
            todo = [r for r in self.runs if self.cited[r] and r not in done]
            if not todo:
                break
            for run in todo:
                done.add(run)
                for rel in self.run_readmes(run):
                    got = self.scan_file(rel, skip_self=run)
                    if got is None:
                        continue
                    text, where_of = got
                    for m in REL_RE.finditer(text):
                        target = os.path.normpath(os.path.join(os.path.dirname(os.path.join(self.root, rel)),
                                                               strip_path(m.group(1))))
                        inside = os.path.relpath(target, self.ref)
                        if inside.startswith("..") or set(inside) & GLOB:
                            continue
                        name = inside.split(os.sep)[0]
                        if name == run:
                            continue  # a path inside the run itself
                        self.cite(name, where_of(m.start()))
                        if not on_disk(target):
                            self.dangling(where_of(m.start()), f"{REF}/{inside}")
        # the catalogue names what is stored, so a row of it keeps nothing, but must not dangle
        catalogue = "results/README.md"
        text = read_text(os.path.join(self.root, catalogue)) if catalogue in files else None
        if text:
            for m in CATALOGUE_RE.finditer(text):
                p = strip_path(m.group(1))
                if not on_disk(os.path.join(self.ref, p)):
                    line = text.count("\n", 0, m.start()) + 1
                    self.dangling(f"{catalogue}:{line}", f"{REF}/{p}")
        for run in self.runs:
            if not self.cited[run]:
                self.problems.append(f"{REF}/{run}: a stored run that nothing cites (no findings block, doc, test "
                                     "or cited run's README names it): delete it, or cite it")
        for rel in files:
            if rel.startswith("results/") and os.path.getsize(os.path.join(self.root, rel)) == 0:
                self.problems.append(f"{rel}: an empty file under results/: delete it "
                                     "(a marker such as COMPLETE holds a line)")


def main(argv):
    ap = argparse.ArgumentParser(description="Every stored run cited, every citation stored, no empty files.")
    ap.add_argument("--root", default=ROOT, help="the tree's root")
    ap.add_argument("--list", action="store_true", help="print who cites each stored run")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    c = Checker(root)
    c.check(listed_files(root))
    if args.list:
        for run in c.runs:
            print(f"{run}\t{len(c.cited[run])}\t{'; '.join(c.cited[run][:4])}")
    for p in c.problems:
        print(f"citations: {p}")
    ok = len(c.runs) - sum(1 for r in c.runs if not c.cited[r])
    print(f"citations-check: {len(c.runs)} stored runs, {ok} cited; {len(c.problems)} problem(s)")
    # the test runner's count line (scripts/run-tests.sh): a check per cited run, a failure per problem
    print(f"citations-check: {ok} passed, {len(c.problems)} failed, 0 skipped")
    return 1 if c.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
