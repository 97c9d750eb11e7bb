# torch_alloc_compare: ns per operation of each allocator, cache-hit alloc+free pairs
# by size and random churn; bar = median, whisker up to p99 (of 100-op batch means).
# Colour families: vramlab blues, PyTorch orange, cudaMallocAsync grey, RMM greens
# (where the RMM peer shim was not built its rows, bars and key entries are absent).
# Dashed lines: vramlab's targets (100 ns per pair, 150 ns per churn op).
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,700 noenhanced font 'DejaVu Sans,10'
set output out
f = FILE[1]
names = "vramlab:caching vramlab:caching:expandable vramlab-plugin:vl_alloc torch:CUDACachingAllocator cudaMallocAsync:warm-pool rmm:pool rmm:arena rmm:async rmm:binning"
colors = "#08306b #2171b5 #6baed6 #e6550d #969696 #00441b #238b45 #74c476 #c7e9c0"
n = words(names)
w = 0.84 / n
cat(test, size) = test eq 'churn' ? 4 : (size <= 512 ? 0 : size <= 65536 ? 1 : size <= 1048576 ? 2 : 3)
xpos(k) = cat(strcol(2), $3) + (k - (n + 1) / 2.0) * w
pick(k, v) = strcol(1) eq word(names, k) ? v : NaN
set title 'Allocator speed in one process: cache-hit alloc+free pair, random churn (10,000 slots, 512 B-4 MiB)'
set ylabel 'ns per pair / per operation (median, whisker to p99; log scale)'
set logscale y
set yrange [10:*]
set xrange [-0.55:4.55]
set xtics ('pair 512 B' 0, 'pair 64 KiB' 1, 'pair 1 MiB' 2, 'pair 16 MiB' 3, 'churn' 4)
set grid noxtics ytics mytics
set for [g=0:3] arrow from g + 0.5, graph 0 to g + 0.5, graph 1 nohead lc rgb '#bbbbbb' back
set style fill solid 0.9 border rgb '#333333'
set boxwidth w
set key outside right top box
set arrow from -0.5, 100 to 3.5, 100 nohead dt 2 lw 1.5 lc rgb '#444444' front
set arrow from 3.5, 150 to 4.5, 150 nohead dt 2 lw 1.5 lc rgb '#444444' front
plot for [k=1:n] f using (xpos(k)):(pick(k, column('op_median_ns'))) with boxes lc rgb word(colors, k) title word(names, k), \
     for [k=1:n] f using (xpos(k)):(pick(k, column('op_median_ns'))):(pick(k, column('op_median_ns'))):(pick(k, column('op_p99_ns'))) \
         with yerrorbars pt 0 ps 0 lc rgb 'black' notitle
