"""The findings spec (scripts/vramlab/findings/figures.tsv): which stored data each
generated README block is made of; its format is in the comment below."""
# Tab-separated lines, '#' starts a comment:
#
#   block  NAME  FOLDER  COMMAND
#       A block of the README, between <!-- findings:NAME begin ... --> and
#       <!-- findings:NAME end -->, rendered from scripts/vramlab/findings/blocks/NAME.md.
#       FOLDER: the stored data under results/reference/ (relative to the tree's root),
#       a folder or an archive of one (.tgz);
#       a glob (results/reference/h100-findings-*) takes the newest folder it matches.
#       COMMAND: the command that produced the data; "@meta" takes the '# command:'
#       lines of the CSVs the block reads. An optional fifth field: "legacy", the folder
#       was stored before runs wrote COMPLETE, so its files are read without it; or
#       "pending", data not stored yet: while no folder matches, the block says so (and
#       how to measure it) instead of figures; or "report", the block is the scenario
#       table of the run in FOLDER as its report makes it (scripts/vramlab/report/doc.py
#       scenario_table): the template's rows, this run's figures, each scenario's answer.
#   fig    NAME  FIGURE  FILES  WHERE  COLUMN  STAT  FORMAT  [AGAINST]
#       One figure of block NAME, {FIGURE} in its template. FILES: a glob under FOLDER
#       (rep-*/x.csv reads every repetition), or several separated by commas. WHERE: col=value,... (or "-": every row);
#       col!=value, and col>=N / col<=N for numbers; a value in double quotes may hold commas.
#       COLUMN: a column, optionally scaled (bytes/1e9, ratio*100) or over another column
#       of the same row (peak_reserved_bytes/peak_requested_bytes). STAT: value (exactly
#       one row), median, min, max, mean, sum, count, range (min-max), ratio_hl (the
#       median ratio of the rows against the AGAINST rows, with its 95% Hodges-Lehmann
#       interval over the processes); OUTER(INNER) aggregates each file's rows with INNER
#       (value, sum, count, min, max, median, mean) and then the files with OUTER: range(sum)
#       is the range over the files of each file's sum; in AGAINST, file=GLOB reads the
#       other side from other files; ratio(INNER) is INNER of the rows
#       over INNER of the AGAINST rows (ratio(max): the larger peak over the other).
#       text: the COLUMN's words in exactly one row, as stored (letters, digits, spaces and
#       .,;:'()_- only: a cell is never Markdown or HTML; FORMAT is then "s"; an empty
#       cell is unknown, so "s|TEXT" prints TEXT).
#       FORMAT: a Python format spec (.1f, ",.0f"); FORMAT|TEXT prints TEXT where every
#       stored value is unknown (an allocator that keeps no such count), which is
#       otherwise an error.
import re

STATS = {"value", "median", "min", "max", "mean", "sum", "count", "range", "ratio_hl", "text"}
INNER = {"value", "sum", "count", "min", "max", "median", "mean"}


def valid_stat(stat):
    m = re.fullmatch(r"([a-z_]+)\(([a-z]+)\)", stat)
    if m:
        return m.group(1) in (STATS | {"ratio"}) - {"value", "ratio_hl", "text"} and m.group(2) in INNER
    return stat in STATS


def needs_against(stat):
    return stat == "ratio_hl" or stat.startswith("ratio(")


class SpecError(Exception):
    pass


class Block:
    def __init__(self, name, folder, command, flag, line):
        self.name, self.folder, self.command, self.line = name, folder, command, line
        self.legacy, self.pending, self.report = flag == "legacy", flag == "pending", flag == "report"
        self.figures = []


class Figure:
    def __init__(self, block, name, files, where, column, stat, fmt, against, line):
        self.block, self.name, self.files, self.line = block, name, files, line
        self.where, self.against = where, against
        self.column = column
        self.stat = stat
        # FORMAT|TEXT: TEXT stands where the stored value is unknown (empty), e.g. for an
        # allocator that keeps no such count; without it an unknown value is an error.
        self.fmt, _, self.unknown_text = fmt.partition("|")

    def __str__(self):
        return f"{self.block}.{self.name} (figures.tsv:{self.line})"


def parse_where(text, line):
    if text == "-":
        return {}
    where = {}
    if text.count('"') % 2:
        raise SpecError(f"figures.tsv:{line}: WHERE '{text}' has an unbalanced double quote")
    # commas inside "..." belong to the value (a SPEC such as "caching:span=0,plan=1")
    for part in re.split(r',(?=(?:[^"]*"[^"]*")*[^"]*$)', text):
        m = re.fullmatch(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=|!=|>=|<=)\s*(".*"|[^"]*?)\s*', part)
        if not m or (m.group(2) in (">=", "<=") and not re.fullmatch(r"-?[0-9.eE+]+", m.group(3))):
            raise SpecError(f"figures.tsv:{line}: WHERE part '{part}' is not col=value, col!=value, col>=N or col<=N")
        value = m.group(3)[1:-1] if m.group(3).startswith('"') else m.group(3)
        where.setdefault(m.group(1), []).append((m.group(2), value))
    return where


def matches(where, field):
    """Whether the stored text FIELD passes every condition on its column."""
    for op, value in where:
        if op == "=" and field != value or op == "!=" and field == value:
            return False
        if op in (">=", "<="):
            try:
                x = float(field)
            except ValueError:
                return False
            if op == ">=" and x < float(value) or op == "<=" and x > float(value):
                return False
    return True


class Column:
    """NAME, scaled by a number (NAME/1e9, NAME*100) or divided by another column of the
    same row (NAME/OTHER: unknown where either is)."""

    def __init__(self, name, factor=1.0, over=None):
        self.name, self.factor, self.over = name, factor, over

    def names(self):
        return [self.name] + ([self.over] if self.over else [])


def parse_column(text, line):
    m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:([*/])([0-9.eE+-]+|[A-Za-z_][A-Za-z0-9_]*))?", text)
    if not m:
        raise SpecError(f"figures.tsv:{line}: COLUMN '{text}' is not NAME, NAME/N, NAME*N or NAME/NAME")
    if m.group(3) and re.match(r"[A-Za-z_]", m.group(3)):
        if m.group(2) != "/":
            raise SpecError(f"figures.tsv:{line}: COLUMN '{text}': a column can only be divided by another")
        return Column(m.group(1), over=m.group(3))
    factor = 1.0
    if m.group(2):
        factor = float(m.group(3))
        factor = 1.0 / factor if m.group(2) == "/" else factor
    return Column(m.group(1), factor)


def load(path):
    """Returns the blocks of a spec, in order, each with its figures."""
    blocks = {}
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = [x.strip() for x in line.split("\t") if x.strip()]
            kind = fields[0]
            if kind == "block" and (len(fields) == 4 or (len(fields) == 5 and fields[4] in ("legacy", "pending", "report"))):
                if fields[1] in blocks:
                    raise SpecError(f"figures.tsv:{number}: block {fields[1]} defined twice")
                blocks[fields[1]] = Block(fields[1], fields[2], fields[3], fields[4] if len(fields) == 5 else "",
                                          number)
            elif kind == "fig" and len(fields) in (8, 9):
                _, block, name, files, where, column, stat, fmt = fields[:8]
                if block not in blocks:
                    raise SpecError(f"figures.tsv:{number}: figure {name} of unknown block {block}")
                if not valid_stat(stat):
                    raise SpecError(f"figures.tsv:{number}: unknown STAT '{stat}' (one of {', '.join(sorted(STATS))}, "
                                    f"or OUTER(INNER), INNER one of {', '.join(sorted(INNER))})")
                against = parse_where(fields[8], number) if len(fields) == 9 else None
                if needs_against(stat) != (against is not None):
                    raise SpecError(f"figures.tsv:{number}: AGAINST goes with ratio_hl and ratio(INNER), and only with them")
                if any(x.name == name for x in blocks[block].figures):
                    raise SpecError(f"figures.tsv:{number}: figure {block}.{name} defined twice")
                blocks[block].figures.append(Figure(block, name, files, parse_where(where, number),
                                                    parse_column(column, number), stat, fmt, against, number))
            else:
                raise SpecError(f"figures.tsv:{number}: expected 'block NAME FOLDER COMMAND [legacy|pending|report]' or "
                                "'fig BLOCK FIGURE FILES WHERE COLUMN STAT FORMAT [AGAINST]' (tab-separated)")
    return list(blocks.values())
