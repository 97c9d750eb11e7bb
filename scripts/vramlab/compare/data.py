"""What scripts/compare and scripts/matrix find when they set two runs side by side, as
data (no printing: vramlab.compare.text says it): the metadata and the machine state that
differ, and the program files missing on one side or failed, with their reasons."""
import os
import re

from vramlab import pairing
from vramlab import results as vlresults

IMPORTANT_META = ("gpu", "driver", "runtime", "alloc", "git_revision", "vramlab", "host",
                  "device_memory_bytes", "device", "simulated", "quick")


def meta_differences(a, b):
    keys = [k for k in IMPORTANT_META if k in a.meta or k in b.meta]
    keys += sorted(k for k in set(a.meta) | set(b.meta) if k not in IMPORTANT_META)
    out = []
    for k in keys:
        va, vb = a.meta.get(k, set()), b.meta.get(k, set())
        if va != vb:
            out.append((k, ", ".join(sorted(va)) or "-", ", ".join(sorted(vb)) or "-"))
    return out


# before compare warns: relative for clocks and power, absolute for the rest.
STATE_TOLERANCE = {"sm_clock_mhz": ("rel", 0.05), "mem_clock_mhz": ("rel", 0.05), "power_w": ("rel", 0.25),
                   "temperature_c": ("abs", 10), "loadavg_1m": ("abs", 1.0)}
STATE_MUST_MATCH = ("max_sm_clock_mhz", "max_mem_clock_mhz", "power_limit_w", "persistence_mode", "compute_mode",
                    "cpu_model", "cpus", "cpu_governor", "vm", "kernel")


def state_values(states, key):
    return [s[key] for s in states if key in s]


def state_differences(a, b):
    """[(key, A values, B values, warning or '')] for machine state that differs."""
    keys = sorted({k for s in a.states + b.states for k in s})
    out = []
    for k in keys:
        va, vb = state_values(a.states, k), state_values(b.states, k)
        base = k[4:] if k.startswith("end_") else k
        base = base.split("_", 1)[1] if re.match(r"gpu\d+_", base) else base
        warn = ""
        if base == "processes" and any(v not in ("none", "") for v in va + vb):
            warn = "other processes were on the GPU"
        nums_a = [vlresults.number(v) for v in va]
        nums_b = [vlresults.number(v) for v in vb]
        if base in STATE_TOLERANCE and va and vb and None not in nums_a + nums_b:
            kind, tol = STATE_TOLERANCE[base]
            ma, mb = vlresults.median(nums_a), vlresults.median(nums_b)
            gap = abs(mb - ma) / abs(ma) if kind == "rel" and ma else abs(mb - ma)
            if gap > tol:
                warn = f"differs by more than {tol:.0%}" if kind == "rel" else f"differs by more than {tol:g}"
            elif not warn:
                continue  # within tolerance: not worth a line
            out.append((k, f"{ma:g} (median of {len(va)})", f"{mb:g} (median of {len(vb)})", warn))
        elif set(va) != set(vb):
            if base in STATE_MUST_MATCH or k.split("_", 1)[-1] in STATE_MUST_MATCH:
                warn = warn or "a different setting"
            out.append((k, ", ".join(sorted(set(va))) or "-", ", ".join(sorted(set(vb))) or "-", warn))
        elif warn:
            out.append((k, ", ".join(sorted(set(va))), ", ".join(sorted(set(vb))), warn))
    return out


def skipped_note(run, name, fid):
    """'; NAME skipped it (...)' where run's manifest skipped fid's program on its device:
    measured on one side only."""
    for job in (j for r in run.reps for j in r.jobs):
        dev = "sim" if job.get("device", "").startswith("sim") else "cuda"
        if job.get("program") == fid.program and dev == fid.device and vlresults.job_outcome(job) == "skipped":
            return f"; {name} skipped it ({vlresults.describe_job(job)})"
    return ""


def missing_findings(p, a, b, names=("A", "B"), keep=None):
    """[line] per file one side has and the other lacks and per job either side's
    manifest says failed: not a result. device_info, which describes the machine, does
    not count; keep (a set of programs, or None): count only those."""
    out = []
    ids = {"A": pairing.identities(a), "B": pairing.identities(b)}
    for side, f, why in p.unpaired:
        run, other = (a, b) if side == "A" else (b, a)
        if not pairing.measured(run, f) or keep is not None and run.program_of[f] not in keep:
            continue
        owner, other_name = names if side == "A" else names[::-1]
        out.append(f"{owner}: {f} ({len(run.files[f])} metric(s)): {why}"
                   + skipped_note(other, other_name, ids[side][f]))
    for name, run in zip(names, (a, b)):
        for path, job in run.failed_jobs:
            if keep is not None and job.get("program") not in keep:
                continue
            where = os.path.relpath(path, run.path)
            out.append(f"failed in {name}: {'' if where == '.' else where + '/'}manifest.csv: "
                       + vlresults.describe_job(job))
    return out


def side_labels(paths):
    """The settings of scripts/ab's sides (OUT/ab.txt beside OUT/A and OUT/B), or {}."""
    out = {}
    for side, path in zip("AB", paths):
        ab = os.path.join(os.path.dirname(os.path.normpath(path)), "ab.txt")
        if os.path.basename(os.path.normpath(path)) in ("A", "B") and os.path.isfile(ab):
            try:
                with open(ab, errors="replace") as f:
                    lines = f.readlines()
            except OSError as e:
                raise vlresults.BadInput(ab, f"cannot be read ({e.strerror or e})") from None
            for line in lines:
                key, sep, value = line.partition(":")
                if sep and key == os.path.basename(os.path.normpath(path)):
                    out[side] = value.strip()
    return out
