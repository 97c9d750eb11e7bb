"""The git revision a result records: VL_GIT_REV where set (a copied working tree, as the
device machine gets, may carry another checkout's .git), else the checkout's HEAD, else
"unknown"."""
import os
import subprocess


def git_revision(root, length=7, mark_dirty=True):
    """HEAD of root, abbreviated to length, with "-dirty" where tracked files differ
    (mark_dirty)."""
    if os.environ.get("VL_GIT_REV"):
        return os.environ["VL_GIT_REV"]
    try:
        rev = subprocess.run(["git", "-C", root, "rev-parse", f"--short={length}", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        if not rev:
            return "unknown"
        if mark_dirty and subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                                         capture_output=True, text=True, timeout=10).stdout.strip():
            rev += "-dirty"
        return rev
    except (OSError, subprocess.SubprocessError):
        return "unknown"
