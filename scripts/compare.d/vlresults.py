"""Reading a vramlab results folder for scripts/compare: every program CSV (its '#'
metadata and its rows), reduced to metrics that can be compared between two runs, and
hyperfine's JSON exports (hyperfine/*.json), whose per-run times give the spread.

A folder with rep-1/, rep-2/, ... inside is a repeated run (make bench REPEAT=N,
scripts/ab): each repetition is a complete results folder of separate processes, and
a metric's samples are its values over the repetitions. Otherwise a metric has one
sample (one process), except hyperfine's wall times: every timed run is a process.

A metric is one number of one row of one CSV:
  - a summary group (lib/stats.h: P_median_U with P_p25_U and P_p75_U beside it):
    value = the median, spread = [p25, p75] (inside the process);
  - any other numeric column that is not part of the row's identity (IDENTITY: the
    configuration columns, such as size_bytes, streams, pattern, pass)."""
import csv
import glob
import json
import math
import os
import re

import rankstats

SUMMARY_STATS = ("n", "median", "p1", "p25", "p75", "p99", "min", "max", "iqr")
# The columns that say which configuration a row measures (its identity across runs and
# repetitions). Every other numeric column is a measurement; other text columns (a
# status, an error name) are neither, so a changed status never splits a row in two.
IDENTITY = {"section", "variant", "role", "record", "pattern", "phase", "test", "form", "case", "step",
            "iteration", "size_bytes", "min_size_bytes", "max_size_bytes", "buffer_bytes", "streams", "kernel_us",
            "kernels", "slots", "alloc_prob", "ops", "pass", "simulated", "dist", "workers", "call", "allocator",
            "batch_ops", "ideal_kernels_per_s", "trials", "lag_ns", "side_work_ms", "reps", "direction", "sample",
            "count", "loading", "fatbin", "cublas"}
# Metadata that differs on every run and says nothing about the conditions.
VOLATILE_META = {"date_utc", "command"}
SKIP_FILES = {"manifest.csv", "compare.csv"}
# Written last by scripts/bench.sh into a results folder (and each rep-<k>/ of a repeated
# run) once every job of it has finished: a folder without it was interrupted or is
# still running, and its files are not a result.
COMPLETE_MARK = "COMPLETE"


class Metric:
    """value: the number of one process (a median, or a scalar); lo/hi: its p25/p75
    inside that process, where it has them; samples: one value per process (per
    repetition), the unit the comparison's statistics work on."""
    __slots__ = ("file", "row", "name", "unit", "value", "lo", "hi", "n", "samples")

    def __init__(self, file, row, name, unit, value, lo=None, hi=None, n=None, samples=None):
        self.file, self.row, self.name, self.unit = file, row, name, unit
        self.value, self.lo, self.hi, self.n = value, lo, hi, n
        self.samples = samples if samples is not None else [value]

    @property
    def key(self):
        return (self.row, self.name)


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def read_csv(path):
    """Returns (metadata dict, header list, rows as lists) of a vramlab CSV."""
    meta, rows, header = {}, [], None
    with open(path, newline="", errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                key, sep, value = line[1:].partition(":")
                if sep:
                    meta[key.strip()] = value.strip()
                continue
            if not line.strip():
                continue
            fields = next(csv.reader([line]))
            if header is None:
                header = fields
            else:
                rows.append(fields)
    return meta, header or [], rows


def summary_groups(header):
    """{(prefix, unit): {stat: column index}} for complete summary groups."""
    groups = {}
    for i, col in enumerate(header):
        m = re.match(r"^(.+)_(median|p1|p25|p75|p99|min|max|iqr)_([a-z_]+)$", col)
        if m:
            groups.setdefault((m.group(1), m.group(3)), {})[m.group(2)] = i
    for (prefix, unit), stats in list(groups.items()):
        if not {"median", "p25", "p75"} <= stats.keys():
            del groups[(prefix, unit)]
            continue
        n_col = prefix + "_n"
        if n_col in header:
            stats["n"] = header.index(n_col)
    return groups


def program_metrics(fname, header, rows):
    groups = summary_groups(header)
    in_group = set()
    for (prefix, unit), stats in groups.items():
        in_group.update(stats.values())
    identity = [i for i, c in enumerate(header) if c in IDENTITY]
    scalars = [i for i in range(len(header)) if i not in in_group and i not in identity]
    seen, out, malformed = {}, [], []
    for number_, fields in enumerate(rows, 1):
        if len(fields) != len(header):
            malformed.append(f"{fname}: data row {number_} has {len(fields)} fields, the header {len(header)}")
            continue
        key = ",".join(f"{header[i]}={fields[i]}" for i in identity if fields[i] != "")
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key += f"#{seen[key]}"
        for (prefix, unit), stats in sorted(groups.items()):
            value = number(fields[stats["median"]])
            if value is None:
                continue
            n = number(fields[stats["n"]]) if "n" in stats else None
            out.append(Metric(fname, key, f"{prefix}_median", unit, value,
                              number(fields[stats["p25"]]), number(fields[stats["p75"]]), n))
        for i in scalars:
            value = number(fields[i])
            if value is not None:
                col = header[i]
                unit = col.rsplit("_", 1)[-1] if "_" in col else ""
                if col.endswith("_per_s"):
                    unit = "per_s"
                elif col.startswith("ns_per_"):
                    unit = "ns"
                out.append(Metric(fname, key, col, unit, value))
    return out, malformed


quantile = rankstats.quantile  # summarize.py and others read it here


def hyperfine_metrics(path):
    """One metric per hyperfine command: wall time per run (median, p25..p75)."""
    with open(path) as f:
        data = json.load(f)
    out = []
    fname = "hyperfine/" + os.path.basename(path)
    for result in data.get("results", []):
        times = sorted(t for t in result.get("times", []) if t is not None)
        if not times:
            continue
        out.append(Metric(fname, result.get("command", "?"), "wall_median", "s", quantile(times, 0.5),
                          quantile(times, 0.25), quantile(times, 0.75), len(times), times))
    return out


def read_state(path):
    """machine.txt of one results folder (scripts/machine-state): {key: value}."""
    state = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep and not line.startswith("#"):
                    state[key.strip()] = value.strip()
    except OSError:
        pass
    return state


def rep_folders(path):
    """The rep-<k> folders of a repeated run, in order of k; [] for a single run."""
    reps = [d for d in glob.glob(os.path.join(path, "rep-*")) if os.path.isdir(d)
            and re.fullmatch(r"rep-\d+", os.path.basename(d))]
    return sorted(reps, key=lambda d: int(os.path.basename(d)[4:]))


class Folder:
    """One complete results folder: one process per program and allocator."""

    def __init__(self, path):
        self.path = path
        self.meta = {}      # key -> set of values over all files
        self.files = {}     # csv file name -> list of Metric
        self.file_meta = {}  # csv file name -> its '#' metadata
        self.program_of = {}
        self.complete = os.path.isfile(os.path.join(path, COMPLETE_MARK))
        self.malformed = []
        self.state = read_state(os.path.join(path, "machine.txt"))
        for p in sorted(glob.glob(os.path.join(path, "*.csv"))):
            fname = os.path.basename(p)
            # hyperfine.*.csv flatten hyperfine/*.json, which is read below with its spread.
            if fname in SKIP_FILES or fname.startswith(("compare", "hyperfine.", "summary", "noise")):
                continue
            meta, header, rows = read_csv(p)
            self.file_meta[fname] = meta
            for k, v in meta.items():
                if k not in VOLATILE_META:
                    self.meta.setdefault(k, set()).add(v)
            self.files[fname], bad = program_metrics(fname, header, rows)
            self.malformed += bad
            self.program_of[fname] = fname.split(".", 1)[0]
        for p in sorted(glob.glob(os.path.join(path, "hyperfine", "*.json"))):
            fname = "hyperfine/" + os.path.basename(p)
            self.files[fname] = hyperfine_metrics(p)
            self.program_of[fname] = fname


class Run:
    """A results folder, single or repeated. files: csv name -> list of Metric whose
    samples hold one value per repetition (hyperfine: one per timed process);
    reps: the repetitions' folders (one for a single run); states: their machine.txt."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(os.path.normpath(path))
        rep_paths = rep_folders(path)
        self.repeated = bool(rep_paths)
        self.reps = [Folder(p) for p in rep_paths] if rep_paths else [Folder(path)]
        self.states = [r.state for r in self.reps if r.state]
        self.meta, self.files, self.program_of, self.malformed, self.file_meta = {}, {}, {}, [], {}
        # The folders without COMPLETE: interrupted, killed or still running.
        self.incomplete = [r.path for r in self.reps if not r.complete]
        for rep in self.reps:
            for k, v in rep.meta.items():
                self.meta.setdefault(k, set()).update(v)
            self.program_of.update(rep.program_of)
            for fname, meta in rep.file_meta.items():
                self.file_meta.setdefault(fname, meta)
            self.malformed += [f"{os.path.basename(rep.path)}/{m}" if self.repeated else m for m in rep.malformed]
        for fname in sorted({f for rep in self.reps for f in rep.files}):
            merged = {}
            for rep in self.reps:
                for m in rep.files.get(fname, []):
                    first = merged.get(m.key)
                    if first is None:
                        merged[m.key] = Metric(m.file, m.row, m.name, m.unit, m.value, m.lo, m.hi, m.n,
                                               list(m.samples))
                    else:
                        first.samples.extend(m.samples)
            for m in merged.values():
                m.value = median(m.samples)
            self.files[fname] = list(merged.values())

    @property
    def first_rep_path(self):
        return self.reps[0].path


def median(values):
    return rankstats.quantile_median(values)
