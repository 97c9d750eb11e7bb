# The expandable allocator's waste/speed trade-off per workload on a GPU, from
# scripts/torch/tradeoff.py's CSV (one torch-bench run with the default SPEC alone, the
# low-waste SPEC alone, and both paired in one process): for each workload an arrow from
# the default (x: its peak reserved / peak allocated; y: 1) to the low-waste SPEC (x: its
# waste; y: its timed steps' total time over the default's on the same steps, paired in
# one process: a diagnostic, one process). Dashed: waste 1.02 and the 3% speed limit.
# Labels name the workload, staggered up and down by row so that neighbours stay apart;
# where the pair could not run, the low-waste point sits at 1.
#   gnuplot -c plots/zoo_tradeoff_live.gp OUT.png tradeoff.csv x
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
set terminal pngcairo size 1100,700 enhanced font 'DejaVu Sans,10'
set output out
set termoption noenhanced
set datafile separator ','
set key autotitle columnhead
set logscale y
set xlabel 'peak reserved / peak allocated'
set ylabel 'step time against the default (paired total, log scale)'
set xrange [1.0:*]
set yrange [0.9:1.6]
set ytics (0.9, 0.95, 1, 1.03, 1.1, 1.2, 1.4, 1.6)
set grid lc rgb '#dddddd'
set arrow 1 from 1.02, graph 0 to 1.02, graph 1 nohead dt 2 lc rgb '#000000'
set arrow 2 from graph 0, first 1.03 to graph 1, first 1.03 nohead dt 2 lc rgb '#000000'
set title "Expandable on a GPU: the default SPEC (circle) against span=0,reclaim_max=0.008 (arrow head), per workload"
yb(v) = strlen(v) > 0 ? real(v) : 1.0
plot f using 'a_waste':(1.0):(column('b_waste') - column('a_waste')):(yb(strcol('time_ratio')) - 1.0) \
        with vectors head filled lc rgb '#1f77b4' notitle, \
     f using 'a_waste':(1.0) with points pt 6 ps 1.2 lc rgb '#d62728' title 'default', \
     f using 'b_waste':(yb(strcol('time_ratio')) * (1 + 0.006 * (int(column(0)) % 4 - 1.5))):'workload' \
        with labels offset 0.8, 0 left font ',8' notitle
