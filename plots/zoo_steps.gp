# The zoo's steady state per workload, from scripts/torch/steps_summary.py's summary.csv
# (one process per workload and config, second half of the steps): for three configs,
# PyTorch's default (torch), vramlab expandable's old default (exp-57fad87: pack=1, a fixed
# 0.8% reclaim budget) and its new default (default-d9816b4: pack=0, a budget that rises
# to 25% when reclaim churns), two panels sharing the workload axis:
#   1. waste, peak reserved / peak allocated (log scale); dashed: 1.02;
#   2. the allocator's own share of the step time (vramlab only: PyTorch's is not
#      counted), percent, log scale; dashed: 1% and 3%.
# The trade-off of the new default: waste up to 1.2 where the old one mapped and unmapped
# the same memory at every step.
#   gnuplot -c plots/zoo_steps.gp zoo.png results/reference/h100-zoo-steps/runs/summary.csv x
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
set terminal pngcairo size 1300,900 enhanced font 'DejaVu Sans,10'
set output out
set termoption noenhanced
# The workloads (column 1), sorted; the header row is data here, left out by its name.
names_ = "\n"
stats f using (strcol(1) eq 'workload' ? 0 : adds(strcol(1))) nooutput
nw = items(names_)
if (nw == 0) { print "zoo_steps: no rows in ".f; exit status 1 }
array W[nw]
do for [i = 1:nw] { W[i] = item(names_, i) }
configs = "torch exp-57fad87 default-d9816b4"
names = "PyTorch-default vramlab-expandable-old-default vramlab-expandable-new-default"
colors = "#7f7f7f #d62728 #2ca02c"
idx(w) = sum [i = 1:nw] (W[i] eq w ? i : 0)
set xtics () rotate by -30
do for [i = 1:nw] { set xtics add (tic(W[i]) i) }
set xrange [0.5:nw + 0.5]
set key outside right top
set multiplot layout 2,1 title "Zoo steady state, one process per cell (H100; results/reference/h100-zoo-steps)"
set logscale y
set ylabel 'peak reserved / peak allocated'
set ytics (1, 1.02, 1.05, 1.1, 1.2, 1.5, 2, 3)
set yrange [0.99:3]
plot for [k = 1:3] f using (strcol('config') eq word(configs, k) ? idx(strcol('workload')) + (k - 2) * 0.15 : NaN):(column('waste')) \
        with points pt 7 ps 1.2 lc rgb word(colors, k) title word(names, k), \
     1.02 with lines dt 2 lc rgb '#000000' title '1.02'
set ylabel "allocator's share of step time, %"
set ytics auto
set yrange [0.1:100]
plot for [k = 2:3] f using (strcol('config') eq word(configs, k) ? idx(strcol('workload')) + (k - 2) * 0.15 : NaN):(strcol('alloc_ms_per_step') eq '' ? NaN : 100 * column('alloc_ms_per_step') / column('median_ms')) \
        with points pt 7 ps 1.2 lc rgb word(colors, k) title word(names, k), \
     1 with lines dt 2 lc rgb '#000000' title '1%', 3 with lines dt 3 lc rgb '#000000' title '3%'
unset multiplot
