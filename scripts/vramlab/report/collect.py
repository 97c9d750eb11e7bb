"""Reading one results folder for the report: its header (GPU, driver, runtime,
revision, tier, duration), its jobs (every rep-<k>/ manifest), and per program the CSVs
that ran, with their metrics over the repetitions (scripts/compare.d/vlresults.Run)."""
import glob
import os
import re

from vramlab import ROOT
from vramlab import results as vlresults

# The key measurement per program: the one column its bad and fixed variants (or its
# allocators, for a benchmark) are told apart by. Others: the first summary median.
KEY = {
    "async_free_race": "corrupted_trials", "retained_graph": "slope_allocated_bytes_per_iter",
    "out_of_place": "peak_allocated_over_input", "fragmentation_churn": "largest_over_total_free",
    "cache_hold": "held_bytes", "pinned_copy": "time_median_ns", "free_stall": "time_median_ns",
    "fork_workers": "per_worker_bytes", "alloc_latency": "alloc_median_ns", "random_churn": "ns_per_op",
    "multi_stream": "kernels_median_per_s", "replay": "ops_per_s", "stream_pools": "peak_reserved_over_peak_requested",
}
BENCHMARKS = ("alloc_latency", "random_churn", "multi_stream", "replay", "lookup_scaling", "vmm_wait",
              "torch_alloc_compare")
MAX_ROWS = 40  # per program table: the rest stays in the CSVs, and the table says how many


def is_sim(meta):
    """A CSV of the simulated device ('simulated: yes (...)', 'device: sim')."""
    return meta.get("simulated", "").startswith("yes") or meta.get("device") == "sim"


class RunData:
    """Everything the report says about one run folder, read once."""

    def __init__(self, path):
        self.path = os.path.normpath(path)
        self.name = os.path.basename(self.path)
        self.run = vlresults.Run(self.path)
        self.reps = [r.path for r in self.run.reps]
        self.repeated = self.run.repeated
        self.jobs = []  # (rep label, job dict)
        for rep in self.run.reps:
            label = os.path.basename(rep.path) if self.repeated else ""
            self.jobs += [(label, j) for j in rep.jobs]
        self.state = self.run.reps[0].state
        self.header = self._header()
        self.programs = self._programs()

    def meta_values(self, key, device=True):
        """The values of one metadata key over the run's CSVs; device: those of the real
        device's files where there are any (a simulated file says gpu: simulated)."""
        metas = [m for f, m in self.run.file_meta.items() if f != "device_info.csv"]
        real = [m for m in metas if not is_sim(m)]
        return sorted({m[key] for m in (real if device and real else metas) if m.get(key)})

    def tier(self):
        """quick / full / default: env.txt's quick line, else the CSVs'; full where a job of
        a *.full.tsv suite line ran."""
        env = {}
        try:
            with open(os.path.join(self.reps[0], "env.txt"), errors="replace") as f:
                env = dict(l.strip().partition(": ")[::2] for l in f if ": " in l)
        except OSError:
            pass
        quick = env.get("quick") or {"yes": "1", "no": "0"}.get("".join(self.meta_values("quick")), "")
        suites = os.path.join(ROOT, "scripts", "suite.d")
        progs = lambda full: {l.split("\t")[0] for p in glob.glob(os.path.join(suites, "*.tsv"))
                              if p.endswith(".full.tsv") == full for l in open(p) if not l.startswith("#")}
        full = bool({j.get("program") for _, j in self.jobs} & (progs(True) - progs(False)))
        return ("quick" if quick == "1" else "default or full" if quick == "0" else "unknown") + (" + full" if full else "")

    def _header(self):
        """[(field, text)] of the run: from the CSV metadata, machine.txt and manifest.csv."""
        secs = [vlresults.number(j.get("seconds", "")) for _, j in self.jobs]
        secs = [s for s in secs if s is not None]
        tier = self.tier()
        sim = sorted({is_sim(m) for f, m in self.run.file_meta.items() if f != "device_info.csv"})
        gpus = self.meta_values("gpu")
        return [
            ("run", self.name),
            ("GPU", ", ".join(gpus) or self.state.get("gpu", "") or "none (simulated device only)"),
            ("driver", ", ".join(self.meta_values("driver")) or "unknown"),
            ("runtime", ", ".join(self.meta_values("runtime")) or "unknown"),
            ("revision", ", ".join(self.meta_values("git_revision")) or "unknown"),
            ("tier", tier + (f", {len(self.reps)} repetitions" if self.repeated else "")),
            ("duration", f"{sum(secs):.1f} s of jobs" + (" (over every repetition)" if self.repeated else "")
             if secs else "unknown (no seconds in manifest.csv)"),
            ("simulated device", "yes, in part (those results are labelled simulated)" if sim == [False, True]
             else "yes: every result is simulated" if sim == [True] else "no"),
            ("machine", self._machine()),
            ("jobs", f"{len(self.jobs)} ({sum(1 for _, j in self.jobs if vlresults.job_outcome(j) == 'ok')} ok)"),
        ]

    def _machine(self):
        """machine.txt (scripts/machine-state) of the first repetition, in one line: the
        host and the GPU's state at the start (clocks, temperature, other processes)."""
        st = self.state
        if not st:
            return "not recorded (no machine.txt)"
        bits = [f"{st.get('cpu_model', '?')} x{st.get('cpus', '?')}", f"kernel {st.get('kernel', '?')}",
                f"load {st.get('loadavg_1m', '?')}"]
        if "gpu0_sm_clock_mhz" in st:
            bits.append(f"GPU 0 at start: SM {st['gpu0_sm_clock_mhz']} of {st.get('gpu0_max_sm_clock_mhz', '?')} MHz, "
                        f"{st.get('gpu0_temperature_c', '?')} C, {st.get('gpu0_pstate', '?')}, "
                        f"other processes: {st.get('gpu_processes', '?')}")
        elif "gpu_state" in st:
            bits.append(f"GPU state: {st['gpu_state']}")
        return "; ".join(bits)

    def not_ok(self):
        """[(rep, job, outcome)] of every job skipped or failed: the report lists them first."""
        return [(rep, j, vlresults.job_outcome(j)) for rep, j in self.jobs if vlresults.job_outcome(j) != "ok"]

    def _programs(self):
        """{program: [csv file names]} of the programs that ran (an ok job, or a CSV where
        the folder has no manifest), in the order of the manifest."""
        progs = {}
        ok = [j for _, j in self.jobs if vlresults.job_outcome(j) == "ok"]
        if ok:
            for j in ok:
                f = j.get("csv", "")
                if f in self.run.files:
                    progs.setdefault(j["program"], [])
                    if f not in progs[j["program"]]:
                        progs[j["program"]].append(f)
        elif not self.jobs:
            for f in sorted(self.run.files):
                if not f.startswith("hyperfine/") and f != "device_info.csv":
                    progs.setdefault(self.run.program_of[f], []).append(f)
        progs.pop("device_info", None)
        return progs

    def tag(self, prog, fname):
        """The allocator part of a CSV's name (caching_segments_expandable.sim)."""
        return fname[len(prog) + 1:-4] if fname.startswith(prog + ".") else fname

    def simulated(self, fname):
        return is_sim(self.run.file_meta.get(fname, {}))

    def simulated_only(self, prog):
        files = self.programs.get(prog, [])
        return bool(files) and all(self.simulated(f) for f in files)

    def alloc(self, fname):
        return self.run.file_meta.get(fname, {}).get("alloc", "")

    def plot(self, prog):
        """The program's plot, relative to the run folder, where plots.sh made one."""
        for base in [self.path] + self.reps[:1]:
            p = os.path.join(base, "plots", prog + ".png")
            if os.path.isfile(p):
                return os.path.relpath(p, self.path)
        return None

    def key_table(self, prog):
        """(column, [row key], {file: {row key: Metric}}, rows left out): the program's key
        measurement per row and allocator; scenarios: their bad and fixed rows only."""
        files = self.programs.get(prog, [])
        col = KEY.get(prog)
        if not col or not any(m.name == col for f in files for m in self.run.files.get(f, [])):
            col = next((m.name for f in files for m in self.run.files.get(f, []) if m.name.endswith("_median")
                        or re.search(r"_median_", m.name)), None)
            if col is None:
                col = next((m.name for f in files for m in self.run.files.get(f, [])), None)
        rows, cells = [], {}
        for f in files:
            for m in self.run.files.get(f, []):
                if m.name != col:
                    continue
                role = re.search(r"(?:^|,)role=([^,]*)", m.row)
                if role and role.group(1) not in ("bad", "fixed"):
                    continue
                row = workload(m.row)
                cells.setdefault(f, {}).setdefault(row, m)
                if row not in rows:
                    rows.append(row)
        return col, rows[:MAX_ROWS], cells, max(0, len(rows) - MAX_ROWS)


# Identity columns that hold a measurement or a count of this process (side_work_ms is
# measured, trials differ by tier): left out of the row a table aligns allocators on.
NOT_WORKLOAD = {"side_work_ms", "trials", "reps", "simulated", "sample"}


def workload(row):
    """A metric's row key without NOT_WORKLOAD: the same workload under every allocator."""
    return ",".join(p for p in row.split(",") if p.split("=", 1)[0] not in NOT_WORKLOAD)


def find_run(arg, results):
    """A run given as a path, or as a name under results/ (VL_RESULTS, then the tree's:
    reference/h200-quick)."""
    tree = os.path.join(ROOT, "results")
    for p in (arg, os.path.join(results, arg), os.path.join(tree, arg)):  # the tree's stored runs too
        if os.path.isdir(p):
            return p
    raise vlresults.BadInput(arg, "no such results folder (a path, or a run under results/)")


def has_csvs(path):
    return bool(glob.glob(os.path.join(path, "*.csv")) or glob.glob(os.path.join(path, "rep-*", "*.csv")))

