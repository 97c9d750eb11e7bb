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
# One pass over every line, comments included, each line whole (no line holds \001): the
# run's conditions ("# key: value", the first of each key) and whether a header starts
# with the half column.
set datafile commentschars ''
set datafile separator "\001"
comments_ = "\n"; half_ = 0
stats f using (l_ = strcol(1), l_[1:1] eq '#' ? (comments_ = comments_ . l_ . "\n", 0) : \
               (half_ = half_ || l_[1:5] eq 'half,', 0)) nooutput
set datafile separator ','
set datafile commentschars '#'
comment(key) = (p_ = strstrt(comments_, "\n# " . key . ": ")) ? line_(comments_[p_ + strlen(key) + 5:]) : ''
line_(s) = s[1:strstrt(s, "\n") - 1]
# A summary from before the zoo (no half column) holds ratios against vramlab classic, not
# against PyTorch: refused rather than drawn under the wrong axis
if (!half_) { \
    print "torch_bench: ".f." has no half column: a summary from before the zoo, whose ratios are against vramlab classic; render it with plots/torch_bench.gp of its revision"; exit status 1 }
# The allocators and workloads in order of first appearance, in-process pairs (A+B) left
# out (the header row is data here, left out by its name).
row(w, a) = w ne 'workload' && !strstrt(a, '+')
names_ = "\n"
stats f using (row(strcol('workload'), strcol('allocator')) ? add(strcol('allocator')) : 0) nooutput
n = items(names_)
array N[n > 0 ? n : 1]
do for [k = 1:n] { N[k] = item(names_, k) }
names_ = "\n"
if (exists("workloads")) {   # the caller's choice (gnuplot -e "workloads='a b'" -c ...)
    do for [i = 1:words(workloads)] { x_ = add(word(workloads, i)) }
} else {
    stats f using (row(strcol('workload'), strcol('allocator')) ? add(strcol('workload')) : 0) nooutput
}
nw = items(names_)
if (nw == 0) { print "torch_bench: no workload rows in ".f; exit status 1 }
array W[nw]
array H[nw]   # " [half]": the workload's half of the zoo, from its first row
do for [i = 1:nw] { W[i] = item(names_, i); H[i] = '' }
stats f using (w_ = strcol('workload'), (i_ = sum [i = 1:nw] (W[i] eq w_ ? i : 0)) > 0 && H[i_] eq '' \
               ? (H[i_] = ' [' . strcol('half') . ']', 0) : 0) nooutput
cols = ceil(sqrt(nw))
set terminal pngcairo size (cols * 560 + 200),(ceil(nw * 1.0 / cols) * 420 + 60) enhanced font 'DejaVu Sans,10'
set output out
set termoption noenhanced
colors = "#7f7f7f #1f77b4 #9467bd #d62728 #2ca02c #ff7f0e #8c564b #e377c2"
colour(k) = word(colors, (k - 1) % words(colors) + 1) # (more allocators than colours: they repeat)
# torch is the reference: its ratio is 1 by definition
ratio_of(k) = (N[k] eq 'torch') ? 1 : column('ratio')
pick(w, k, v) = (strcol('workload') eq w && strcol('allocator') eq N[k]) ? v : NaN
# a bound that is missing (too few processes for an interval) draws no bar
lo(c, v) = (strcol(c) eq '') ? v : column(c)
set key outside right top box font ',8'
set xlabel 'step time / PyTorch default (estimate, 95% interval)'
set ylabel 'peak reserved / peak allocated'
set offsets graph 0.05, graph 0.05, graph 0.08, graph 0.08
set multiplot layout ceil(nw * 1.0 / cols), cols \
    title "PyTorch workloads: waste against step time, per allocator (" . comment('device') . ", revision " . comment('git') . ")"
do for [i=1:nw] {
    w = W[i]
    set title w . H[i]
    set arrow 1 from graph 0, first 1.02 to graph 1, first 1.02 nohead dt 2 lc rgb '#888888' front
    set arrow 2 from first 1.03, graph 0 to first 1.03, graph 1 nohead dt 2 lc rgb '#888888' front
    # allocators with a waste but no speed figure in this run (no torch column, e.g. a
    # merged run): their waste in a note, not a point at a made-up speed
    note = ''
    do for [k=1:n] {
        stats f using ((strcol('workload') eq w && strcol('allocator') eq N[k] && N[k] ne 'torch' \
                        && strcol('ratio') eq '' && strcol('waste') ne '') ? column('waste') : 0) nooutput
        if (STATS_max > 0) { note = note . N[k] . sprintf(" %.3f\n", STATS_max) }
    }
    unset label 1
    if (strlen(note) > 0) {
        set label 1 "waste, no speed figure in this run:\n" . note at graph 0.02, graph 0.96 left front font ',8'
    }
    plot for [k=1:n] f using (pick(w, k, ratio_of(k))):(pick(w, k, column('waste'))): \
             (pick(w, k, N[k] eq 'torch' ? 1 : lo('ratio_lo', column('ratio')))): \
             (pick(w, k, N[k] eq 'torch' ? 1 : lo('ratio_hi', column('ratio')))): \
             (pick(w, k, lo('waste_min', column('waste')))):(pick(w, k, lo('waste_max', column('waste')))) \
             with xyerrorbars pt (k + 3) ps 1.4 lw 1.5 lc rgb colour(k) title N[k], \
         '+' using (1.03):(1.02) every ::0::0 with points ps 0 notitle
}
unset multiplot
