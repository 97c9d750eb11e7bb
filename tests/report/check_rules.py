#!/usr/bin/env python3
"""check_rules.py answers RUN REPORT_DIR: every program that ran has an answer decided
by a rule (none says "no rule decides"); prints one FAIL line per problem, exits 1 if any.
check_rules.py mutate SRC DST: copy the run SRC to DST and edit its CSVs so that the
claims of ipc_hold, stream_pools, context_cost and pinned_rounding fail (the figures
their rules decide on), for run.sh to check that each answer flips to "does not hold",
and vmm_wait's VMM call rows are gone (inconclusive, naming them).
check_rules.py mutate-multigpu SRC DST: the same for the two-GPU claims (device0_pileup:
no context on GPU 0; peer_access: peer access gains nothing).
check_rules.py verdicts REPORT_DIR PROG=VERDICT...: the summary table gives each PROG
that verdict."""
import csv
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "scripts"), HERE]
from vramlab import results as vlresults  # noqa: E402
import check_report  # noqa: E402


def answers(run, rdir):
    md = open(os.path.join(rdir, "report.md")).read()
    jobs = [j for r in (vlresults.rep_folders(run) or [run]) if os.path.isfile(os.path.join(r, "manifest.csv"))
            for j in vlresults.read_manifest(os.path.join(r, "manifest.csv"))]
    ran = {j["program"] for j in jobs if vlresults.job_outcome(j) == "ok"} - {"device_info"}
    secs = check_report.sections(md)
    bad = 0
    for prog in sorted(ran):
        key = next((k for k in secs if k == prog or k.startswith(prog + " (")), None)
        if key is None or "no rule decides" in secs[key]:
            print(f"FAIL: {prog}: no rule decides its claim" if key else f"FAIL: {prog}: no section")
            bad += 1
    return 1 if bad else 0


def edit(path, change):
    """Rewrite the data rows of CSV path (comment lines kept) with change(row dict)."""
    lines = open(path).read().split("\n")
    head = next(i for i, l in enumerate(lines) if not l.startswith("#"))
    cols = lines[head].split(",")
    body = [dict(zip(cols, r)) for r in csv.reader(lines[head + 1:]) if r]
    body = [r for r in body if change(r) is not False]  # False: the row is dropped
    with open(path, "w", newline="") as out:
        out.write("\n".join(lines[:head + 1]) + "\n")
        w = csv.writer(out, lineterminator="\n")
        w.writerows([r[c] for c in cols] for r in body)


def mutate(src, dst):
    shutil.copytree(src, dst)
    for f in ("report.md", "report.html"):
        if os.path.exists(os.path.join(dst, f)):
            os.remove(os.path.join(dst, f))

    def ipc(r):  # the consumer keeps only its block, not the segment
        if r["variant"] == "consumer_holds":
            r["held_while_shared_bytes"] = r["block_bytes"]

    def sp(r):  # per-stream allocation reserves no more than one allocation stream
        if r["variant"] == "per_stream":
            r["reserved_over_requested"], r["ooms"], r["status"] = "1.1000", "0", "ok"

    def cc(r):  # a context of 50 MiB
        if r["test"] == "context" and r["variant"] == "lazy":
            r["per_process_bytes"] = str(50 << 20)

    def pr(r):  # the pinned cache pins exactly what was asked
        if r["test"] == "hold" and r["variant"] == "pow2_cache":
            r["held_over_requested"], r["held_bytes"] = "1.0000", r["requested_bytes"]

    def vw(r):  # the VMM calls' rows lost: the figure is missing
        return r["call"] == "none"

    for name, change in (("vmm_wait.default.csv", vw), ("ipc_hold.caching.csv", ipc), ("stream_pools.caching.csv", sp),
                         ("context_cost.default.csv", cc), ("pinned_rounding.default.csv", pr)):
        edit(os.path.join(dst, name), change)
    return 0


def mutate_multigpu(src, dst):
    shutil.copytree(src, dst)

    def d0(r):  # the worker of GPU 1 leaves nothing on GPU 0
        if r["variant"] == "touch_before_set" and r["foreign_bytes_per_worker"]:
            r["foreign_bytes_per_worker"] = r["foreign_bytes"] = "0"

    def pa(r):  # peer access copies no faster than without it
        if r["variant"] == "p2p_peer_enabled":
            r["gbps"] = "38.000"

    edit(os.path.join(dst, "device0_pileup.default.csv"), d0)
    edit(os.path.join(dst, "peer_access.default.csv"), pa)
    return 0


def verdicts(rdir, pairs):
    md = open(os.path.join(rdir, "report.md")).read()
    bad = 0
    for pair in pairs:
        prog, want = pair.split("=", 1)
        m = re.search(rf"^\| {re.escape(prog)} \| \*\*([a-z ]+)\*\* \| (.*) \|$", md, re.M)
        got = m.group(1) if m else None
        if got != want:
            print(f"FAIL: {prog}: '{got}' ({m.group(2) if m else 'no row'}), expected '{want}'")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "answers":
        sys.exit(answers(sys.argv[2], sys.argv[3]))
    if cmd == "mutate":
        sys.exit(mutate(sys.argv[2], sys.argv[3]))
    if cmd == "mutate-multigpu":
        sys.exit(mutate_multigpu(sys.argv[2], sys.argv[3]))
    sys.exit(verdicts(sys.argv[2], sys.argv[3:]))
