# Shared gnuplot settings and arguments, for every plots/<program>.gp, which starts with
#   call 'plots/common.gp' ARG1 ARG2 ARG3
# (call hands the values over as strings; load would drop them). Every plot script is
# called (scripts/plots.sh) as
#   gnuplot -c plots/<program>.gp OUT FILES LABELS
# OUT: the PNG to write; FILES: the CSVs of one program in one results folder (one per
# allocator/device), one per line; LABELS: a short name for each, one per line, same
# order. ARGn are strings that gnuplot never evaluates, so a name holding quotes,
# spaces or gnuplot code is only a name. Scripts use FILE[i], LABEL[i] (i = 1..nfiles)
# and out. A name goes into a shell command only through shq().
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
# A relative name gets ./ in front: gnuplot reads '<cmd' as a pipe from a command, '|cmd'
# (as an output) as a pipe to one, and '-', '+', '' as special files.
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
# A string as one shell word: '...' with each ' written as '\''.
shq_(s) = (q_ = strstrt(s, "'")) ? s[1:q_ - 1] . "'\\''" . shq_(s[q_ + 1:]) : s
shq(s) = "'" . shq_(s) . "'"
# The workloads of a CSV with a workload column first, sorted, separated by spaces.
workloads(f) = system(sprintf("awk -F, '!/^#/ && $1 != \"workload\" {print $1}' %s | sort -u | tr '\\n' ' '", shq(f)))
# A CSV whose quoted fields hold commas (a SPEC), which gnuplot would split, read through
# awk with the commas inside quotes turned into ';' and the quotes dropped:
#   plot unquoted(FILE[1]) using ...
unquoted(f) = sprintf("< awk '{o=\"\"; q=0; for (i = 1; i <= length($0); i++) { c = substr($0, i, 1); if (c == \"\\\"\") q = !q; else if (c == \",\" && q) o = o \";\"; else o = o c } print o}' %s", shq(f))

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
