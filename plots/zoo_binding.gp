# Which limit binds, per zoo workload: scripts/torch/binding.py's CSV (one row a workload).
# Three panels over the same workloads, the default SPEC (red circles) beside the
# low-waste SPEC (blue triangles), each with its 95% Hodges-Lehmann interval between
# processes where it has one:
#   top:    peak reserved / peak allocated, live; dashed: the 1.02 limit;
#   middle: mean step time / PyTorch's default allocator, live; dashed: the 1.03 limit;
#   bottom: cold replay ops/s / PyTorch's expandable segments, on the GPU (log scale);
#           dashed: 1 (at least as fast above it).
# The x labels carry the row's `binds` (what the runs show binds there).
#   gnuplot -c plots/zoo_binding.gp OUT.png binding.csv x
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
set terminal pngcairo size 1400,1100 enhanced font 'DejaVu Sans,10'
set output out
set termoption noenhanced
# The rows, the header row (data here) left out by its name.
n = 0
stats f using (strcol(1) eq 'workload' ? 0 : (n = n + 1, 0)) nooutput
if (n == 0) { print "zoo_binding: no rows in ".f; exit status 1 }
set xrange [-0.6:n - 0.4]
set grid ytics lc rgb '#dddddd'
set key inside top left font ',9'
set lmargin 12
set rmargin 3
left(x) = x - 0.12
right(x) = x + 0.12
set multiplot layout 3, 1 title "Expandable on a GPU: what keeps the default SPEC over 1.02, per workload (the low-waste SPEC's cost)"
set format x ''
set xtics 1
set ylabel 'peak reserved / peak allocated'
set yrange [1.0:*]
set arrow 1 from graph 0, first 1.02 to graph 1, first 1.02 nohead dt 2 lc rgb '#000000'
plot f using (left($0)):'default_waste' with points pt 6 ps 1.4 lc rgb '#d62728' title 'default SPEC', \
     f using (right($0)):'lowwaste_waste' with points pt 8 ps 1.4 lc rgb '#1f77b4' title 'low-waste SPEC'
unset arrow 1
set ylabel 'mean step / PyTorch default'
set logscale y
set yrange [0.7:2.4]
set ytics (0.7, 0.8, 0.9, 1, 1.03, 1.1, 1.2, 1.4, 1.7, 2.0)
set arrow 2 from graph 0, first 1.03 to graph 1, first 1.03 nohead dt 2 lc rgb '#000000'
unset key
plot f using (left($0)):'default_ratio_mean':'default_ratio_mean_lo':'default_ratio_mean_hi' with yerrorbars pt 6 ps 1.4 lc rgb '#d62728', \
     f using (right($0)):'lowwaste_ratio_mean':'lowwaste_ratio_mean_lo':'lowwaste_ratio_mean_hi' with yerrorbars pt 8 ps 1.4 lc rgb '#1f77b4'
unset arrow 2
set ylabel 'cold replay ops/s / PyTorch expandable'
set yrange [0.02:6]
set ytics (0.03, 0.1, 0.3, 1, 2, 4)
set arrow 3 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#000000'
set format x '%g'
set xtics rotate by 20 right font ',9'
plot f using (left($0)):'default_cold':'default_cold_lo':'default_cold_hi' with yerrorbars pt 6 ps 1.4 lc rgb '#d62728', \
     f using (right($0)):'lowwaste_cold':'lowwaste_cold_lo':'lowwaste_cold_hi':xtic(strcol('workload').': '.strcol('binds')) \
        with yerrorbars pt 8 ps 1.4 lc rgb '#1f77b4'
unset multiplot
