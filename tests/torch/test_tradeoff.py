#!/usr/bin/env python3
"""make test: vramlab.torch's tradeoff, tradeoff_procs, steps_from, relocation, binding and conflict (run
as scripts/vl torch.NAME) on synthetic run folders (no torch, no GPU). Their checks are in vramlab.verdict's
words (PASS, FAIL, INCONCLUSIVE); binding also reads the words stored runs wrote before (ok, slower)."""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VL = [sys.executable, os.path.join(ROOT, "scripts", "vl")]  # scripts/vl torch.NAME, as the docs run them
failed = skipped = checks = 0


def check(name, ok, got=None):
    global failed, checks
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {got}"))
    failed += not ok
    checks += 1


def renders(script, folder, table_text, labels="x"):
    """plots/SCRIPT draws table_text (written to folder) into a PNG, where gnuplot is."""
    global skipped
    if not shutil.which("gnuplot"):
        print(f"SKIP plots/{script}: no gnuplot")
        skipped += 1
        return
    root = ROOT
    table, png = os.path.join(folder, "t.csv"), os.path.join(folder, "t.png")
    with open(table, "w") as f:
        f.write(table_text)
    g = subprocess.run(["gnuplot", "-c", os.path.join(root, "plots", script), png, table, labels],
                       capture_output=True, text=True, cwd=root)
    check(f"plots/{script} renders the table", g.returncode == 0 and os.path.getsize(png) > 1000,
          (g.returncode, g.stderr[-300:]))


def write(logs, name, **d):
    with open(os.path.join(logs, name), "w") as f:
        json.dump(d, f)


with tempfile.TemporaryDirectory() as run:
    logs = os.path.join(run, "logs")
    os.makedirs(logs)
    for w in ("wA", "wB"):
        write(logs, f"r1.{w}.def.json", status="ok", peak_reserved_bytes=1100, peak_allocated_bytes=1000,
              maps_per_step=0.5, unmaps_per_step=0.0)
        write(logs, f"r1.{w}.low.json", status="ok", peak_reserved_bytes=1010, peak_allocated_bytes=1000,
              maps_per_step=40.0, unmaps_per_step=30.0)
    # wA's pair: 4 steps, 1 warm-up; units served A B B A A B B A; B's timed steps take 12
    # and A's 10, but for one B step of 30 (a burst): total 12+30+12 over 30 = 1.8
    times = [100, 100, 12, 10, 10, 30, 12, 10]
    write(logs, "r1.wA.def+low.json", status="ok", step_ms_all=times, served_by=[0, 1, 1, 0, 0, 1, 1, 0],
          steps_timed=3, paired_ratio=1.2)
    open(os.path.join(logs, "r1.wB.def+low.log"), "w").close()  # failed: a log, no JSON
    p = subprocess.run(VL + ["torch.tradeoff", run, "--a", "def", "--b", "low"],
                       capture_output=True, text=True)
    p_table = p.stdout
    rows = {r["workload"]: r for r in csv.DictReader(io.StringIO(p.stdout))}
    check("exit 0, a row per workload", p.returncode == 0 and sorted(rows) == ["wA", "wB"], (p.returncode, p.stderr))
    a = rows.get("wA", {})
    check("wastes from each SPEC's own process", a.get("a_waste") == "1.1" and a.get("b_waste") == "1.01", a)
    check("the pair's timed total, warm-up left out: 54 / 30", a.get("time_ratio") == "1.8"
          and a.get("median_ratio") == "1.2" and a.get("timed_steps") == "3", a)
    b = rows.get("wB", {})
    check("a failed pair: empty columns, named in failed", b.get("time_ratio") == ""
          and b.get("failed") == "def+low" and b.get("b_waste") == "1.01", b)
    p = subprocess.run(VL + ["torch.tradeoff", logs, "--b", "low"],
                       capture_output=True, text=True)
    check("a folder without logs/: exit 2 and one line", p.returncode == 2 and len(p.stderr.splitlines()) == 1,
          (p.returncode, p.stderr))
    # the figure from that table (a failed pair's empty columns included), where gnuplot is
    renders("zoo_tradeoff_live.gp", run, p_table)
    p = subprocess.run(VL + ["torch.tradeoff", run, "--a", "def", "--b", "lowe"],
                       capture_output=True, text=True)
    check("a SPEC name the run lacks: exit 1, named", p.returncode == 1 and "lowe" in p.stderr and not p.stdout,
          (p.returncode, p.stderr, p.stdout))
# tradeoff_procs.py: the same trade-off from separate processes (summary.csv of one run)
SUMMARY_COLS = ("half", "workload", "allocator", "n", "step_ms", "ratio", "ratio_lo", "ratio_hi", "ratio_mean",
                "ratio_mean_lo", "ratio_mean_hi", "waste", "maps_per_step", "unmaps_per_step", "alloc_ms")
SUMMARY = [  # wA: the default wastes, low is shown slower; wB: low meets both; wC: low's speed unresolved
    ("tune", "wA", "torch", 4, 40, "", "", "", "", "", "", 1.3, 0.1, 0, ""),
    ("tune", "wA", "def", 4, 40.4, 1.01, 0.99, 1.02, 1.01, 0.99, 1.025, 1.12, 0.3, 0.1, 0.4),
    ("tune", "wA", "low", 4, 56, 1.4, 1.3, 1.5, 1.41, 1.32, 1.52, 1.015, 650, 650, 30),
    ("tune", "wB", "torch", 4, 10, "", "", "", "", "", "", 1.2, 0, 0, ""),
    ("tune", "wB", "def", 4, 10, 1.0, 0.98, 1.02, 1.0, 0.98, 1.02, 1.05, 0, 0, 0.1),
    ("tune", "wB", "low", 4, 10, 1.0, 0.98, 1.02, 1.0, 0.97, 1.029, 1.01, 2, 2, 0.2),
    ("tune", "wC", "torch", 4, 10, "", "", "", "", "", "", 1.2, 0, 0, ""),
    ("tune", "wC", "def", 4, 10, 1.0, 0.98, 1.02, 1.0, 0.98, 1.02, 1.05, 0, 0, 0.1),
    ("tune", "wC", "low", 4, 10.5, 1.05, 0.9, 1.2, 1.05, 0.9, 1.2, 1.01, 9, 9, 0.5),
]
with tempfile.TemporaryDirectory() as run:
    with open(os.path.join(run, "summary.csv"), "w") as f:
        f.write("# run_id: t\n# git: abc1234\n" + ",".join(SUMMARY_COLS) + "\n")
        f.writelines(",".join(str(v) for v in r) + "\n" for r in SUMMARY)
    procs = VL + ["torch.tradeoff_procs", run, "--a", "def", "--b", "low"]
    p = subprocess.run(procs, capture_output=True, text=True)
    rows = {r["workload"]: r for r in csv.DictReader(l for l in p.stdout.splitlines() if not l.startswith("#"))}
    check("procs: the run's conditions go on with the table", p.stdout.startswith("# run_id: t\n# git: abc1234\n"),
          p.stdout[:80])
    check("procs: exit 0, a row per workload", p.returncode == 0 and sorted(rows) == ["wA", "wB", "wC"],
          (p.returncode, p.stderr))
    a, b, c = rows.get("wA", {}), rows.get("wB", {}), rows.get("wC", {})
    check("procs: the default over the waste limit, low shown slower: the trade-off shown",
          a.get("a_call") == "waste over 1.02" and a.get("b_call") == "slower than 1.03x"
          and a.get("b_speed") == "FAIL" and a.get("tradeoff") == "shown" and a.get("torch_step_ms") == "40", a)
    check("procs: a SPEC within both limits meets both (both intervals at or below 1.03)",
          b.get("b_call") == "meets both" and b.get("tradeoff") == "", b)
    check("procs: an interval across 1.03 leaves the speed unresolved, no trade-off claimed",
          c.get("b_call") == "speed unresolved" and c.get("tradeoff") == "", c)
    renders("zoo_tradeoff_procs.gp", run, p.stdout)
    p = subprocess.run(procs[:-1] + ["lowe"], capture_output=True, text=True)
    check("procs: a SPEC name the run lacks: exit 1, named", p.returncode == 1 and "lowe" in p.stderr and not p.stdout,
          (p.returncode, p.stderr))
    p = subprocess.run(procs[:2] + [os.path.join(run, "none")] + procs[3:], capture_output=True, text=True)
    check("procs: a folder without summary.csv: exit 2 and one line",
          p.returncode == 2 and len(p.stderr.splitlines()) == 1, (p.returncode, p.stderr))
# --- steps_from: the step time counted from a later step ----------------------------
with tempfile.TemporaryDirectory() as run:
    logs = os.path.join(run, "logs")
    os.makedirs(logs)
    # maps_all as bench.py writes it: a reading before step 0, then one after each step
    for i in range(6):  # planned: a slow warm-up (relocation, then the plan's start), then torch's speed
        torch_ms = [600.0] + [40.0 + 0.1 * i] * 20
        planned_ms = [600.0, 90.0, 80.0, 70.0, 300.0] + [40.0 + 0.1 * i] * 16
        write(logs, f"r{i}.lm-fixed.torch.json", status="ok", workload="lm-fixed", allocator="torch",
              step_ms_all=torch_ms, maps_all=[0] * 22)
        write(logs, f"r{i}.lm-fixed.planned.json", status="ok", workload="lm-fixed", allocator="planned",
              step_ms_all=planned_ms, maps_all=[1, 700, 1400, 2100, 2400] + [2400] * 17)
    sf = VL + ["torch.steps_from", run]
    rows = lambda out: {r["allocator"]: r for r in csv.DictReader(l for l in out.splitlines() if not l.startswith("#"))}
    p = subprocess.run(sf + ["--from", "5"], capture_output=True, text=True)
    r = rows(p.stdout).get("planned", {})
    check("steps_from: after the warm-up, equal steps: ratio 1, ok, no map call",
          p.returncode == 0 and r.get("ratio") == "1" and r.get("ratio_mean") == "1" and r.get("speed") == "PASS"
          and r.get("maps_per_step_mean") == "0" and r.get("steps") == "16", (p.returncode, p.stderr, r))
    p = subprocess.run(sf + ["--from", "4"], capture_output=True, text=True)
    r = rows(p.stdout).get("planned", {})
    check("steps_from: map calls counted from step FROM itself (step 3's 300 left out)",
          p.returncode == 0 and r.get("maps_per_step_mean") == "0", (p.returncode, p.stderr, r))
    p = subprocess.run(sf + ["--from", "1"], capture_output=True, text=True)
    r = rows(p.stdout).get("planned", {})
    check("steps_from: counting the warm-up, the mean step is slower",
          p.returncode == 0 and r.get("speed") == "FAIL" and float(r.get("ratio_mean", 0)) > 1.03, (p.stdout, r))
    p = subprocess.run(sf + ["--from", "40"], capture_output=True, text=True)
    check("steps_from: a step past every process's last: exit 1, said", p.returncode == 1 and "from 40" in p.stderr,
          (p.returncode, p.stderr))
    p = subprocess.run(sf + ["--from", "5", "--ref", "cuda"], capture_output=True, text=True)
    check("steps_from: a reference the run lacks: exit 1, named", p.returncode == 1 and "cuda" in p.stderr,
          (p.returncode, p.stderr))
    p = subprocess.run(sf + ["--from", "0"], capture_output=True, text=True)
    check("steps_from: --from 0 (the cold step): exit 2", p.returncode == 2, (p.returncode, p.stderr))
    p = subprocess.run(sf + ["--per-step", "--workload", "lm-fixed"], capture_output=True, text=True)
    steps = list(csv.DictReader(l for l in p.stdout.splitlines() if not l.startswith("#")))
    check("steps_from --per-step: a row a step, medians and map calls per allocator",
          p.returncode == 0 and len(steps) == 21 and steps[4]["planned_ms"] == "300" and steps[4]["planned_maps"] == "0"
          and steps[1]["planned_maps"] == "700" and steps[5]["torch_ms_min"] == "40" and steps[5]["torch_ms_max"] == "40.5",
          (p.returncode, p.stderr, steps[:6]))
    renders("plan_steps.gp", run, p.stdout, "planned torch")
    p = subprocess.run(sf + ["--per-step"], capture_output=True, text=True)
    check("steps_from --per-step without --workload: exit 2", p.returncode == 2, (p.returncode, p.stderr))

# --- relocation.py: the reclaim budget and hidden relocation, from the processes' logs ------
with tempfile.TemporaryDirectory() as run:
    logs = os.path.join(run, "logs")
    os.makedirs(logs)
    rl = VL + ["torch.relocation", run]
    write(logs, "r1.ckpt.torch.json", workload="ckpt", allocator="torch", status="ok")
    p = subprocess.run(rl, capture_output=True, text=True)
    check("relocation: no process reports a budget: exit 1, said", p.returncode == 1 and "no process" in p.stderr,
          (p.returncode, p.stderr))
    for r, (ppm, hidden, exposed, map_ns, exposed_ns) in enumerate(
            [(8000, 900, 0, 1e8, 0), (8000, 1100, 2, 2e8, 1e8), (16000, 500, 40, 3e8, 2e8)]):
        write(logs, f"r{r}.ckpt.idle.json", workload="ckpt", allocator="idle", status="ok", budget_ppm=ppm,
              relocation_maps_hidden=hidden, relocation_maps_exposed=exposed, relocation_map_ns=map_ns,
              relocation_exposed_ns=exposed_ns, relocation_unmap_ns=2 * map_ns, steps_s=4.0, maps_total=2000 + r)
    write(logs, "r9.ckpt.idle.json", workload="ckpt", allocator="idle", status="failed", budget_ppm=250000,
          relocation_maps_hidden=0, relocation_maps_exposed=999)
    p = subprocess.run(rl, capture_output=True, text=True)
    got = list(csv.DictReader(io.StringIO(p.stdout)))
    r = got[0] if len(got) == 1 else {}
    check("relocation: medians and ranges over the ok processes, PyTorch's and failed ones left out",
          p.returncode == 0 and r.get("processes") == "3" and r.get("budget_median") == "0.008"
          and r.get("budget_max") == "0.016" and r.get("hidden_median") == "900" and r.get("exposed_max") == "40"
          and r.get("hidden_share") == f"{2500 / 2542:.4f}" and r.get("map_time_share") == "0.0500"
          and r.get("exposed_time_share") == "0.0250" and r.get("unmap_time_share") == "0.1000"
          and r.get("relocating_share") == f"{2542 / 6003:.4f}",
          (p.returncode, p.stderr, got))
    p = subprocess.run(VL + ["torch.relocation", logs], capture_output=True, text=True)
    check("relocation: a folder without logs/: exit 2", p.returncode == 2, (p.returncode, p.stderr))

# --- binding.py: which limit binds, per workload, from tradeoff CSVs and cold replays ------
LIVE_HEAD = "workload,a_n,a_speed,a_waste,a_ratio_mean,a_ratio_mean_lo,a_ratio_mean_hi," \
            "b_n,b_speed,b_waste,b_ratio_mean,b_ratio_mean_lo,b_ratio_mean_hi\n"
DEF, LOW, TORCH = "caching:segments=expandable", "caching:segments=expandable,span=0,reclaim_max=0.008", \
    "torch:expandable_segments=1"


def cold_csv(path, rev, procs):
    """procs: {(trace, alloc): [ops/s, ...]}, one first-pass row each."""
    with open(path, "w") as f:
        f.write(f"# git_revision: {rev}\n# gpu: GPU-X\n# driver: 1.2\nround,trace,alloc,pass,ops_per_s,reserved_over_allocated\n")
        for (trace, alloc), rates in procs.items():
            for i, x in enumerate(rates):
                f.write(f'{i + 1},{trace},"{alloc}",1,{x},1.01\n{i + 1},{trace},"{alloc}",2,{x * 9},1.01\n')


with tempfile.TemporaryDirectory() as d:
    bd = VL + ["torch.binding"]
    live4, live12, cold4, cold12 = (os.path.join(d, n) for n in ("l4.csv", "l12.csv", "c4.csv", "c12.csv"))
    # live4 holds the words a stored run's tradeoff.csv has (ok, slower, inconclusive), live12 today's (PASS)
    with open(live4, "w") as f:  # 4 a side: every workload; wT's row is replaced by the 12-a-side run
        f.write("# run_id: r4\n# git: aaa\n# device: GPU-X\n" + LIVE_HEAD +
                "wOK,4,ok,1.01,1.0,0.99,1.02,4,ok,1.01,1.0,0.99,1.02\n"
                "wT,4,inconclusive,1.05,1.0,0.9,1.1,4,inconclusive,1.01,1.0,0.9,1.1\n"
                "wS,4,ok,1.10,1.0,0.99,1.02,4,slower,1.03,1.5,1.2,1.8\n"
                "wN,4,inconclusive,1.10,1.0,0.9,1.1,4,inconclusive,1.01,1.0,0.9,1.1\n"
                "wU,4,inconclusive,1.01,1.0,0.9,1.1,4,inconclusive,1.01,1.0,0.9,1.1\n"
                "wE,4,inconclusive,1.05,1.0,0.9,1.1,4,inconclusive,,,,\n")
    with open(live12, "w") as f:
        f.write("# run_id: r12\n# git: bbb\n" + LIVE_HEAD + "wT,12,PASS,1.05,1.0,0.99,1.02,12,PASS,1.008,1.0,0.99,1.02\n")
    fast, slow = [100.0, 110, 120, 130], [10.0, 11, 12, 13]
    base = {(w, TORCH): [50.0, 55, 60, 65] for w in ("wOK", "wT", "wS", "wN", "wU", "wE")}
    cold_csv(cold4, "ccc", {**base, **{(w, DEF): fast for w in ("wOK", "wT", "wS", "wN", "wU", "wE")},
                            ("wOK", LOW): fast, ("wT", LOW): fast, ("wS", LOW): slow, ("wN", LOW): fast,
                            ("wU", LOW): fast, ("wE", LOW): fast})
    # the 12-a-side cold run has wT only, the low-waste SPEC slower there
    cold_csv(cold12, "ddd", {("wT", TORCH): [50.0 + i for i in range(12)], ("wT", DEF): [100.0 + i for i in range(12)],
                             ("wT", LOW): [10.0 + i for i in range(12)]})
    p = subprocess.run(bd + ["--live", live4, "--live", live12, "--cold", cold4, "--cold", cold12],
                       capture_output=True, text=True)
    got = {r["workload"]: r for r in csv.DictReader(line for line in p.stdout.splitlines() if not line.startswith("#"))}
    meta = [line for line in p.stdout.splitlines() if line.startswith("#")]
    check("binding: per workload what binds",
          p.returncode == 0 and {w: r["binds"] for w, r in got.items()} ==
          {"wOK": "default meets both", "wT": "cold replay", "wS": "waste; step time; cold replay",
           "wN": "nothing shown", "wU": "default's speed unresolved", "wE": "no result"},
          (p.returncode, p.stderr, got))
    check("binding: the live row with the most processes, and the cold file with the most",
          got.get("wT", {}).get("live_run") == "r12" and got["wT"]["default_n"] == "12" and got["wT"]["cold_n"] == "12"
          and got["wT"]["lowwaste_cold_call"] == "FAIL" and got["wN"]["cold_n"] == "4"
          and got["wN"]["lowwaste_cold_call"] == "PASS", got.get("wT"))
    check("binding: the inputs' revisions, GPU and driver as metadata",
          all(m in meta for m in ("# git_revision: aaa, bbb, ccc, ddd", "# gpu: GPU-X", "# driver: 1.2"))
          and got["wT"]["cold_git"] == "ddd" and got["wN"]["cold_git"] == "ccc", (meta, got.get("wT")))
    renders("zoo_binding.gp", d, p.stdout)
    cold_csv(cold4, "ccc", {**base, **{(w, DEF): fast for w in ("wOK", "wT", "wS", "wN", "wU")}})
    p = subprocess.run(bd + ["--live", live4, "--cold", cold4], capture_output=True, text=True)
    check("binding: a workload without the low-waste SPEC's cold replay: exit 1, named",
          p.returncode == 1 and "wOK" in p.stderr, (p.returncode, p.stderr))
    p = subprocess.run(bd + ["--live", os.path.join(d, "none.csv"), "--cold", cold4], capture_output=True, text=True)
    check("binding: a missing input: exit 2, named", p.returncode == 2 and "none.csv" in p.stderr,
          (p.returncode, p.stderr))

# --- conflict: one SPEC against waste and the cold replay on every workload ------------
SUMMARY_HEAD = "half,workload,allocator,spec,n,waste\n"
with tempfile.TemporaryDirectory() as d:
    cf = VL + ["torch.conflict"]
    s4, s12, c4, specs = (os.path.join(d, n) for n in ("s4.csv", "s12.csv", "c4.csv", "specs.csv"))
    with open(s4, "w") as f:  # 4 a side; wB's default row is replaced by the 12-a-side run
        f.write("# run_id: r4\n# git: aaa\n# device: GPU-X\n" + SUMMARY_HEAD +
                f"t,wA,torch,default,4,1.3\nt,wA,vramlab-expandable,{DEF},4,1.01\nt,wA,low,\"{LOW}\",4,1.005\n"
                f"t,wB,vramlab-expandable,{DEF},4,1.01\nt,wB,low,\"{LOW}\",4,1.03\n"
                f"t,wC,vramlab-expandable,{DEF},4,1.05\nt,wC,low,\"{LOW}\",4,1.01\n"
                f"t,wD,vramlab-expandable,{DEF},4,1.01\nt,wD,low,\"{LOW}\",4,1.01\n"
                f"t,wA,big,\"{DEF},span=32MiB\",1,1.05\nt,wB,big,\"{DEF},span=32MiB\",1,1.01\n")
    with open(s12, "w") as f:
        f.write("# run_id: r12\n# git: bbb\n# device: GPU-X\n" + SUMMARY_HEAD + f"t,wB,vramlab-expandable,{DEF},12,1.08\n")
    fast, slow, mixed = [100.0, 110, 120, 130], [10.0, 11, 12, 13], [40.0, 52, 61, 75]
    base = {(w, TORCH): [50.0, 55, 60, 65] for w in ("wA", "wB", "wC", "wD")}
    cold_csv(c4, "ccc", {**base, ("wA", DEF): fast, ("wA", LOW): fast, ("wB", DEF): fast, ("wB", LOW): slow,
                         ("wC", DEF): fast, ("wC", LOW): slow, ("wD", DEF): mixed, ("wD", LOW): fast})
    p = subprocess.run(cf + ["--live", s4, "--live", s12, "--cold", c4, "--specs", specs], capture_output=True, text=True)
    got = {(r["spec"], r["workload"]): r for r in
           csv.DictReader(line for line in p.stdout.splitlines() if not line.startswith("#"))}
    check("conflict: per SPEC and workload what the two limits show",
          p.returncode == 0 and {k: r["meets"] for k, r in got.items()} ==
          {(DEF, "wA"): "both", (DEF, "wB"): "waste", (DEF, "wC"): "waste", (DEF, "wD"): "unresolved",
           (LOW, "wA"): "both", (LOW, "wB"): "waste; cold", (LOW, "wC"): "cold", (LOW, "wD"): "both",
           (DEF + ",span=32MiB", "wA"): "waste", (DEF + ",span=32MiB", "wB"): "unresolved"},
          (p.returncode, p.stderr, {k: r["meets"] for k, r in got.items()}))
    check("conflict: the live run with the most processes", got.get((DEF, "wB"), {}).get("live_run") == "r12"
          and got[(DEF, "wB")]["live_n"] == "12" and got[(DEF, "wB")]["waste"] == "1.0800", got.get((DEF, "wB")))
    rows = list(csv.DictReader(line for line in open(specs) if not line.startswith("#"))) if os.path.exists(specs) else []
    check("conflict: per SPEC the counts and where both hold (a live-only waste over 1.02 counts)",
          [(r["options"], r["spec"], r["workloads"], r["both"], r["waste_over"], r["cold_slower"], r["unresolved"],
            r["both_on"]) for r in rows] == [("default", DEF, "4", "1", "2", "0", "1", "wA"),
                                             ("span=0 reclaim_max=0.008", LOW, "4", "2", "1", "2", "0", "wA wD"),
                                             ("span=32MiB", DEF + ",span=32MiB", "2", "0", "1", "0", "1", "")], rows)
    renders("zoo_conflict.gp", d, p.stdout)
    with open(s12, "w") as f:
        f.write("# run_id: r12\n# git: bbb\n# device: GPU-Y\n" + SUMMARY_HEAD + f"t,wB,vramlab-expandable,{DEF},12,1.08\n")
    p = subprocess.run(cf + ["--live", s4, "--live", s12, "--cold", c4], capture_output=True, text=True)
    check("conflict: inputs from two GPUs are refused (exit 2, both named)", p.returncode == 2
          and "GPU-X" in p.stderr and "GPU-Y" in p.stderr, (p.returncode, p.stderr))
    cold_csv(c4, "ccc", {("wZ", TORCH): [1.0, 2, 3, 4], ("wZ", DEF): [1.0, 2, 3, 4]})
    p = subprocess.run(cf + ["--live", s4, "--cold", c4], capture_output=True, text=True)
    check("conflict: nothing joined (no workload with both): exit 1", p.returncode == 1 and "no SPEC" in p.stderr,
          (p.returncode, p.stderr))
    p = subprocess.run(cf + ["--live", s4, "--cold", c4, "--specs", s4], capture_output=True, text=True)
    check("conflict: --specs naming an input is refused, the input kept", p.returncode == 2
          and open(s4).read().startswith("# run_id: r4"), (p.returncode, p.stderr))
    p = subprocess.run(cf + ["--live", os.path.join(d, "none.csv"), "--cold", c4], capture_output=True, text=True)
    check("conflict: a missing input: exit 2, named", p.returncode == 2 and "none.csv" in p.stderr, p.stderr)

print(f"{'FAILED' if failed else 'passed'}: test_tradeoff, {checks - failed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
