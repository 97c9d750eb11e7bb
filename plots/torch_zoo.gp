# The torch-bench zoo (make torch-bench, scripts/torch/bench.py), one column per workload
# (its half of the zoo in brackets), one colour per allocator, in three panels:
#   1. step time / PyTorch's default allocator: the Hodges-Lehmann ratio between processes
#      with its 95% interval (no bar where the processes are too few for one); dashed: 1.03,
#      the Done-when's limit;
#   2. waste, peak reserved / peak allocated: the median with min..max over processes;
#      dashed: 1.02;
#   3. the allocator's device map calls per timed step (log scale of 1 + maps, so that 0
#      shows); an allocator that does not count them has no point.
# In-process pairs (A+B) are left out: their ratio is B against A, not against PyTorch.
# Input: the run's torch_zoo.summary.csv (bench_stats.PLOT_FIELDS: the summary without its
# free-text columns, so that awk can split it; `make plots RUN=torch-bench/<run-id>`
# renders it); the title takes the device and git revision from its comment lines:
#   gnuplot -c plots/torch_zoo.gp zoo.png results/torch-bench/ID/torch_zoo.summary.csv x
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1700,1500 enhanced font 'DejaVu Sans,10'
set output out
set termoption noenhanced
f = FILE[1]
# The run's conditions ("# key: value", the first of each key), each comment line read
# whole as data (no line holds \001).
set datafile commentschars ''
set datafile separator "\001"
comments_ = "\n"
stats f using (l_ = strcol(1), l_[1:1] eq '#' ? (comments_ = comments_ . l_ . "\n", 0) : 0) nooutput
set datafile separator ','
set datafile commentschars '#'
comment(key) = (p_ = strstrt(comments_, "\n# " . key . ": ")) ? line_(comments_[p_ + strlen(key) + 5:]) : ''
line_(s) = s[1:strstrt(s, "\n") - 1]
# Workloads (column 2) and allocators (3) in order of first appearance, in-process pairs
# (A+B) and the header row (half, ...) left out; a tic is the workload with its half (1).
row(h, a) = h ne 'half' && !strstrt(a, '+')
names_ = "\n"
stats f using (row(strcol(1), strcol(3)) ? add(strcol(2)) : 0) nooutput
nw = items(names_)
if (nw == 0) { print "torch_zoo: no workload rows in ".f; exit status 1 }
array W[nw]
array T[nw]
do for [i = 1:nw] { W[i] = item(names_, i); T[i] = '' }
stats f using (row(strcol(1), strcol(3)) && (i_ = sum [i = 1:nw] (W[i] eq strcol(2) ? i : 0)) > 0 && T[i_] eq '' \
               ? (T[i_] = strcol(2) . '[' . strcol(1) . ']', 0) : 0) nooutput
names_ = "\n"
stats f using (row(strcol(1), strcol(3)) ? add(strcol(3)) : 0) nooutput
na = items(names_)
array N[na > 0 ? na : 1]
do for [k = 1:na] { N[k] = item(names_, k) }
# The allocators with a figure in a column (no empty curve, no gnuplot warning): in
# order of first appearance, as lists.
names_ = "\n"
stats f using (row(strcol(1), strcol(3)) && strcol('ratio') ne '' ? add(strcol(3)) : 0) nooutput
has_ratio = names_
names_ = "\n"
stats f using (row(strcol(1), strcol(3)) && strcol('waste') ne '' ? add(strcol(3)) : 0) nooutput
has_waste = names_
names_ = "\n"
stats f using (row(strcol(1), strcol(3)) && strcol('maps_per_step') ne '' ? add(strcol(3)) : 0) nooutput
has_maps = names_
colors = "#7f7f7f #1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b #e377c2"
colour(k) = word(colors, (k - 1) % words(colors) + 1) # (more allocators than colours: they repeat)
idx(w) = sum [i=1:nw] (W[i] eq w ? i : 0)
off(k) = (k - (na + 1) / 2.0) * 0.6 / na
val(c) = (strcol(c) eq '') ? NaN : column(c)
bound(c, v) = (strcol(c) eq '') ? v : column(c)  # a missing bound draws no bar
k_of(a) = sum [i=1:na] (N[i] eq a ? i : 0)  # an allocator's colour and offset
x(a) = (strcol(3) eq a) ? idx(strcol(2)) + off(k_of(a)) : NaN
# torch is the reference: its ratio is 1 by definition
ratio(a) = (a eq 'torch') ? 1 : val('ratio')
set xrange [0.5:nw + 0.5]
set xtics () rotate by 25 right font ',9'
do for [i=1:nw] { set xtics add (tic(T[i]) i) }
set key outside right top box font ',9'
set bmargin 6
set multiplot layout 3, 1 title "torch-bench zoo: " . comment('device') . ", revision " . comment('git') . \
    ", run " . comment('run_id') font ',12'

set title 'step time / PyTorch default allocator (Hodges-Lehmann ratio between processes, 95% interval)'
set ylabel 'ratio to torch'
set arrow 1 from graph 0, first 1.03 to graph 1, first 1.03 nohead dt 2 lc rgb '#888888' front
set arrow 2 from graph 0, first 1 to graph 1, first 1 nohead lc rgb '#bbbbbb' back
# torch has no ratio column (1 by definition) but a point
names_ = has_ratio
if (k_of('torch') > 0) { x_ = add('torch') }
nr = items(names_)
array R[nr > 0 ? nr : 1]
do for [j = 1:nr] { R[j] = item(names_, j) }
plot for [j = 1:nr] f using (x(R[j])):(ratio(R[j])):(R[j] eq 'torch' ? 1 : bound('ratio_lo', ratio(R[j]))): \
         (R[j] eq 'torch' ? 1 : bound('ratio_hi', ratio(R[j]))) \
         with yerrorbars pt 7 ps 1.1 lw 1.5 lc rgb colour(k_of(R[j])) title R[j]

set title 'waste: peak reserved / peak allocated (median, min..max over processes)'
set ylabel 'peak reserved / peak allocated'
unset arrow 2
set arrow 1 from graph 0, first 1.02 to graph 1, first 1.02 nohead dt 2 lc rgb '#888888' front
nr = items(has_waste)
array R[nr > 0 ? nr : 1]
do for [j = 1:nr] { R[j] = item(has_waste, j) }
plot for [j = 1:nr] f using (x(R[j])):(val('waste')):(bound('waste_min', val('waste'))): \
         (bound('waste_max', val('waste'))) with yerrorbars pt 5 ps 1.0 lw 1.5 lc rgb colour(k_of(R[j])) title R[j]

set title "the allocator's device map calls per timed step (median over processes)"
set ylabel 'maps per step'
unset arrow 1
set logscale y
set ytics ("0" 1, "1" 2, "2" 3, "5" 6, "10" 11, "20" 21, "50" 51, "100" 101, "200" 201, "500" 501, "1000" 1001, "10000" 10001)
set yrange [0.8:*]
nr = items(has_maps)
array R[nr > 0 ? nr : 1]
do for [j = 1:nr] { R[j] = item(has_maps, j) }
plot for [j = 1:nr] f using (x(R[j])):(1 + val('maps_per_step')) \
         with points pt 9 ps 1.4 lc rgb colour(k_of(R[j])) title R[j]
unset multiplot
