"""The complete rounds of a time-boxed torch-bench run, as a result of their own.

A run cut by its budget (make torch-bench BUDGET=...) keeps every finished process, but it
has no COMPLETE marker: it is unfinished, and `make findings` refuses it. Its first rounds
are complete, though: every (workload, allocator) of the schedule ran in them. This copies
the rows of the rounds in which every pair has an ok sample, up to the first round that
lacks one, into OUT/samples.csv (the run's '#' lines kept, plus one saying which rounds of
how many) and the run's nvidia-smi*.txt, writes OUT/COMPLETE, and summarizes OUT with the bench's own statistics. A
later round's stray processes stay out, so that no workload gets more processes than
another by the clock alone.
  scripts/vl torch.complete_rounds RUN_DIR OUT_DIR
Exit 0; 1 when not even the first round is complete; 2 usage (OUT_DIR must not exist:
a result never overwrites another)."""
import os
import shutil
import sys

from vramlab.torch import bench


def complete_rounds(rows):
    """The rounds 1..k in which every (workload, allocator) pair of the run has an ok row."""
    pairs = {(r["workload"], r["allocator"]) for r in rows}
    ok = {}
    for r in rows:
        if r.get("status") == "ok":
            ok.setdefault(int(r["round"]), set()).add((r["workload"], r["allocator"]))
    k = 0
    while ok.get(k + 1, set()) >= pairs and pairs:
        k += 1
    return k


def main(argv):
    if len(argv) != 3:
        print("usage: scripts/vl torch.complete_rounds RUN_DIR OUT_DIR", file=sys.stderr)
        return 2
    src, out = argv[1], argv[2]
    if os.path.exists(out):
        print(f"complete_rounds: {out} exists: a result never overwrites another", file=sys.stderr)
        return 2
    rows, comments = bench.load_samples(os.path.join(src, "samples.csv"))
    if not rows:
        print(f"complete_rounds: no samples in {src}", file=sys.stderr)
        return 2
    k = complete_rounds(rows)
    if k == 0:
        print(f"complete_rounds: {src}: not even round 1 is complete", file=sys.stderr)
        return 1
    planned = next((c.split(":", 1)[1].strip() for c in comments if c.startswith("rounds:")), "?")
    kept = [r for r in bench.latest(rows) if int(r["round"]) <= k]
    note = f"complete rounds: 1-{k} of {planned} planned (complete_rounds.py; {len(rows) - len(kept)} later rows left out)"
    os.makedirs(out)
    bench.finish(out, kept, None, comments + [note], plots=False)  # writes OUT/samples.csv too
    for name in os.listdir(src):  # the device's record travels with the rows
        if name.startswith("nvidia-smi") and name.endswith(".txt"):
            shutil.copy(os.path.join(src, name), out)
    with open(os.path.join(out, "COMPLETE"), "w") as f:
        f.write(note + "\n")
    print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
