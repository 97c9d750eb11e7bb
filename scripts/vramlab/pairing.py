"""Which file of run A is compared with which file of run B (scripts/compare, scripts/matrix,
hence make ab, make noise and scripts/fleet).

Pairing, in order:
  1. the same identity and the same allocator SPEC on both sides (two runs of the
     whole suite: caching with caching, raw with raw);
  2. what is left of one identity, one file on each side: paired, the SPEC being what
     differs (scripts/ab alloc=caching against alloc=caching:segments=expandable);
  3. anything else is not paired, with the reason: the other side has no such
     program, variant or device, the parameters differ (quick against full), or each
     side has several SPECs left and which goes with which is not known.
hyperfine's exports pair by name.

docs/comparing.md, section "vramlab/pairing.py", has the rest."""
import os

# '# command:' words that name the side, not what was measured; with their value.
SIDE_OPTIONS = {"-o", "--output", "--alloc"}


def alloc_tag(spec):
    """scripts/bench.sh's file-name tag of an allocator SPEC."""
    if not spec or spec in ("none", "-"):
        return "default"
    return spec.translate(str.maketrans(":,=/", "____"))


def parameters(command):
    """The command line without the program's folder and the side's own options."""
    words = command.split()
    if not words:
        return ""
    out = [os.path.basename(words[0])]
    i = 1
    while i < len(words):
        w = words[i]
        name, eq, value = w.partition("=")
        if name in SIDE_OPTIONS:
            i += 1 if eq else 2
            continue
        if name == "--device":
            value = value if eq else (words[i + 1] if i + 1 < len(words) else "")
            if value == "cuda" or value.startswith("cuda:"):  # which GPU names the side
                i += 1 if eq else 2
                continue
        out.append(w)
        i += 1
    return " ".join(out)


class FileId:
    """What a CSV measures (key) and the labels of its side (alloc, ...)."""
    __slots__ = ("name", "program", "variant", "device", "params", "alloc")

    def __init__(self, name, program, meta):
        self.name, self.program = name, program
        self.alloc = meta.get("alloc", "")
        if name.startswith("hyperfine/"):
            self.variant, self.device, self.params = name, "", ""
            return
        stem = name[:-4] if name.endswith(".csv") else name
        sim = stem.endswith(".sim")
        if sim:
            stem = stem[:-4]
        rest = stem[len(program) + 1:] if stem.startswith(program + ".") else ""
        tag = alloc_tag(self.alloc)
        if rest == tag or not self.alloc and "." not in rest:
            self.variant = ""
        elif rest.endswith("." + tag):
            self.variant = rest[:-len(tag) - 1]
        else:
            self.variant = rest  # renamed by hand: the whole rest must match
        dev = meta.get("device", "")
        self.device = "sim" if (dev.startswith("sim") if dev else sim) else "cuda"
        self.params = parameters(meta.get("command", ""))

    @property
    def key(self):
        return (self.program, self.variant, self.device, self.params)

    def describe(self):
        """program[ variant][ on sim]: how a reason names it."""
        return self.program + (f" variant {self.variant}" if self.variant else "") + \
            (" on the simulated device" if self.device == "sim" else "")


def identities(run):
    return {f: FileId(f, run.program_of[f], run.file_meta.get(f, {})) for f in run.files}


class Pairing:
    """pairs: [(file of A, file of B, what differs: [(label, A, B)])];
    unpaired: [(side, file, reason)]."""

    def __init__(self, pairs, unpaired):
        self.pairs, self.unpaired = pairs, unpaired

    @property
    def only_a(self):
        return [f for side, f, _ in self.unpaired if side == "A"]

    @property
    def only_b(self):
        return [f for side, f, _ in self.unpaired if side == "B"]


def _labels(ia, ib):
    return [("alloc", ia.alloc or "-", ib.alloc or "-")] if ia.alloc != ib.alloc else []


def _reason(fid, other_side, all_other):
    """Why fid found no partner on other_side."""
    same_key = [o for o in all_other if o.key == fid.key]
    if same_key:  # the identity is there, but each side has several SPECs left
        return (f"{other_side} also has {fid.describe()}, but not with alloc {fid.alloc or '-'}, and each side has "
                f"several allocators left ({other_side}: {', '.join(sorted(o.alloc for o in same_key))}): "
                "which goes with which is not known")
    near = [o for o in all_other if (o.program, o.variant, o.device) == (fid.program, fid.variant, fid.device)]
    if near:
        return (f"the parameters differ: here '{fid.params}', in {other_side} '{near[0].params}'")
    progs = [o for o in all_other if o.program == fid.program]
    if not progs:
        return f"{other_side} has no {fid.program}"
    if fid.device == "sim" and not any(o.device == "sim" for o in progs):
        return f"{other_side} has no {fid.program} on the simulated device"
    if fid.device != "sim" and not any(o.device != "sim" for o in progs):
        return f"{other_side} has {fid.program} on the simulated device only"
    return f"{other_side} has no {fid.describe()}"


def pair(a, b, names=("A", "B")):
    """A Pairing of the files of runs a and b (vlresults.Run); names: how the reasons
    call them (scripts/matrix: the columns)."""
    ida, idb = identities(a), identities(b)
    left_a, left_b = sorted(ida), sorted(idb)
    pairs = []
    # 1. the same identity and SPEC (file names that match are the common case of it).
    for fa in list(left_a):
        match = [fb for fb in left_b if idb[fb].key == ida[fa].key and idb[fb].alloc == ida[fa].alloc]
        if match:
            fb = fa if fa in match else match[0]
            pairs.append((fa, fb, []))
            left_a.remove(fa)
            left_b.remove(fb)
    # 2. one file of an identity left on each side: the SPEC is what differs.
    for fa in list(left_a):
        cand_a = [f for f in left_a if ida[f].key == ida[fa].key]
        cand_b = [f for f in left_b if idb[f].key == ida[fa].key]
        if len(cand_a) == 1 and len(cand_b) == 1:
            pairs.append((fa, cand_b[0], _labels(ida[fa], idb[cand_b[0]])))
            left_a.remove(fa)
            left_b.remove(cand_b[0])
    unpaired = [("A", f, _reason(ida[f], names[1], list(idb.values()))) for f in left_a]
    unpaired += [("B", f, _reason(idb[f], names[0], list(ida.values()))) for f in left_b]
    return Pairing(sorted(pairs), unpaired)


def match_metrics(a, b, pairing):
    """[(file A, file B, metric A, metric B)] of every metric present on both sides, and
    {(file A, file B): {'only in A': n, 'only in B': n}} for the rest of paired files."""
    matched, left = [], {}
    for fa, fb, _ in pairing.pairs:
        mb = {m.key: m for m in b.files[fb]}
        counts = left.setdefault((fa, fb), {})
        for ma in a.files[fa]:
            m = mb.pop(ma.key, None)
            if m is None:
                counts["only in A"] = counts.get("only in A", 0) + 1
            else:
                matched.append((fa, fb, ma, m))
        if mb:
            counts["only in B"] = counts.get("only in B", 0) + len(mb)
    return matched, left


# Files that describe the machine rather than measure anything: compared, but they do
# not count towards the vacuity rule (else two runs with nothing else in common would
# pass on the GPU's name and memory size).
DESCRIPTIVE_PROGRAMS = {"device_info"}


def measured(run, fname):
    return run.program_of.get(fname, fname) not in DESCRIPTIVE_PROGRAMS


def vacuity(a, b, matched):
    """None when the comparison says something, else one line saying why it does not.
    The rule: the metrics compared (of files that measure something) must be at least
    half of the metrics of the smaller side; and at least one."""
    held = [sum(len(ms) for f, ms in run.files.items() if measured(run, f)) for run in (a, b)]
    compared = sum(1 for fa, _, _, _ in matched if measured(a, fa))
    smaller = min(held)
    if compared == 0:
        return (f"nothing compared: no metric of A ({held[0]}) found its counterpart in B ({held[1]})"
                + ("" if smaller else "; a side holds no measurement at all"))
    if 2 * compared < smaller:
        return (f"only {compared} metric(s) compared, less than half of the {smaller} the smaller side holds: "
                "the runs measured different things (see 'not paired' and 'per file' above)")
    return None
