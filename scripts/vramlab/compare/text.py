"""How scripts/compare and scripts/matrix say what they found: the cells of a metric's
row (its label, ratio with interval, percentages, the hint of an inconclusive one) and
the printed sections (the table, the pairing, the missing and failed programs)."""
import math
import sys

from vramlab import fmt, verdict


def metric_label(m):
    return f"{m.name}_{m.unit}" if m.unit and not m.name.endswith(m.unit) else m.name


def fmt_ratio(j):
    if not math.isfinite(j.ratio):
        return "inf" if j.ratio > 0 else "-inf"
    if math.isfinite(j.lo) and math.isfinite(j.hi) and (j.lo, j.hi) != (j.ratio, j.ratio):
        return f"{j.ratio:.3f} [{j.lo:.3f}, {j.hi:.3f}]"
    return f"{j.ratio:.3f}"


def fmt_pct(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return "inf" if math.isinf(x) else f"{x:.0%}"


def print_table(shown, threshold):
    table = [("file", "row", "metric", "A", "B", "B/A [interval]", "q", "mde", "reps", "verdict")]
    for fa, fb, ma, mb, j in shown:
        table.append((fa, ma.row[:48], metric_label(ma), fmt.number(ma.value), fmt.number(mb.value), fmt_ratio(j),
                      f"{j.q:.2g}" if j.q is not None else j.basis, fmt_pct(j.mde),
                      f"{len(ma.samples)}/{len(mb.samples)}",
                      j.verdict + (" " + verdict.REGRESSION if j.regression else "")
                      + inconclusive_hint(j, threshold)))
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        print("  " + "  ".join(c.ljust(widths[i]) if i < 3 or i > 8 else c.rjust(widths[i])
                               for i, c in enumerate(r)).rstrip())


def inconclusive_hint(j, threshold):
    if j.verdict != verdict.INCONCLUSIVE:
        return ""
    if not j.reps_needed:
        return " (more repetitions than can be estimated)"
    if j.noise_known:
        return f" (~{j.reps_needed} reps/side would resolve it at {threshold:.0%})"
    return f" (the rank test needs >= {j.reps_needed} reps/side)"


def missing_notice(prog, findings):
    """The line --allow-missing prints first and last."""
    files = sum(1 for f in findings if not f.startswith("failed in "))
    return (f"{prog}: --allow-missing: {files} file(s) missing on one side and {len(findings) - files} failed "
            "job(s) are not counted")


def print_findings(prog, findings, allow):
    print(f"\nmissing or failed: {len(findings)} program file(s) or job(s) are not a result"
          + (" (not counted: --allow-missing)" if allow else ""))
    for line in findings:
        print(f"  {line}")


def print_pairing(p, a, b):
    differs = {}
    for _, _, labels in p.pairs:
        for k, va, vb in labels:
            differs.setdefault((k, va, vb), 0)
            differs[(k, va, vb)] += 1
    print(f"\npaired: {len(p.pairs)} file(s) by program, variant, device and parameters")
    for fa, fb, labels in p.pairs:
        print(f"  {fa}" if fa == fb and not labels else
              f"  {fa} ~ {fb}" + "".join(f"  ({k} A: {va}, B: {vb})" for k, va, vb in labels))
    if differs:
        print("side label that differs between paired files: " +
              "; ".join(f"{k}: A {va}, B {vb} ({n} file(s))" for (k, va, vb), n in sorted(differs.items())))
    if p.unpaired:
        print(f"not paired: {len(p.unpaired)} file(s)")
        for side, f, why in p.unpaired:
            n = len((a if side == "A" else b).files[f])
            print(f"  {side}: {f} ({n} metric(s)): {why}")


class Notice:
    """The line --allow-missing prints first (say) and last (finish, which then exits with
    code); nothing without --allow-missing."""

    def __init__(self, prog, findings, allow):
        self.text = missing_notice(prog, findings) if allow else ""

    def say(self):
        if self.text:
            print(self.text)

    def finish(self, code):
        self.say()
        sys.exit(code)

    def end(self, missing, regressed, no_regression):
        """The last lines and the exit status: missing (the line that names files missing
        or jobs failed, "" where there are none or --allow-missing counts them out) exits
        1, so does a regression; else the line no_regression, exit 0."""
        if missing:
            print(missing)
            self.finish(1)
        if regressed:
            self.finish(1)
        print(no_regression)
        self.finish(0)
