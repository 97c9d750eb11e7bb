# Live PyTorch benchmark (make torch-bench, scripts/torch/bench.py): per workload, each
# allocator's waste (peak reserved / peak allocated; over peak requested where the
# allocator keeps no allocated figure: rmm-pool) against its step time relative to
# vramlab classic. Error bars: x the ratio's 95% interval (Hodges-Lehmann between
# processes, or the paired signed-rank one where narrower), y the waste's min..max over
# processes. The dashed lines are the acceptance limits of vramlab expandable (ratio
# <= 1.03, waste <= 1.02); every panel's range takes them in. Allocators with a waste
# but no speed figure (a run without a classic column) are listed in a note in the panel.
# Input: the run's summary.csv (copied as torch_bench.summary.csv, so
# `make plots RUN=torch-bench/<run-id>` renders it):
#   gnuplot -c plots/torch_bench.gp tb.png results/torch-bench/ID/summary.csv x
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,1000 enhanced font 'DejaVu Sans,10'
set output out
set termoption noenhanced
f = FILE[1]
if (!exists("workloads")) workloads = "transformer resnet50 gpt2 moe"
names = "torch torch-expandable torch-async vramlab vramlab-expandable rmm-pool rmm-async"
title_of(w) = w eq 'transformer' ? 'transformer training, variable sequence length' : \
              w eq 'resnet50' ? 'ResNet-50 training, variable batch and image size' : \
              w eq 'gpt2' ? 'GPT-2-style generation, growing KV cache' : \
              w eq 'moe' ? 'mixture-of-experts training, variable routing' : w
colors = "#7f7f7f #1f77b4 #9467bd #d62728 #2ca02c #ff7f0e #8c564b"
n = words(names)
nw = words(workloads)
pick(w, k, v) = (strcol(1) eq w && strcol(2) eq word(names, k)) ? v : NaN
# a bound that is missing (too few processes for an interval) draws no bar
lo(c, v) = (strcol(c) eq '') ? v : column(c)
set key outside right top box font ',8'
set xlabel 'step time / vramlab classic (estimate, 95% interval)'
set ylabel 'peak reserved / peak allocated'
set offsets graph 0.05, graph 0.05, graph 0.08, graph 0.08
set multiplot layout (nw > 2 ? 2 : 1), (nw > 1 ? 2 : 1) title 'PyTorch workloads: memory waste against step time, per allocator'
do for [i=1:nw] {
    w = word(workloads, i)
    set title title_of(w)
    set arrow 1 from graph 0, first 1.02 to graph 1, first 1.02 nohead dt 2 lc rgb '#888888' front
    set arrow 2 from first 1.03, graph 0 to first 1.03, graph 1 nohead dt 2 lc rgb '#888888' front
    # allocators with a waste but no speed figure in this run (no classic column, e.g. a
    # merged run): their waste in a note, not a point at a made-up speed
    note = ''
    do for [k=1:n] {
        stats f using ((strcol(1) eq w && strcol(2) eq word(names, k) && strcol('ratio') eq '' \
                        && strcol('waste') ne '') ? column('waste') : 0) nooutput
        if (STATS_max > 0) { note = note . sprintf("%s %.3f\n", word(names, k), STATS_max) }
    }
    unset label 1
    if (strlen(note) > 0) {
        set label 1 "waste, no speed figure in this run:\n" . note at graph 0.02, graph 0.96 left front font ',8'
    }
    plot for [k=1:n] f using (pick(w, k, column('ratio'))):(pick(w, k, column('waste'))): \
             (pick(w, k, lo('ratio_lo', column('ratio')))):(pick(w, k, lo('ratio_hi', column('ratio')))): \
             (pick(w, k, lo('waste_min', column('waste')))):(pick(w, k, lo('waste_max', column('waste')))) \
             with xyerrorbars pt (k + 3) ps 1.4 lw 1.5 lc rgb word(colors, k) title word(names, k), \
         '+' using (1):(1) every ::0::0 with points pt 1 ps 2 lc rgb '#aaaaaa' title 'classic speed, no waste', \
         '+' using (1.03):(1.02) every ::0::0 with points ps 0 notitle
}
unset multiplot
