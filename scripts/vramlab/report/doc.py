"""The report's documents (render.py's model) for one run and for a comparison of two."""
import csv
import math

from vramlab.report import answers, collect
from vramlab.report.render import Data, Md


def num(v):
    """A figure as the tables print it: 4 significant digits, thousands separated."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "\u2014" if v is None else str(v)
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a == int(a):
        return f"{v:.0f}"
    return f"{v:.4g}"


def cell(m):
    """A metric with its spread: with repetitions the median and its interval over them."""
    return Md(_cell(m))  # made here from numbers: no value of the run in it


def _cell(m):
    if m is None:
        return "\u2014"
    v, lo, hi, how = answers.metric_summary(m)
    if lo is None or hi is None or (lo == v == hi and len(m.samples) == 1):
        return num(v)
    if len(m.samples) > 1:
        return f"{num(v)} [{num(lo)}, {num(hi)}]"
    return f"{num(v)} ({num(lo)}\u2013{num(hi)})"


def spread_note(data):
    return ("Each figure is the median over the repetitions, [its signed-rank interval] "
            "(scripts/compare.d/rankstats.py; with few repetitions, their min..max)."
            if data.repeated else
            "Each figure is one process's value; (p25\u2013p75 inside the process) where the program keeps them.")


def jobs_block(data):
    """Skipped and failed jobs, each with its reason: first in the report, never hidden."""
    bad = data.not_ok()
    if not bad:
        return [("p", "Every job ran: none skipped, none failed.")]
    rows = [[Data(rep) if rep else "", Data(j.get("program", "")), Data(j.get("device", "")), Data(j.get("alloc", "")),
             Data(outcome), Data(j.get("exit_code", "")),
             Data(j.get("note", "").strip() or "(no note in manifest.csv)")] for rep, j, outcome in bad]
    return [("table", ["repetition", "program", "device", "allocator", "status", "exit", "reason (manifest note)"],
             rows)]


def key_table(data, prog):
    """The key measurement of a program per row (its workload) and allocator."""
    col, rows, cells, left = data.key_table(prog)
    files = [f for f in data.programs[prog] if f in cells]
    if not col or not rows:
        return [("p", f"inconclusive: no key measurement found in {prog}'s CSVs")]
    label = lambda f: [Data(data.tag(prog, f)), Md(" *(simulated)*") if data.simulated(f) else ""]  # noqa: E731
    if len(files) > 6 and len(rows) <= 8:  # many allocators or traces, few workloads: one line each
        head = [Data("allocator (trace)")] + [Data(r) for r in rows]
        body = [label(f) and [label(f)] + [cell(cells[f].get(r)) for r in rows] for f in files]
    else:
        head = [Data("row (workload, variant)")] + [label(f) for f in files]
        body = [[Data(r)] + [cell(cells[f].get(r)) for f in files] for r in rows]
    out = [("p", ["Key measurement: ", Data(col), Md(f". {spread_note(data)}")]), ("table", head, body)]
    if left:
        out.append(("p", f"... and {left} more rows in the CSVs."))
    return out


def program_section(data, prog):
    ans = answers.answer(data, prog)
    sim = data.simulated_only(prog)
    out = [("h2", [Data(prog)] + ([Md(" (simulated device)")] if sim else []))]
    out.append(("p", [Md("**Claim:** "), Data(ans.claim)]))
    out.append(("p", [Md("**On this machine:** "), Md(f"**{ans.verdict}**"), Data(": " + ans.why if ans.why else "")]))
    if ans.rows:
        out.append(("p", "Its rows of the scenario table, with this run's figures:"))
        out.append(("table", ["allocator", "bad", "fixed"], [[Md(a), Md(b), Md(f)] for a, b, f in ans.rows]))
    if ans.missing:
        out.append(("list", [[Md(a or "\u2014"), Data(": not in this run: " + why)] for a, why in ans.missing]))
    out += key_table(data, prog)
    plot = data.plot(prog)
    if plot:
        out.append(("img", plot, f"{prog} plot"))
    return out, ans


def scenario_table(data, template=None, spec_figures=None, source=None, gaps=None):
    """The scenario table: the findings_table template's rows with this run's figures, and
    each scenario's answer on this run beside its first row. The README's table is this
    table of its source run (scripts/findings, block flag "report"): one phrasing. gaps, a
    list, gets (program, why) for each program that did not run or row it could not fill."""
    rows = answers.table_rows(template)
    figs = answers.Figures(data.reps[0], spec_figures, source)
    gaps = [] if gaps is None else gaps
    body = []
    for prog in dict.fromkeys(r[0] for r in rows):
        if prog not in data.programs:
            gaps.append((prog, "did not run"))
            body.append([Data(prog), "\u2014", "\u2014", "\u2014", "did not run"])
            continue
        ans = answers.answer(data, prog, rows, figs)
        gaps += [(prog, "not in this run: " + why) for _, why in ans.missing]
        first = [Md(f"**{ans.verdict}**"), Data(": " + ans.why if ans.why else "")]
        lines = [(a, Md(b), Md(f)) for a, b, f in ans.rows] + \
                [(a, Data("not in this run: " + why), "") for a, why in ans.missing]
        for i, (alloc, bad, fixed) in enumerate(lines):
            body.append([Data(prog) if i == 0 else "", Md(alloc or "\u2014"), bad, fixed, first if i == 0 else ""])
    return ("table", ["scenario", "allocator", "bad", "fixed", "answer on this run"], body)


def run_doc(data):
    """The report of one run: header, skipped and failed jobs, scenarios, then benchmarks."""
    doc = [("h1", ["vramlab report: ", Data(data.name)])]
    header = list(data.header)
    incomplete = data.run.incomplete
    header.append(("complete", "yes" if not incomplete else
                   f"no: {len(incomplete)} folder(s) without COMPLETE (interrupted, or stored before runs were marked)"))
    doc.append(("table", ["", "this run"], [[k, Data(v)] for k, v in header]))
    doc.append(("h2", "Jobs skipped or failed"))
    doc += jobs_block(data)
    summary, scenarios, benches = [], [], []
    for prog in data.programs:
        section, ans = program_section(data, prog)
        (benches if prog in collect.BENCHMARKS else scenarios).append(section)
        summary.append([Data(prog), Md(f"**{ans.verdict}**"), Data(ans.why)])
    doc.append(("h2", "Answers"))
    doc.append(("table", ["program", "answer", "why"], summary) if summary else ("p", "No program ran."))
    doc.append(("h2", "Scenario table"))
    doc.append(("p", "The README's table, made by the same code from this run's figures:"))
    doc.append(scenario_table(data))
    for s in scenarios:
        doc += s
    if benches:
        doc.append(("h1", "Benchmarks: allocator against allocator"))
        for s in benches:
            doc += s
    return doc


# --- comparison ------------------------------------------------------------------------
def read_compare_csv(path):
    with open(path, newline="") as f:
        lines = [l for l in f if not l.startswith("#")]
    return list(csv.DictReader(lines))


def program_of(row):
    f = row.get("file_a", "")
    return f if f.startswith("hyperfine/") else f.split(".", 1)[0]


def compare_doc(a, b, rows, stdout, rc):
    """The comparison report from scripts/compare's verdicts (its compare.csv and output)."""
    doc = [("h1", ["vramlab comparison: ", Data(a.name), " against ", Data(b.name)])]
    verdict = {0: "no regression", 1: "regression, or a program missing or failed", 2: "bad input"}.get(rc, f"exit {rc}")
    doc.append(("p", [f"scripts/compare exit status {rc}: {verdict}. ", Data(next(
        (l for l in reversed(stdout.splitlines()) if l.startswith("compare: ")), ""))]))
    ha, hb = dict(a.header), dict(b.header)
    doc.append(("table", ["", "A", "B"], [[k, Data(ha[k]), Data(hb.get(k, ""))] for k, _ in a.header]))
    moved = [r for r in rows if r.get("verdict") != "same"]
    order = {"slower": 0, "worse": 0, "faster": 1, "better": 1}
    moved.sort(key=lambda r: (r.get("regression") != "1", order.get(r.get("verdict"), 2), r.get("file_a", "")))
    real = [r for r in moved if r.get("verdict") in order]
    doc.append(("h2", f"Metrics that moved ({len(real)} real changes; {len(moved) - len(real)} inconclusive)"))
    if real:
        doc.append(("table", ["file", "row", "metric", "A", "B", "B / A [95% interval]", "verdict"],
                    [[Data(r["file_a"] if r["file_a"] == r["file_b"] else f"{r['file_a']} ~ {r['file_b']}"),
                      Data(r["row"]), Data(r["metric"]), Data(r["a"]), Data(r["b"]),
                      Data(f"{r['ratio']} [{r['ratio_lo']}, {r['ratio_hi']}]"),
                      [Md("**REGRESSION** ") if r.get("regression") == "1" else "", Data(r["verdict"])]]
                     for r in real[:200]]))
    else:
        doc.append(("p", "No metric changed beyond the threshold."))
    doc.append(("h2", "Answers on A and on B"))
    progs = list(a.programs) + [p for p in b.programs if p not in a.programs]
    body = []
    for p in progs:
        va = answers.answer(a, p) if p in a.programs else None
        vb = answers.answer(b, p) if p in b.programs else None
        changed = "not run on one side" if not (va and vb) else (
            "changed" if va.verdict != vb.verdict else "same answer")
        n = sum(1 for r in real if program_of(r) == p)
        changed += f"; {n} metric(s) moved" if n else "; no metric moved"
        body.append([Data(p), Data(va.sentence if va else "did not run"), Data(vb.sentence if vb else "did not run"),
                     changed])
    doc.append(("table", ["program", "A", "B", "what changed"], body))
    counts = {}
    for r in rows:
        counts[r.get("verdict", "")] = counts.get(r.get("verdict", ""), 0) + 1
    doc.append(("p", Data("Verdicts over every metric: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))))
    doc.append(("h2", "What could not be compared"))
    lines, section = [], False
    for l in stdout.splitlines():
        if l.startswith(("not paired:", "missing or failed:")):
            section = True
        elif section and not l.startswith("  "):
            section = False
        if section or "only in" in l or l.startswith(("compare: INCOMPLETE", "compare: vacuous", "compare: bad input")):
            lines.append(Data(l.strip()))
    doc.append(("list", lines) if lines else ("p", "Everything was paired and compared."))
    return doc
