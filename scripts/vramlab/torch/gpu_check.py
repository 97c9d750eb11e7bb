"""The one check that vramlab.torch.bench, vramlab.torch.record_traces and
tests/gpu/torch_training_equal.py make before anything else: is torch importable, and
does it see a CUDA device? Without them each exits 77 with one line (the suite's skip).

    from vramlab.torch import gpu_check
    rc = gpu_check.skip()        # 0, or 77 after printing the one line
    if rc:
        return rc

No torch is imported at module level: importing this module costs nothing.
"""
import sys

SKIP = 77  # the suite's "skipped" exit status


def why_not():
    """'' where torch imports and sees a CUDA device, else one line saying why not."""
    try:
        import torch
    except ImportError:
        return "no torch for python3"
    if not torch.cuda.is_available():
        return "no CUDA device"
    return ""


def skip(out=None):
    """0 where torch and a CUDA device are here; else prints why (one line, stdout)
    and returns SKIP (77) for the caller to exit with."""
    why = why_not()
    if not why:
        return 0
    print(why, file=out or sys.stdout, flush=True)
    return SKIP


if __name__ == "__main__":
    sys.exit(skip())
