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
fq = shq(f)   # f as one shell word
comment(key) = system(sprintf("sed -n 's/^# %s: //p' %s | head -1", key, fq))
rows(col) = sprintf("awk -F, '!/^#/ && $1 != \"half\" && $3 !~ /[+]/ {print %s}' %s | awk '!seen[$0]++' | tr '\\n' ' '", col, fq)
wl = system(rows('$2'))
tics = system(rows("$2 \"[\" $1 \"]\""))
names = system(rows('$3'))
# the allocators with a figure in column col (no empty curve, no gnuplot warning)
having(col) = system(sprintf("awk -F, '!/^#/ && !c {for (i = 1; i <= NF; i++) if ($i == \"%s\") c = i; next} " \
    . "!/^#/ && $3 !~ /[+]/ && $c != \"\" {print $3}' %s | awk '!seen[$0]++' | tr '\\n' ' '", col, fq))
nw = words(wl)
na = words(names)
if (nw == 0) { print "torch_zoo: no workload rows in ".f; exit status 1 }
colors = "#7f7f7f #1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b #e377c2"
idx(w) = sum [i=1:nw] (word(wl, i) eq w ? i : 0)
off(k) = (k - (na + 1) / 2.0) * 0.6 / na
val(c) = (strcol(c) eq '') ? NaN : column(c)
bound(c, v) = (strcol(c) eq '') ? v : column(c)  # a missing bound draws no bar
k_of(a) = sum [i=1:na] (word(names, i) eq a ? i : 0)  # an allocator's colour and offset
x(a) = (strcol(3) eq a) ? idx(strcol(2)) + off(k_of(a)) : NaN
# torch is the reference: its ratio is 1 by definition
ratio(a) = (a eq 'torch') ? 1 : val('ratio')
set xrange [0.5:nw + 0.5]
set xtics () rotate by 25 right font ',9'
do for [i=1:nw] { set xtics add (word(tics, i) i) }
set key outside right top box font ',9'
set bmargin 6
set multiplot layout 3, 1 title sprintf("torch-bench zoo: %s, revision %s, run %s", \
    comment('device'), comment('git'), comment('run_id')) font ',12'

set title 'step time / PyTorch default allocator (Hodges-Lehmann ratio between processes, 95% interval)'
set ylabel 'ratio to torch'
set arrow 1 from graph 0, first 1.03 to graph 1, first 1.03 nohead dt 2 lc rgb '#888888' front
set arrow 2 from graph 0, first 1 to graph 1, first 1 nohead lc rgb '#bbbbbb' back
rn = having('ratio') . (strstrt(' '.names, ' torch ') ? ' torch' : '')
plot for [a in rn] f using (x(a)):(ratio(a)):(a eq 'torch' ? 1 : bound('ratio_lo', ratio(a))): \
         (a eq 'torch' ? 1 : bound('ratio_hi', ratio(a))) \
         with yerrorbars pt 7 ps 1.1 lw 1.5 lc rgb word(colors, k_of(a)) title a

set title 'waste: peak reserved / peak allocated (median, min..max over processes)'
set ylabel 'peak reserved / peak allocated'
unset arrow 2
set arrow 1 from graph 0, first 1.02 to graph 1, first 1.02 nohead dt 2 lc rgb '#888888' front
plot for [a in having('waste')] f using (x(a)):(val('waste')):(bound('waste_min', val('waste'))): \
         (bound('waste_max', val('waste'))) with yerrorbars pt 5 ps 1.0 lw 1.5 lc rgb word(colors, k_of(a)) title a

set title "the allocator's device map calls per timed step (median over processes)"
set ylabel 'maps per step'
unset arrow 1
set logscale y
set ytics ("0" 1, "1" 2, "2" 3, "5" 6, "10" 11, "20" 21, "50" 51, "100" 101, "200" 201, "500" 501, "1000" 1001, "10000" 10001)
set yrange [0.8:*]
plot for [a in having('maps_per_step')] f using (x(a)):(1 + val('maps_per_step')) \
         with points pt 9 ps 1.4 lc rgb word(colors, k_of(a)) title a
unset multiplot
