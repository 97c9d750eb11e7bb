"""The one number formatter of vramlab's Python tools: a figure as a table or a CSV writes
it, "" where it is unknown.

  number(x)            compact: 6 significant digits, 4 where the figure is 1e6 or more or
                       below 0.01 (scripts/compare's and scripts/matrix's tables and CSVs);
  number(x, 4)         a whole number of digits: that many significant digits below a
                       million, the rounded whole number from there on, an int as it is,
                       "" for inf and nan (the torch-bench's CSV cells and tables);
  number(x, ".3f")     a format() spec, as format(x, spec) writes it;
  nonfinite="..."      what inf and nan become instead ("" in a CSV that a plot reads);
                       by default they are written as the form writes them ("inf").
"""
import math


def number(x, form=None, nonfinite=None):
    """x as text in form (module docstring); "" for None."""
    if x is None:
        return ""
    finite = not isinstance(x, float) or math.isfinite(x)
    if isinstance(form, int):
        if not finite:
            return "" if nonfinite is None else nonfinite
        if isinstance(x, int):
            return str(x)
        return f"{x:.{form}g}" if abs(x) < 1e6 else str(int(round(x)))
    if not finite and nonfinite is not None:
        return nonfinite
    if form is None:
        form = ".4g" if abs(x) >= 1e6 or (abs(x) < 1e-2 and x != 0) else ".6g"
    return format(x, form)
