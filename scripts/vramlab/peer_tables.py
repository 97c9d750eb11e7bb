"""scripts/peer-tables RUN: the README's tables of vramlab's caching allocator against
its peers (PyTorch default and expandable_segments, RMM pool/async/arena/binning) from a
results folder, as Markdown on stdout.

RUN is a repeated run (make bench REPEAT=N) or a single results folder. A cell is the
median over the processes with their min-max; tables for alloc_latency, random_churn,
fragmentation_churn and replay, then the conditions and the skipped jobs.
docs/findings.md, section "scripts/peer-tables", says what each table holds.
  usage: scripts/peer-tables [--all] RUN   (--all: every allocator, not only these)"""
import collections
import os
import sys

from vramlab import results as vlresults

# The allocators of the tables, in this order, with their names there.
SHOWN = {
    "caching": "vramlab caching (classic)",
    "caching:segments=expandable": "vramlab caching (expandable)",
    "torch": "PyTorch default",
    "torch:expandable_segments=1": "PyTorch expandable_segments",
    "rmm:pool": "RMM pool",
    "rmm:pool,initial=256MiB": "RMM pool (256 MiB first)",
    "rmm:async": "RMM async",
    "rmm:arena": "RMM arena",
    "rmm:binning": "RMM binning",
}
LATENCY_SIZES = (512, 2 << 20, 512 << 20)  # rows of both the full (x4) and --quick (x16) size ladders
PATTERNS = ("random_churn", "kv_cache_concat", "varying_batch")


def num(text):
    return vlresults.number(text)


def known(x):
    """fragmentation_churn writes -1 where the allocator keeps no allocated or reserved count."""
    return None if x is None or x < 0 else x


def ratio(a, b):
    a, b = num(a), num(b)
    return a / b if a is not None and b else None


class Csv:
    """One program CSV of one process: its metadata and rows as dicts."""

    def __init__(self, path):
        self.meta, header, rows = vlresults.read_csv(path)
        self.rows = [dict(zip(header, r)) for r in rows]
        self.program = os.path.basename(path).split(".")[0]
        self.alloc = self.meta.get("alloc", "none")
        self.sim = self.meta.get("simulated", "no").startswith("yes")

    def column(self, name, **where):
        return [num(r.get(name)) for r in self.rows if all(r.get(k) == v for k, v in where.items())]


def load(run, show_all):
    """{(program, alloc, sim): [Csv per process]}, the manifests' skipped jobs, and how
    many repetitions (processes of each job) there are."""
    found, skipped = collections.defaultdict(list), {}
    folders = vlresults.rep_folders(run) or [run]
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name.endswith(".csv") and name not in vlresults.SKIP_FILES and os.path.isfile(path):
                c = Csv(path)
                if show_all or c.alloc in SHOWN:
                    found[(c.program, c.alloc, c.sim)].append(c)
        manifest = os.path.join(folder, "manifest.csv")
        if os.path.exists(manifest):
            meta, header, rows = vlresults.read_csv(manifest)
            for r in (dict(zip(header, r)) for r in rows):
                if r.get("status") != "ok":
                    skipped[(r["program"], r["alloc"], r["device"])] = (r["status"], r.get("note", ""))
    return found, skipped, len(folders)


def order(key):
    alloc = key[1]
    return (list(SHOWN).index(alloc) if alloc in SHOWN else len(SHOWN), alloc, key[2])


def label(alloc, sim):
    return SHOWN.get(alloc, f"`{alloc}`") + (" (simulated)" if sim else "")


def cell(values, fmt):
    """median (min-max) over processes; '—' where no process has the value."""
    v = sorted(x for x in values if x is not None)
    if not v:
        return "—"
    m = vlresults.median(v)
    return fmt(m) if len(v) == 1 or v[0] == v[-1] else f"{fmt(m)} ({fmt(v[0])}–{fmt(v[-1])})"


def ns(x):
    return f"{x:,.0f}"


def times(x):
    return f"{x:.3f}"


def mops(x):
    return f"{x / 1e6:.2f}"


def size_name(b):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale and b % scale == 0:
            return f"{b // scale} {unit}"
    return f"{b} B"


def table(title, note, columns, rows):
    if not rows:
        return [f"### {title}", "", "(no CSVs of this program in the run)", ""]
    out = [f"### {title}", "", note, "", "| allocator | " + " | ".join(columns) + " |",
           "|---" * (len(columns) + 1) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out + [""]


def per_process(csvs, fn):
    return [fn(c) for c in csvs]


def first(values):
    return values[0] if values else None


def alloc_latency(found):
    rows = []
    for key in sorted((k for k in found if k[0] == "alloc_latency"), key=order):
        csvs = found[key]
        row = [label(key[1], key[2])]
        for size in LATENCY_SIZES:
            s = str(size)
            a = cell(per_process(csvs, lambda c: first(c.column("alloc_median_ns", size_bytes=s))), ns)
            f = cell(per_process(csvs, lambda c: first(c.column("free_median_ns", size_bytes=s))), ns)
            row.append(f"{a} / {f}")
        rows.append(row)
    return table("alloc_latency: host ns per call, alloc / free (median)",
                 "Median ns of one call in each process; over processes: median (min–max).",
                 [size_name(s) for s in LATENCY_SIZES], rows)


def random_churn(found):
    rows = []
    for key in sorted((k for k in found if k[0] == "random_churn"), key=order):
        # One table row per configuration (slots, sizes): the 300k-slot churn is another.
        configs = collections.defaultdict(list)
        for c in found[key]:
            for r in c.rows:
                configs[(r.get("slots"), r.get("min_size_bytes"), r.get("max_size_bytes"))].append(r)
        for (slots, lo, hi), rs in sorted(configs.items(), key=lambda kv: int(kv[0][0] or 0)):
            rows.append([label(key[1], key[2]), f"{int(slots):,} slots, {size_name(int(lo))}–{size_name(int(hi))}",
                         cell([num(r.get("batch_op_median_ns")) for r in rs], ns),
                         cell([ratio(r.get("peak_reserved_bytes"), r.get("peak_requested_bytes")) for r in rs],
                              times)])
    return table("random_churn: ns per operation and waste",
                 "ns/op: median of 100-op batch means in each process; waste: peak reserved / peak requested.",
                 ["churn", "ns/op", "peak reserved / requested"], rows)


def fragmentation_churn(found):
    rows = []
    for key in sorted((k for k in found if k[0] == "fragmentation_churn"), key=order):
        csvs = found[key]
        for pattern in PATTERNS:
            def final(c, col):
                return first(c.column(col, record="final_live", pattern=pattern))
            if not any(c.column("step", record="final_live", pattern=pattern) for c in csvs):
                continue
            rows.append([label(key[1], key[2]), pattern,
                         cell(per_process(csvs, lambda c: final(c, "largest_over_total_free")), times),
                         cell(per_process(csvs, lambda c: final(c, "ooms_despite_free")), ns),
                         cell(per_process(csvs, lambda c: known(final(c, "peak_reserved_over_peak_allocated"))), times)])
    return table("fragmentation_churn: largest allocation that succeeds, and waste",
                 "With everything live at the end: the largest allocation that succeeds / total free memory "
                 "(1 = no fragmentation), OOMs although enough memory was free, peak reserved / peak allocated "
                 "(— where the allocator keeps no allocated or reserved count).",
                 ["pattern", "largest / free", "OOMs despite free", "peak reserved / allocated"], rows)


def replay(found):
    rows = []
    keys = sorted((k for k in found if k[0] == "replay"), key=order)
    traces = sorted({c.meta.get("trace", "?") for k in keys for c in found[k]})
    for trace in traces:
        for key in keys:
            csvs = [c for c in found[key] if c.meta.get("trace", "?") == trace]
            if not csvs:
                continue
            rows.append([label(key[1], key[2]), f"`{os.path.basename(trace)}`",
                         cell(per_process(csvs, lambda c: vlresults.median([x for x in c.column("ops_per_s")
                                                                             if x is not None] or [0])), mops),
                         cell(per_process(csvs, lambda c: ratio(c.rows[0].get("peak_reserved_bytes"),
                                                                c.rows[0].get("peak_requested_bytes"))
                                          if c.rows else None), times)])
    return table("replay: recorded traces",
                 "M ops/s: median over the passes of a process; waste: peak reserved / peak requested in the "
                 "first pass (from an empty allocator).",
                 ["trace", "M ops/s", "peak reserved / requested"], rows)


def conditions(found, skipped, reps):
    out = ["### Conditions", ""]
    # The GPU's conditions before the simulated device's (whose "gpu" says simulated).
    gpu_first = sorted(found.items(), key=lambda item: item[0][2])
    any_csv = next((c for _, v in gpu_first for c in v if "gpu" in c.meta), None)
    if any_csv:
        m = any_csv.meta
        out.append(f"- {m.get('gpu', '?')}, driver {m.get('driver', '?')}, runtime {m.get('runtime', '?')}, "
                   f"vramlab {m.get('git_revision', '?')}, {reps} repetition(s): one process each per job"
                   f"{', quick' if m.get('quick') == 'yes' else ''}")
    versions = collections.defaultdict(set)
    for (prog, alloc, sim), csvs in found.items():
        for c in csvs:
            versions[alloc].add(c.meta.get("alloc_version", "vramlab " + c.meta.get("vramlab", "?")))
    for alloc in sorted(versions, key=lambda a: order(("", a, False))):
        out.append(f"- {label(alloc, False)}: `--alloc {alloc}`, {', '.join(sorted(versions[alloc]))}")
    for (prog, alloc, dev), (status, note) in sorted(skipped.items()):
        if alloc.strip('"') in SHOWN:
            out.append(f"- not measured: {prog} `{alloc}` on {dev}: {status}{': ' + note if note else ''}")
    return out + [""]


def main(argv):
    show_all, folder = vlresults.folder_and_flag(argv, "--all")
    if folder is None:
        print("usage: scripts/peer-tables [--all] RUN_FOLDER", file=sys.stderr)
        return 2
    found, skipped, reps = load(folder, show_all)
    if not found:
        print(f"peer-tables: no CSVs of these allocators in {folder}", file=sys.stderr)
        return 1
    out = [f"## vramlab against PyTorch and RMM ({os.path.basename(os.path.normpath(folder))})", ""]
    for part in (alloc_latency, random_churn, fragmentation_churn, replay):
        out += part(found)
    out += conditions(found, skipped, reps)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
