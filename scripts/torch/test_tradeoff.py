#!/usr/bin/env python3
"""make test: scripts/torch/tradeoff.py on a synthetic run folder (no torch, no GPU)."""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
failed = skipped = 0


def check(name, ok, got=None):
    global failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {got}"))
    failed += not ok


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
    p = subprocess.run([sys.executable, os.path.join(HERE, "tradeoff.py"), run, "--a", "def", "--b", "low"],
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
    p = subprocess.run([sys.executable, os.path.join(HERE, "tradeoff.py"), logs, "--b", "low"],
                       capture_output=True, text=True)
    check("a folder without logs/: exit 2 and one line", p.returncode == 2 and len(p.stderr.splitlines()) == 1,
          (p.returncode, p.stderr))
    # the figure from that table (a failed pair's empty columns included), where gnuplot is
    root = os.path.dirname(os.path.dirname(HERE))
    if shutil.which("gnuplot"):
        table, png = os.path.join(run, "t.csv"), os.path.join(run, "t.png")
        with open(table, "w") as f:
            f.write(p_table)
        g = subprocess.run(["gnuplot", "-c", os.path.join(root, "plots", "zoo_tradeoff_live.gp"), png, table, "x"],
                           capture_output=True, text=True, cwd=root)
        check("plots/zoo_tradeoff_live.gp renders the table", g.returncode == 0 and os.path.getsize(png) > 1000,
              (g.returncode, g.stderr[-300:]))
    else:
        print("SKIP plots/zoo_tradeoff_live.gp: no gnuplot")
        skipped += 1
    p = subprocess.run([sys.executable, os.path.join(HERE, "tradeoff.py"), run, "--a", "def", "--b", "lowe"],
                       capture_output=True, text=True)
    check("a SPEC name the run lacks: exit 1, named", p.returncode == 1 and "lowe" in p.stderr and not p.stdout,
          (p.returncode, p.stderr, p.stdout))
print(f"{'FAILED' if failed else 'passed'}: test_tradeoff, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
