# Shared gnuplot settings and arguments, for every plots/<program>.gp, which starts with
#   call 'plots/common.gp' ARG1 ARG2 ARG3
# (call hands the values over as strings; load would drop them). Every plot script is
# called (scripts/plots.sh) as
#   gnuplot -c plots/<program>.gp OUT FILES LABELS
# OUT: the PNG to write; FILES: the CSVs of one program in one results folder (one per
# allocator/device), one per line; LABELS: a short name for each, one per line, same
# order. ARGn are strings that gnuplot never evaluates, so a name holding quotes,
# spaces or gnuplot code is only a name. Scripts use FILE[i], LABEL[i] (i = 1..nfiles)
# and out. The rule: gnuplot reads only plain files (the CSVs, or copies that
# scripts/plots.sh prepared where gnuplot cannot parse them) and never runs a command
# (no system call, no input or output pipe, no eval, load or macro); values come in
# through gnuplot's own data reading (stats, plot, strcol, tables of selected rows).
# (Old callers' `gnuplot -e "files='a b'; labels='x y'; out='o.png'"` still works, with
# whitespace-separated names.)
if (strlen(ARG2) > 0) {
    out = ARG1; files_ = ARG2; labels_ = ARG3; sep_ = "\n"
} else {
    if (!exists("files") || !exists("out")) {
        print "usage: gnuplot -c SCRIPT OUT FILES LABELS (FILES and LABELS one per line)"
        exit status 2
    }
    files_ = files; labels_ = exists("labels") ? labels : ""; sep_ = " "
}
# Item i of a list separated by sep_ (recursion: lists are a few names long).
nth_(s, i) = (p_ = strstrt(s, sep_), i == 1 ? (p_ ? s[1:p_ - 1] : s) : (p_ ? nth_(s[p_ + 1:], i - 1) : ""))
count_(s) = strlen(s) == 0 ? 0 : 1 + ((p_ = strstrt(s, sep_)) ? count_(s[p_ + 1:]) : 0)
if (sep_ eq " ") { nfiles = words(files_) } else { nfiles = count_(files_) }
if (nfiles < 1) {
    print "no input files"
    exit status 2
}
# A relative name gets ./ in front: gnuplot reads a name starting with < as a pipe from a
# command, one starting with | (as an output) as a pipe to one, and -, +, empty as
# special files.
path_(p) = p[1:1] eq "/" ? p : "./" . p
array FILE[nfiles]
array LABEL[nfiles]
do for [i_ = 1:nfiles] {
    FILE[i_] = path_(sep_ eq " " ? word(files_, i_) : nth_(files_, i_))
    LABEL[i_] = sep_ eq " " ? word(labels_, i_) : nth_(labels_, i_)
}
out = path_(out)
# Results of the simulated device (bench.sh names their CSVs *.sim.csv) say so on the
# figure: their times are the host CPU's, never a GPU's.
nsim_ = 0
do for [i_ = 1:nfiles] { nsim_ = nsim_ + (strstrt(FILE[i_], ".sim.csv") > 0 ? 1 : 0) }
if (nsim_ > 0) {
    set label 990 (nsim_ == nfiles ? "simulated device: policy figures and host CPU time, not GPU measurements" : \
                   sprintf("%d of %d inputs from the simulated device (.sim): their times are host CPU time", nsim_, nfiles)) \
        at screen 0.005, 0.985 left font ',8' tc rgb '#b00000' front
}
# Names read from data (workloads, allocators, SPEC options): a script collects them with
#   names_ = "\n"; stats f using (add(strcol('workload'))) nooutput
# into a list "\nname\nname\n" (a line of data holds no newline, so no name holds the
# separator), in the order of first appearance (add) or in byte order (adds: sort's in
# the C locale), without duplicates or empty names, and reads it with items() and item().
add(v) = (v eq '' || strstrt(names_, "\n" . v . "\n")) ? 0 : (names_ = names_ . v . "\n", 0)
adds(v) = (v eq '' || strstrt(names_, "\n" . v . "\n")) ? 0 : (names_ = "\n" . ins_(names_[2:], v), 0)
items(l) = cnt_(l[2:])
item(l, i) = at_(l[2:], i)
cnt_(t) = strlen(t) == 0 ? 0 : 1 + cnt_(t[strstrt(t, "\n") + 1:])
at_(t, i) = i <= 1 ? t[1:strstrt(t, "\n") - 1] : at_(t[strstrt(t, "\n") + 1:], i - 1)
# t with v put before the first name that does not sort before it.
ins_(t, v) = strlen(t) == 0 ? v . "\n" : before_(t[1:strstrt(t, "\n") - 1], v) ? t[1:strstrt(t, "\n")] . ins_(t[strstrt(t, "\n") + 1:], v) : v . "\n" . t
# a sorts before b, byte by byte (printable ASCII by position in ASCII_, any other byte after it).
ASCII_ = ' !"#$%&''()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqrstuvwxyz{|}~'
ord_(c) = strstrt(ASCII_, c) > 0 ? strstrt(ASCII_, c) : 999
before_(a, b) = strlen(b) == 0 ? 0 : strlen(a) == 0 ? 1 : a[1:1] eq b[1:1] ? before_(a[2:], b[2:]) : ord_(a[1:1]) < ord_(b[1:1])
# A number of a column, 0 where it holds none (awk's sum over a column).
num(c) = (v_ = column(c), v_ == v_ ? v_ : 0)
# An explicit tic label is a format (set xtics ("%.1f" 1)): a name from data is one only
# with each % doubled.
tic(s) = (p_ = strstrt(s, '%')) ? s[1:p_] . '%' . tic(s[p_ + 1:]) : s

set terminal pngcairo size 1100,700 enhanced font 'DejaVu Sans,10'
set output out
set datafile separator ','
set datafile commentschars '#'
set key outside right top box
set grid
set termoption noenhanced
# Rows of other variants/roles leave some columns empty: treat them as missing so
# lines stay connected across them.
set datafile missing NaN
