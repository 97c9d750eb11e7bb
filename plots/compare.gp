# scripts/compare: B/A for every metric compared (index on x), log scale, with the
# spread of B relative to A's median as bars where both runs recorded one; coloured by
# verdict. Called by scripts/compare with files='OUT/compare.csv'.
load 'plots/common.gp'
f = word(files,1)
set logscale y
set xlabel 'metric (index in compare.csv)'
set ylabel 'B / A'
set key inside left top font ',8'
set title 'run B against run A (1 = unchanged; slower/worse in red, faster/better in green)'
v(w) = (strcol("verdict") eq w) ? column("ratio") : NaN
plot f using "index":"ratio":"ratio_lo":"ratio_hi" with yerrorbars pt 1 ps 0 lc rgb '#bbbbbb' title 'B p25..p75 / A median', \
     f using "index":(v("same")) with points pt 7 ps 0.5 lc rgb '#999999' title 'same', \
     f using "index":(v("slower")) with points pt 7 ps 0.8 lc rgb '#d62728' title 'slower', \
     f using "index":(v("worse")) with points pt 5 ps 0.8 lc rgb '#d62728' title 'worse (memory)', \
     f using "index":(v("faster")) with points pt 7 ps 0.8 lc rgb '#2ca02c' title 'faster', \
     f using "index":(v("better")) with points pt 5 ps 0.8 lc rgb '#2ca02c' title 'better (memory)', \
     1 with lines lc black dt 2 notitle
