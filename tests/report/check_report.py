#!/usr/bin/env python3
"""check_report.py RUN REPORT_DIR [HOSTILE]: the checks of tests/report/run.sh on one
report: every program that ran has a section with an answer; every skipped or failed
job is listed with its reason; no answer without its figure; report.html parses with
balanced tags and loads nothing from the network; HOSTILE (a value planted in the run)
appears in neither file as it is, only escaped. Prints one FAIL line per problem and
exits 1 if any."""
import html
import html.parser
import os
import re
import sys

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "scripts")]
from vramlab.report import render  # noqa: E402
from vramlab import results as vlresults  # noqa: E402

fails = []


def fail(why):
    fails.append(why)
    print(f"FAIL: {why}")


class Strict(html.parser.HTMLParser):
    """Every tag closed in order (void elements aside); no script, no remote resource."""
    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors = [], []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "link"):
            self.errors.append(f"<{tag}> in the page")
        for k, v in attrs:
            if k.startswith("on"):
                self.errors.append(f"event handler attribute {k}")
            if k in ("src", "href") and v and re.match(r"(?i)\s*(https?:|//|javascript:)", v):
                self.errors.append(f"{k}={v[:40]} loads from the network")
        if tag not in self.VOID:
            self.stack.append((tag, self.getpos()))

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.errors.append(f"</{tag}> at {self.getpos()} closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()


def sections(md):
    """{heading: body} of the ## sections of report.md."""
    out, name = {}, None
    for line in md.split("\n"):
        if line.startswith("## "):
            name = line[3:].strip()
            out[name] = []
        elif name:
            out[name].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def main():
    run, rdir = sys.argv[1], sys.argv[2]
    hostile = sys.argv[3] if len(sys.argv) > 3 else None
    md = open(os.path.join(rdir, "report.md")).read()
    page = open(os.path.join(rdir, "report.html")).read()
    reps = vlresults.rep_folders(run) or [run]
    jobs = [j for r in reps if os.path.isfile(os.path.join(r, "manifest.csv"))
            for j in vlresults.read_manifest(os.path.join(r, "manifest.csv"))]
    ran = {j["program"] for j in jobs if vlresults.job_outcome(j) == "ok"} - {"device_info"}
    secs = sections(md)
    answer = re.compile(r"\*\*On this machine:\*\* \*\*(holds|does not hold|inconclusive)\*\*(.*)")
    for prog in sorted(ran):
        key = next((k for k in secs if k == render.md_data(prog) or k.startswith(render.md_data(prog) + " (")), None)
        if key is None:
            fail(f"{prog} ran but has no section")
            continue
        m = answer.search(secs[key])
        if not m:
            fail(f"{prog}: its section has no answer")
            continue
        verdict, why = m.group(1), m.group(2)
        if not re.search(r"[0-9]", why) and verdict != "inconclusive":
            fail(f"{prog}: '{verdict}' without a figure: {why}")
        if verdict == "inconclusive" and not why.startswith(": "):
            fail(f"{prog}: inconclusive without a reason")
        if verdict != "inconclusive" and "| " not in secs[key]:
            fail(f"{prog}: '{verdict}' but no table of figures")
    listed = secs.get("Jobs skipped or failed", "")
    for j in jobs:
        if vlresults.job_outcome(j) == "ok":
            continue
        note = j.get("note", "").strip()
        if render.md_data(j["program"]) not in listed or (note and render.md_data(note) not in listed):
            fail(f"job {j['program']} {j.get('alloc')} ({j.get('status')}) not listed with its reason")
    p = Strict()
    p.feed(page)
    p.close()
    for e in p.errors:
        fail(f"report.html: {e}")
    if p.stack:
        fail(f"report.html: unclosed {p.stack[-3:]}")
    if not page.lstrip().lower().startswith("<!doctype html>"):
        fail("report.html has no doctype")
    if hostile:
        for name, text in (("report.md", md), ("report.html", page)):
            # a backtick is only markup in Markdown; in HTML it is text
            for bit in ("<script", "alert(1)</") + (("`x`",) if name == "report.md" else ()):
                if bit in text:
                    fail(f"{name} holds the planted '{bit}' as it is")
        if render.md_data(hostile) not in md:
            fail("report.md does not hold the planted value escaped")
        if html.escape(hostile).replace("\n", "<br>") not in page:
            fail("report.html does not hold the planted value escaped")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
