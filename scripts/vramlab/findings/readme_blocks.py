"""The generated blocks of the README and the docs: text between
  <!-- findings:NAME begin (...) -->
  <!-- findings:NAME end -->
lines. The begin line and everything up to the end line belong to the generator."""
import re

BEGIN = re.compile(r"^<!-- findings:([a-z0-9_]+) begin\b.*-->$")
END = re.compile(r"^<!-- findings:([a-z0-9_]+) end -->$")


class BlockError(Exception):
    pass


def split(text, path):
    """[(name or None, lines)]: the README cut into plain stretches and blocks (a block's
    lines include its begin and end lines)."""
    parts, current, name = [], [], None
    for number, line in enumerate(text.split("\n"), 1):
        b, e = BEGIN.match(line), END.match(line)
        if b:
            if name:
                raise BlockError(f"{path}:{number}: block {b.group(1)} begins inside block {name}")
            parts.append((None, current))
            current, name = [line], b.group(1)
        elif e:
            if e.group(1) != name:
                raise BlockError(f"{path}:{number}: end of {e.group(1)} outside its block")
            current.append(line)
            parts.append((name, current))
            current, name = [], None
        else:
            current.append(line)
    if name:
        raise BlockError(f"{path}: block {name} has no end line")
    parts.append((None, current))
    return parts


def replace_all(texts, rendered):
    """{path: text with its blocks replaced}, for several files that hold every rendered
    block between them, each exactly once."""
    parts = {path: split(text, path) for path, text in texts.items()}
    where = {}
    for path, cut in parts.items():
        for n, _ in cut:
            if not n:
                continue
            if n in where:
                raise BlockError(f"block {n} appears in both {where[n]} and {path}" if where[n] != path
                                 else f"{path}: block {n} appears more than once")
            if n not in rendered:
                raise BlockError(f"{path}: block {n} is not in scripts/vramlab/findings/figures.tsv")
            where[n] = path
    missing = [n for n in rendered if n not in where]
    if missing:
        raise BlockError(f"{', '.join(texts)}: no markers for block(s) {', '.join(missing)}: add "
                         f"'<!-- findings:NAME begin -->' and '<!-- findings:NAME end -->' lines")
    return {path: "\n".join(line for n, lines in cut for line in (rendered[n] if n else lines))
            for path, cut in parts.items()}
