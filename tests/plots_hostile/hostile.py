#!/usr/bin/env python3
"""hostile.py [options] IN OUT [IN OUT ...]: each IN (a CSV of results) with its string
cells made hostile into OUT, for tests/plots_hostile/run.sh. Numbers and empty cells
stay. In each column the j-th distinct string (in order of first appearance) becomes
PAYLOADS[j + salt] (cyclically) with a number after it from the string's hash: equal
values stay equal, distinct ones distinct. "# key: value" comment lines (moved to the
top) get a hostile value.
  --copies K   the data rows K times, copy c with salt c: every value meets every payload
               (K = len(PAYLOADS))
  --headers    the header row (the first line that is no comment) hostile too
  --keep A,B   columns whose values stay (values a plot compares with its own constants)
  --flat       no newline inside a value
hostile.py --name VALUE: what the first string of a column, VALUE, becomes (salt 0).
Every payload that would run a command touches a file PWNED<n> in the working folder."""
import csv
import sys
import zlib

PAYLOADS = [
    "x';touch${IFS}PWNED0;'",  # out of a shell '...' (an awk program, a name without shq())
    'x";touch${IFS}PWNED1;"',  # out of a shell "..." or an awk string
    "$(touch PWNED2)",
    "`touch PWNED3`",
    ";touch${IFS}PWNED4;",
    "a\nb$(touch PWNED5)",  # a newline inside a quoted cell
    "%s%n%d%%",  # a format, if a value is ever one
    "@x @ARG1",  # a gnuplot macro, if a value is ever expanded
    "back\\slash\\",
    "x'y\"z$(touch PWNED6)`touch PWNED7`;touch${IFS}PWNED8;%s%n@x\\",
    "x');system('touch PWNED9');('",  # out of a gnuplot string, if a value is ever code
    "<touch PWNED10",  # gnuplot's pipe, if a value is ever a file name
    "|touch PWNED11",
]


def hostile(value, j, salt, flat=False):
    s = PAYLOADS[(j + salt) % len(PAYLOADS)] + str(zlib.crc32(value.encode()) % 1000)
    return s.replace("\n", " ") if flat else s


def is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def main(argv):
    copies, headers, keep, flat = 1, False, set(), False
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--copies":
            copies = int(argv.pop(0))
        elif opt == "--headers":
            headers = True
        elif opt == "--keep":
            keep = set(argv.pop(0).split(","))
        elif opt == "--flat":
            flat = True
        elif opt == "--name":
            sys.stdout.write(hostile(argv[0], 0, 0))
            return 0
        else:
            sys.exit(f"hostile.py: unknown option {opt}")
    if not argv or len(argv) % 2:
        sys.exit("usage: hostile.py [options] IN OUT [IN OUT ...]")
    for src, dst in zip(argv[::2], argv[1::2]):
        convert(src, dst, copies, headers, keep, flat)
    return 0


def convert(src, dst, copies, headers, keep, flat):
    with open(src, newline="") as f:
        lines = f.read().splitlines()
    comments, header, rows = [], None, []
    for line in lines:
        if line.startswith("#"):
            comments.append(line)
        elif header is None:
            header = next(csv.reader([line]), [])
        else:
            rows.append(next(csv.reader([line]), []))
    header = header or []
    seen = {}  # column -> {value: j}

    def cell(i, v, salt):
        if v == "" or is_number(v) or (i < len(header) and header[i] in keep):
            return v
        js = seen.setdefault(i, {})
        return hostile(v, js.setdefault(v, len(js)), salt, flat)

    with open(dst, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        for line in comments:
            key, sep, value = line.partition(": ")
            # (never a newline here: the rest of the value would be a line of data)
            f.write((key + sep + hostile(value, 0, 0, True) if sep else line) + "\n")
        w.writerow([hostile(h, i, 0, flat) for i, h in enumerate(header)] if headers else header)
        for c in range(copies):
            for r in rows:
                w.writerow([cell(i, v, c) for i, v in enumerate(r)])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
