# Live PyTorch benchmark (make torch-bench, scripts/torch/bench.py): the trade-off per
# workload, each allocator's waste (peak reserved / peak allocated; over peak requested
# where the allocator keeps no allocated figure: rmm-pool) against its step time relative
# to PyTorch's default allocator (torch, at 1 by definition). Error bars: x the ratio's
# 95% interval (Hodges-Lehmann between processes; none where the processes are too few),
# y the waste's min..max over processes. The dashed lines are the limits of the verdict
# on vramlab expandable (ratio <= 1.03, waste <= 1.02); every panel's range takes them in.
# One panel per workload of the run (its zoo half in the title); in-process pairs (A+B)
# are left out: their ratio is B against A. A summary from before the zoo (no half
# column: its ratios are against vramlab classic) is refused. Allocators with a waste but no speed figure
# (a run without a torch column) are listed in a note in the panel. plots/torch_zoo.gp
# has the same run as one row per measure.
# Input: the run's summary.csv (copied as torch_bench.summary.csv, so
# `make plots RUN=torch-bench/<run-id>` renders it):
#   gnuplot -c plots/torch_bench.gp tb.png results/torch-bench/ID/summary.csv x
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
fq = shq(f)   # f as one shell word
# A summary from before the zoo (no half column) holds ratios against vramlab classic, not
# against PyTorch: refused rather than drawn under the wrong axis
if (system(sprintf("grep -c '^half,' %s", fq)) + 0 == 0) { \
    print "torch_bench: ".f." has no half column: a summary from before the zoo, whose ratios are against vramlab classic; render it with plots/torch_bench.gp of its revision"; exit status 1 }
# columns by their header's names
head = "!/^#/ && !h {for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next} "
rows(col) = sprintf("awk -F, '%s !/^#/ && $c[\"allocator\"] !~ /[+]/ {print %s}' %s | awk '!seen[$0]++' | tr '\\n' ' '", head, col, fq)
comment(key) = system(sprintf("sed -n 's/^# %s: //p' %s | head -1", key, fq))
if (!exists("workloads")) workloads = system(rows('$c["workload"]'))
names = system(rows('$c["allocator"]'))
n = words(names)
nw = words(workloads)
if (nw == 0) { print "torch_bench: no workload rows in ".f; exit status 1 }
cols = ceil(sqrt(nw))
set terminal pngcairo size (cols * 560 + 200),(ceil(nw * 1.0 / cols) * 420 + 60) enhanced font 'DejaVu Sans,10'
set output out
set termoption noenhanced
title_of(w) = w . system(sprintf("awk -F, '%s $c[\"workload\"] == \"%s\" {print \" [\" $c[\"half\"] \"]\"; exit}' %s", head, w, fq))
colors = "#7f7f7f #1f77b4 #9467bd #d62728 #2ca02c #ff7f0e #8c564b #e377c2"
# torch is the reference: its ratio is 1 by definition
ratio_of(k) = (word(names, k) eq 'torch') ? 1 : column('ratio')
pick(w, k, v) = (strcol('workload') eq w && strcol('allocator') eq word(names, k)) ? v : NaN
# a bound that is missing (too few processes for an interval) draws no bar
lo(c, v) = (strcol(c) eq '') ? v : column(c)
set key outside right top box font ',8'
set xlabel 'step time / PyTorch default (estimate, 95% interval)'
set ylabel 'peak reserved / peak allocated'
set offsets graph 0.05, graph 0.05, graph 0.08, graph 0.08
set multiplot layout ceil(nw * 1.0 / cols), cols title sprintf("PyTorch workloads: waste against step time, per allocator (%s, revision %s)", comment('device'), comment('git'))
do for [i=1:nw] {
    w = word(workloads, i)
    set title title_of(w)
    set arrow 1 from graph 0, first 1.02 to graph 1, first 1.02 nohead dt 2 lc rgb '#888888' front
    set arrow 2 from first 1.03, graph 0 to first 1.03, graph 1 nohead dt 2 lc rgb '#888888' front
    # allocators with a waste but no speed figure in this run (no torch column, e.g. a
    # merged run): their waste in a note, not a point at a made-up speed
    note = ''
    do for [k=1:n] {
        stats f using ((strcol('workload') eq w && strcol('allocator') eq word(names, k) && word(names, k) ne 'torch' \
                        && strcol('ratio') eq '' && strcol('waste') ne '') ? column('waste') : 0) nooutput
        if (STATS_max > 0) { note = note . sprintf("%s %.3f\n", word(names, k), STATS_max) }
    }
    unset label 1
    if (strlen(note) > 0) {
        set label 1 "waste, no speed figure in this run:\n" . note at graph 0.02, graph 0.96 left front font ',8'
    }
    plot for [k=1:n] f using (pick(w, k, ratio_of(k))):(pick(w, k, column('waste'))): \
             (pick(w, k, word(names, k) eq 'torch' ? 1 : lo('ratio_lo', column('ratio')))): \
             (pick(w, k, word(names, k) eq 'torch' ? 1 : lo('ratio_hi', column('ratio')))): \
             (pick(w, k, lo('waste_min', column('waste')))):(pick(w, k, lo('waste_max', column('waste')))) \
             with xyerrorbars pt (k + 3) ps 1.4 lw 1.5 lc rgb word(colors, k) title word(names, k), \
         '+' using (1.03):(1.02) every ::0::0 with points ps 0 notitle
}
unset multiplot
