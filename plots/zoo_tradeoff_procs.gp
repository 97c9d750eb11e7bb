# The expandable allocator's waste/speed trade-off per workload on a GPU, one allocator per
# process: scripts/torch/tradeoff_procs.py's CSV (one torch-bench run of PyTorch's default
# allocator, the default SPEC and a low-waste SPEC, several processes each, interleaved).
# Per workload the default (circle) and the low-waste SPEC (triangle), joined by an arrow:
# x their peak reserved / peak allocated, y their mean step time against PyTorch's default
# allocator between processes, with its 95% Hodges-Lehmann interval. Dashed: waste 1.02
# and the 3% speed limit. A point whose interval lies above the 3% line is shown slower.
#   gnuplot -c plots/zoo_tradeoff_procs.gp OUT.png tradeoff.csv x
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
set terminal pngcairo size 1200,760 enhanced font 'DejaVu Sans,10'
set output out
set termoption noenhanced
set datafile separator ','
set key top right
set logscale y
set xlabel 'peak reserved / peak allocated'
set ylabel 'mean step time / PyTorch default (95% interval between processes, log scale)'
set xrange [1.0:*]
set yrange [0.6:2.6]
set ytics (0.6, 0.8, 0.9, 1, 1.03, 1.1, 1.2, 1.4, 1.7, 2.0, 2.4)
set grid lc rgb '#dddddd'
set arrow 1 from 1.02, graph 0 to 1.02, graph 1 nohead dt 2 lc rgb '#000000'
set arrow 2 from graph 0, first 1.03 to graph 1, first 1.03 nohead dt 2 lc rgb '#000000'
set title "Expandable on a GPU, one allocator per process: the default SPEC against a low-waste SPEC, per workload"
plot f using 'a_waste':'a_ratio_mean':(column('b_waste') - column('a_waste')):(column('b_ratio_mean') - column('a_ratio_mean')) \
        with vectors nohead dt 3 lc rgb '#888888' notitle, \
     f using 'a_waste':'a_ratio_mean':'a_ratio_mean_lo':'a_ratio_mean_hi' with yerrorbars pt 6 ps 1.2 lc rgb '#d62728' title 'default SPEC', \
     f using 'b_waste':'b_ratio_mean':'b_ratio_mean_lo':'b_ratio_mean_hi' with yerrorbars pt 8 ps 1.2 lc rgb '#1f77b4' title 'low-waste SPEC', \
     f using 'b_waste':(column('b_ratio_mean') * (1 + 0.01 * (int(column(0)) % 4 - 1.5))):'workload' \
        with labels offset 0.8, 0 left font ',8' notitle, \
     f using 'a_waste':(column('a_ratio_mean') * (1 + 0.01 * (int(column(0)) % 4 - 1.5))):'workload' \
        with labels offset 0.8, 0 left font ',8' tc rgb '#d62728' notitle
