"""Reading a vramlab results folder for scripts/compare: every program CSV (its '#'
metadata and its rows), reduced to metrics that can be compared between two runs, and
hyperfine's JSON exports (hyperfine/*.json), whose per-run times give the spread.

A metric is one number of one row of one CSV:
  - a summary group (lib/stats.h: P_median_U with P_p25_U and P_p75_U beside it):
    value = the median, spread = [p25, p75];
  - a scalar measurement column (peak_*_bytes, *_per_s, *_ns, *_ms, ...): no spread.
Every other column is part of the row's identity (size_bytes, streams, pattern, pass...)."""
import csv
import glob
import json
import math
import os
import re

SUMMARY_STATS = ("n", "median", "p1", "p25", "p75", "p99", "min", "max", "iqr")
SCALAR_RE = re.compile(r"(^peak_.*_bytes$|_per_s$|_gbps$|^ns_per_op$|_ms$|_ns$|_us_measured$|"
                       r"^reserved_over_allocated$|^ooms$|^frees_after_oom$|^allocs$|^frees$)")
# Columns that describe the configuration of a row even though their names look like
# measurements; never compared.
IDENTITY = {"size_bytes", "min_size_bytes", "max_size_bytes", "kernel_us", "ideal_kernels_per_s",
            "slots", "alloc_prob", "ops", "kernels", "streams", "pass", "simulated"}
# Metadata that differs on every run and says nothing about the conditions.
VOLATILE_META = {"date_utc", "command"}
SKIP_FILES = {"manifest.csv", "compare.csv"}


class Metric:
    __slots__ = ("file", "row", "name", "unit", "value", "lo", "hi", "n", "samples")

    def __init__(self, file, row, name, unit, value, lo=None, hi=None, n=None, samples=None):
        self.file, self.row, self.name, self.unit = file, row, name, unit
        self.value, self.lo, self.hi, self.n, self.samples = value, lo, hi, n, samples


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
    scalars = [i for i, c in enumerate(header)
               if i not in in_group and c not in IDENTITY and SCALAR_RE.search(c)]
    identity = [i for i in range(len(header)) if i not in in_group and i not in scalars]
    seen, out = {}, []
    for fields in rows:
        if len(fields) != len(header):
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
    return out


def quantile(sorted_values, q):
    pos = q * (len(sorted_values) - 1)
    i = int(pos)
    if i + 1 >= len(sorted_values):
        return sorted_values[-1]
    return sorted_values[i] + (pos - i) * (sorted_values[i + 1] - sorted_values[i])


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


class Run:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(os.path.normpath(path))
        self.meta = {}      # key -> set of values over all files
        self.files = {}     # csv file name -> list of Metric
        self.program_of = {}
        for p in sorted(glob.glob(os.path.join(path, "*.csv"))):
            fname = os.path.basename(p)
            # hyperfine.*.csv flatten hyperfine/*.json, which is read below with its spread.
            if fname in SKIP_FILES or fname.startswith(("compare", "hyperfine.")):
                continue
            meta, header, rows = read_csv(p)
            for k, v in meta.items():
                if k not in VOLATILE_META:
                    self.meta.setdefault(k, set()).add(v)
            self.files[fname] = program_metrics(fname, header, rows)
            self.program_of[fname] = fname.split(".", 1)[0]
        for p in sorted(glob.glob(os.path.join(path, "hyperfine", "*.json"))):
            fname = "hyperfine/" + os.path.basename(p)
            self.files[fname] = hyperfine_metrics(p)
            self.program_of[fname] = fname
