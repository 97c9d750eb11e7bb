# make noise (scripts/ab --noise): per metric of an A/A experiment, the smallest change the
# comparison could detect at this many pairs (80% power, alpha 0.05), and the
# process-to-process noise it comes from. Called with FILES OUT/noise.csv, LABELS PAIRS.
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
set logscale y
set format y '%g%%'
set xlabel 'metric (index in noise.csv)'
set ylabel 'percent (log)'
set key inside left top font ',9'
set title noenhanced sprintf('What an A/A run at %s pairs can resolve: smallest detectable change per metric', LABEL[1])
pct(x) = (x > 0) ? 100 * x : NaN
plot f using "index":(pct(column("mde"))) with points pt 7 ps 0.6 lc rgb '#d62728' title 'smallest detectable change', \
     f using "index":(pct(column("noise"))) with points pt 6 ps 0.5 lc rgb '#1f77b4' title 'process-to-process noise (sd)', \
     5 with lines lc rgb '#2ca02c' dt 2 title '5%', \
     10 with lines lc rgb '#ff7f0e' dt 2 title '10%', \
     20 with lines lc rgb '#888888' dt 2 title '20%'
