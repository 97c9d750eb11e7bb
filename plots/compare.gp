# scripts/compare: B/A for every metric compared (index on x), log scale, with its
# confidence interval (Hodges-Lehmann over the repetitions) where both runs had enough
# repetitions; coloured by verdict. Called by scripts/compare with FILES OUT/compare.csv.
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
set logscale y
set xlabel 'metric (index in compare.csv)'
set ylabel 'B / A'
set key inside left top font ',8'
set title 'run B against run A (1 = unchanged; slower/worse in red, faster/better in green)'
v(w) = (strcol("verdict") eq w) ? column("ratio") : NaN
ok(x) = (x > 0) ? x : NaN
plot f using "index":(ok(column("ratio"))):"ratio_lo":"ratio_hi" with yerrorbars pt 1 ps 0 lc rgb '#bbbbbb' title 'interval of B/A', \
     f using "index":(v("same")) with points pt 7 ps 0.5 lc rgb '#999999' title 'same', \
     f using "index":(v("inconclusive")) with points pt 6 ps 0.6 lc rgb '#9467bd' title 'inconclusive', \
     f using "index":(v("changed")) with points pt 4 ps 0.7 lc rgb '#ff7f0e' title 'changed (no better direction)', \
     f using "index":(v("slower")) with points pt 7 ps 0.8 lc rgb '#d62728' title 'slower', \
     f using "index":(v("worse")) with points pt 5 ps 0.8 lc rgb '#d62728' title 'worse (memory)', \
     f using "index":(v("faster")) with points pt 7 ps 0.8 lc rgb '#2ca02c' title 'faster', \
     f using "index":(v("better")) with points pt 5 ps 0.8 lc rgb '#2ca02c' title 'better (memory)', \
     1 with lines lc black dt 2 notitle
