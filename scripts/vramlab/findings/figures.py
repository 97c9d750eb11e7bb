"""Evaluating one figure of the findings spec on the stored CSVs it names.

An empty field is an unknown value (the CSV convention): it is never read as 0. A
figure whose rows hold only unknowns, or that matches no row, is an error naming it,
never a number. Repetitions (rep-<k>/ folders) must be COMPLETE (written last by
scripts/bench.sh) unless the block's folder was stored before that convention."""
import math
import os
import re

from vramlab import rankstats
from vramlab import results as vlresults
from vramlab.findings import stored
from vramlab.findings.spec import SpecError, matches


class Source:
    """The CSVs one block read: their '#' metadata, for the provenance line."""

    def __init__(self):
        self.meta = {}  # path -> metadata dict

    def values(self, key):
        seen = []
        for meta in self.meta.values():
            v = meta.get(key)
            if v and v not in seen:
                seen.append(v)
        return seen


_cache = {}


def read(path):
    if path not in _cache:
        _cache[path] = vlresults.read_csv(path)
    return _cache[path]


def matching_files(folder, pattern, figure, legacy):
    paths = sorted({p for part in pattern.split(",") for p in stored.glob_stored(os.path.join(folder, part))})
    if not paths:
        raise SpecError(f"{figure}: no file {pattern} in {folder}")
    if not legacy:
        for p in paths:
            rep = os.path.dirname(p)
            if not os.path.isfile(os.path.join(rep, vlresults.COMPLETE_MARK)):
                raise SpecError(f"{figure}: {os.path.relpath(rep)} has no COMPLETE: an interrupted or "
                                "unfinished run is not a result")
    return paths


def matching_rows(figure, folder, files, where, source, legacy):
    """Per file: (header, [the rows that match WHERE]); a missing column or a malformed
    row is an error naming it."""
    for path in matching_files(folder, files, figure, legacy):
        meta, header, rows = read(path)
        source.meta[path] = meta
        for col in list(where) + figure.column.names():
            if col not in header:
                raise SpecError(f"{figure}: {os.path.relpath(path)} has no column {col}")
        idx = {c: header.index(c) for c in where}
        matched = []
        for number, row in enumerate(rows, 1):
            if len(row) != len(header):
                raise SpecError(f"{figure}: {os.path.relpath(path)}: data row {number} has {len(row)} fields, "
                                f"the header {len(header)}: a malformed file is not a result")
            if all(matches(conds, row[idx[c]]) for c, conds in where.items()):
                matched.append(row)
        yield header, matched


def samples(figure, folder, where, source, legacy):
    """One list of numbers per file (per process), from the rows that match WHERE."""
    per_file, unknown = [], 0
    where = dict(where)
    files = figure.files
    if "file" in where:  # AGAINST's own files (file=GLOB): the other side of a ratio
        files = where.pop("file")[0][1]
    for header, rows in matching_rows(figure, folder, files, where, source, legacy):
        col = header.index(figure.column.name)
        over = header.index(figure.column.over) if figure.column.over else None
        values = []
        for row in rows:
            v = vlresults.number(row[col])
            if v is not None and over is not None:
                d = vlresults.number(row[over])
                v = v / d if d else None  # unknown or 0 below: no ratio
            if v is None:
                unknown += 1
            else:
                values.append(v * figure.column.factor)
        per_file.append(values)
    if not any(per_file):
        where_text = f"in {files} where {describe(where)}"
        if unknown:
            raise Unknown(f"{figure}: only unknown (empty) values {where_text}")
        raise SpecError(f"{figure}: no row {where_text}")
    return per_file


def describe(where):
    return ",".join(f"{c}{op}{v}" for c, conds in where.items() for op, v in conds) or "any row"


def fmt(value, spec):
    text = format(value, spec)
    return text.replace("-", "\u2212") if value < 0 else text


def inner(figure, stat, values):
    """One file's rows reduced to one number (OUTER(INNER)'s INNER)."""
    if stat == "value":
        if len(values) != 1:
            raise SpecError(f"{figure}: 'value' needs exactly one row per file, {len(values)} match")
        return values[0]
    return {"sum": sum, "count": len, "min": min, "max": max, "mean": lambda v: sum(v) / len(v),
            "median": vlresults.median}[stat](values)


class Unknown(SpecError):
    """Every matching stored value is unknown (empty)."""


def evaluate(figure, folder, source, legacy):
    try:
        return evaluate_known(figure, folder, source, legacy)
    except Unknown:
        if figure.unknown_text:
            return figure.unknown_text
        raise


# What a text figure may hold: it goes into Markdown as it is.
SAFE_TEXT = re.compile(r"[A-Za-z0-9 .,;:'()_-]+")


def text_of(figure, folder, source, legacy):
    """The COLUMN's text in the one row that matches WHERE (stat text)."""
    found = [row[header.index(figure.column.name)]
             for header, rows in matching_rows(figure, folder, figure.files, figure.where, source, legacy)
             for row in rows]
    if len(found) != 1:
        raise SpecError(f"{figure}: 'text' needs exactly one row, {len(found)} match in {figure.files} "
                        f"where {describe(figure.where)}")
    if found[0] == "":  # an empty cell is unknown: FORMAT|TEXT prints TEXT, else an error
        raise Unknown(f"{figure}: only unknown (empty) values in {figure.files} where {describe(figure.where)}")
    if not SAFE_TEXT.fullmatch(found[0]):
        raise SpecError(f"{figure}: the stored text {found[0][:40]!r} holds characters a findings block does not print")
    return found[0]


def evaluate_known(figure, folder, source, legacy):
    if figure.stat == "text":
        return text_of(figure, folder, source, legacy)
    per_file = samples(figure, folder, figure.where, source, legacy)
    flat = [v for vals in per_file for v in vals]
    stat = figure.stat
    m = re.fullmatch(r"([a-z_]+)\(([a-z]+)\)", stat)
    if m and m.group(1) == "ratio":  # INNER of the rows over INNER of the AGAINST rows
        ref = [v for vals in samples(figure, folder, figure.against, source, legacy) for v in vals]
        den = inner(figure, m.group(2), ref)
        if den == 0:
            raise SpecError(f"{figure}: ratio over 0")
        return fmt(inner(figure, m.group(2), flat) / den, figure.fmt)
    if m:  # OUTER(INNER): each file's rows first, then over the files
        stat, flat = m.group(1), [inner(figure, m.group(2), vals) for vals in per_file if vals]
    if stat == "value":
        if len(flat) != 1:
            raise SpecError(f"{figure}: 'value' needs exactly one row, {len(flat)} match")
        return fmt(flat[0], figure.fmt)
    if stat == "count":
        return fmt(len(flat), figure.fmt)
    if stat == "sum":
        return fmt(sum(flat), figure.fmt)
    if stat == "mean":
        return fmt(sum(flat) / len(flat), figure.fmt)
    if stat == "median":
        return fmt(vlresults.median(flat), figure.fmt)
    if stat == "min":
        return fmt(min(flat), figure.fmt)
    if stat == "max":
        return fmt(max(flat), figure.fmt)
    if stat == "range":
        lo, hi = fmt(min(flat), figure.fmt), fmt(max(flat), figure.fmt)
        return lo if lo == hi else f"{lo}\u2013{hi}"
    if stat == "ratio_hl":
        ref = [v for vals in samples(figure, folder, figure.against, source, legacy) for v in vals]
        if min(flat + ref) <= 0:
            raise SpecError(f"{figure}: ratio_hl needs positive values")
        est, lo, hi = rankstats.hodges_lehmann([math.log(v) for v in ref], [math.log(v) for v in flat])
        bounds = "[unbounded]" if not math.isfinite(lo) else \
            f"[{fmt(math.exp(lo), figure.fmt)}, {fmt(math.exp(hi), figure.fmt)}]"
        return f"\u00d7{fmt(math.exp(est), figure.fmt)} {bounds}"
    raise SpecError(f"{figure}: unknown STAT {stat}")
