"""Reading a vramlab results folder for scripts/compare: every program CSV (its '#'
metadata and its rows), reduced to metrics that can be compared between two runs, and
hyperfine's JSON exports (hyperfine/*.json), whose per-run times give the spread.

read_csv is the one reader of vramlab's CSVs ('#' metadata lines, a header row, data
rows): the comparison's, the findings', the report's and the torch-bench's (read_dicts:
the rows as dicts). git_revision is the revision a result records. docs/comparing.md,
section "vramlab/results.py", says what a repeated run, a metric and bad input are."""
import csv
import glob
import json
import math
import os
import re
import subprocess

from vramlab import rankstats

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
# Columns that hold numbers by their name (lib/csv.h: units belong in column names).
NUMERIC_SUFFIXES = ("_ns", "_us", "_ms", "_s", "_bytes", "_gbps", "_per_s")
# scripts/bench.sh's manifest.csv: the columns read, and the exit code of a job that
# skipped itself (no GPU, a peer not built).
MANIFEST_COLUMNS = ("program", "status")
SKIP_EXIT = 77
# Written last by scripts/bench.sh into a results folder (and each rep-<k>/ of a repeated
# run) once every job of it has finished: a folder without it was interrupted or is
# still running, and its files are not a result.
COMPLETE_MARK = "COMPLETE"


class BadInput(Exception):
    """An input file that cannot be read or is malformed: scripts/compare and scripts/matrix
    say it in one line and exit 2."""

    def __init__(self, path, why):
        super().__init__(f"{path}: {why}")
        self.path, self.why = path, why


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


def read_csv(path, comments=None):
    """Returns (metadata dict, header list, rows as lists) of a vramlab CSV; BadInput
    where it cannot be read. Where comments is a list, the '#' lines are appended to it
    whole (newline included), to be written again as they were."""
    meta, rows, header = {}, [], None
    try:
        with open(path, newline="", errors="replace") as f:
            for line in f:
                if line.startswith("#"):
                    if comments is not None:
                        comments.append(line)
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
    except IsADirectoryError:
        raise BadInput(path, "a folder, not a file") from None
    except OSError as e:
        raise BadInput(path, f"cannot be read ({e.strerror or e})") from None
    except csv.Error as e:
        raise BadInput(path, f"not CSV ({e})") from None
    return meta, header or [], rows


def read_dicts(path, comments=None):
    """The data rows of a vramlab CSV (read_csv) as dicts by its header, as csv.DictReader
    gives them: a short row's missing columns None, a long row's extra fields a list
    under None."""
    _, header, rows = read_csv(path, comments)
    out = []
    for fields in rows:
        row = {col: (fields[i] if i < len(fields) else None) for i, col in enumerate(header)}
        if len(fields) > len(header):
            row[None] = fields[len(header):]
        out.append(row)
    return out


def folder_and_flag(argv, flag):
    """(whether argv holds flag, the results folder it names besides, or None where it
    does not name exactly one existing folder): the command line of compare.summarize
    and scripts/peer-tables."""
    rest = [a for a in argv if a != flag]
    return flag in argv, rest[0] if len(rest) == 1 and os.path.isdir(rest[0]) else None


def git_revision(root, length=7, mark_dirty=True):
    """The git revision a result records: VL_GIT_REV where set (a copied working tree, as
    the device machine gets, may carry another checkout's .git), else HEAD of root
    abbreviated to length, with "-dirty" where tracked files differ (mark_dirty), else
    "unknown"."""
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


def check_header(path, header):
    """BadInput for a header no program writes: a column named twice, an empty name, or
    a number (a data row where the header should be)."""
    for i, col in enumerate(header):
        if not col.strip():
            raise BadInput(path, f"bad header: column {i + 1} has no name")
        if number(col) is not None:
            raise BadInput(path, f"bad header: column {i + 1} is named '{col}', a number (no header row?)")
        if header.index(col) != i:
            raise BadInput(path, f"bad header: column '{col}' appears twice")


def is_number(text):
    """A number, finite or not ("nan": unknown, as an empty cell is)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


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


def program_metrics(fname, header, rows, path=None):
    """[Metric] of a program CSV and its rows of the wrong length (reported, not
    compared); BadInput (naming path) for text where a number is required."""
    groups = summary_groups(header)
    in_group = set()
    for (prefix, unit), stats in groups.items():
        in_group.update(stats.values())
    identity = [i for i, c in enumerate(header) if c in IDENTITY]
    scalars = [i for i in range(len(header)) if i not in in_group and i not in identity]
    numeric = sorted(in_group | {i for i, c in enumerate(header) if c.endswith(NUMERIC_SUFFIXES)})
    seen, out, malformed = {}, [], []
    for number_, fields in enumerate(rows, 1):
        if len(fields) != len(header):
            malformed.append(f"{fname}: data row {number_} has {len(fields)} fields, the header {len(header)}")
            continue
        for i in numeric:
            if fields[i].strip() and not is_number(fields[i]):
                raise BadInput(path or fname, f"data row {number_}: column {header[i]} holds '{fields[i][:40]}', "
                                              "not a number")
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


def read_hyperfine(path):
    """[(command, [times])] of a hyperfine --export-json file; BadInput where it is not
    one: {"results": [{"command": str, "times": [number or null, ...]}, ...]}."""
    try:
        with open(path) as f:
            data = json.load(f)
    except IsADirectoryError:
        raise BadInput(path, "a folder, not a file") from None
    except OSError as e:
        raise BadInput(path, f"cannot be read ({e.strerror or e})") from None
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise BadInput(path, f"not JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise BadInput(path, "not a hyperfine export: expected an object with a list 'results'")
    out = []
    for k, result in enumerate(data["results"]):
        if not isinstance(result, dict) or not isinstance(result.get("command"), str) \
                or not isinstance(result.get("times"), list):
            raise BadInput(path, f"results[{k}]: expected an object with a string 'command' and a list 'times'")
        # bool is an int to Python, not a time to hyperfine
        if any(t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t))
               for t in result["times"]):
            raise BadInput(path, f"results[{k}].times: holds something other than finite numbers")
        out.append((result["command"], [t for t in result["times"] if t is not None]))
    return out


def hyperfine_metrics(path):
    """One metric per hyperfine command: wall time per run (median, p25..p75)."""
    out = []
    fname = "hyperfine/" + os.path.basename(path)
    for command, times in read_hyperfine(path):
        times = sorted(times)
        if not times:
            continue
        out.append(Metric(fname, command or "?", "wall_median", "s", quantile(times, 0.5),
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


def read_manifest(path):
    """The jobs of scripts/bench.sh's manifest.csv: [{column: value}]; BadInput where it
    is not one (its columns, or an exit code that is not an integer)."""
    _, header, rows = read_csv(path)
    missing = [c for c in MANIFEST_COLUMNS if c not in header]
    if missing:
        raise BadInput(path, f"bad header: no column {', '.join(missing)} (scripts/bench.sh writes "
                             "program,device,alloc,status,exit_code,seconds,csv,note)")
    jobs = []
    for k, fields in enumerate(rows, 1):
        if len(fields) != len(header):
            raise BadInput(path, f"data row {k} has {len(fields)} fields, the header {len(header)}")
        job = dict(zip(header, fields))
        code = job.get("exit_code", "").strip()
        if code and not re.fullmatch(r"-?\d+", code):
            raise BadInput(path, f"data row {k}: exit_code '{code[:40]}' is not an integer")
        jobs.append(job)
    return jobs


def job_outcome(job):
    """'ok', 'skipped' or 'failed': a job is a result only when it says ok and exited 0,
    a skip only when it says skipped and exited 77 (where the manifest gives the code)."""
    status, code = job.get("status", "").strip(), job.get("exit_code", "").strip()
    if status == "ok" and code in ("", "0"):
        return "ok"
    if status == "skipped" and code in ("", str(SKIP_EXIT)):
        return "skipped"
    return "failed"


def describe_job(job):
    """'program device alloc, csv: status, exit N: note', as a finding names a job."""
    what = " ".join(v for v in (job.get("program", ""), job.get("device", ""), job.get("alloc", "")) if v and v != "-")
    code, note = job.get("exit_code", "").strip(), job.get("note", "").strip()
    return (f"{what or '?'}" + (f", {job['csv']}" if job.get("csv") else "") + ": "
            + (job.get("status", "").strip() or "no status") + (f", exit {code}" if code else "")
            + (f": {note[:120]}" if note else ""))


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
        manifest = os.path.join(path, "manifest.csv")
        self.jobs = read_manifest(manifest) if os.path.lexists(manifest) else []
        for p in sorted(glob.glob(os.path.join(path, "*.csv"))):
            fname = os.path.basename(p)
            # hyperfine.*.csv flatten hyperfine/*.json, which is read below with its spread.
            if fname in SKIP_FILES or fname.startswith(("compare", "hyperfine.", "summary", "noise")):
                continue
            meta, header, rows = read_csv(p)
            check_header(p, header)
            self.file_meta[fname] = meta
            for k, v in meta.items():
                if k not in VOLATILE_META:
                    self.meta.setdefault(k, set()).add(v)
            self.files[fname], bad = program_metrics(fname, header, rows, p)
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
        # (folder, job) of each job whose manifest says it failed or crashed.
        self.failed_jobs = [(r.path, job) for r in self.reps for job in r.jobs if job_outcome(job) == "failed"]
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
