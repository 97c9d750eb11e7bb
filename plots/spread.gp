# make bench REPEAT=N: how much each metric moved from one repetition (one process) to the
# next: (p75 - p25) / median over the repetitions, per metric, from summary.csv; metrics
# identical in every repetition sit at the bottom. Called by scripts/plots.sh with
# FILES RUN/summary.csv, LABELS <repetitions>.
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
set logscale y
set yrange [1e-4:*]
set format y '%g'
set xlabel 'metric (row in summary.csv)'
set ylabel 'relative IQR over repetitions (log)'
set key inside left top font ',9'
set title noenhanced sprintf('Process-to-process spread of every metric over %s repetitions', LABEL[1])
rel(x) = (x > 0) ? x : 1.5e-4
plot f using 0:(strcol("rel_iqr") eq "" ? NaN : rel(column("rel_iqr"))) with points pt 7 ps 0.5 lc rgb '#1f77b4' title 'relative IQR (identical in every repetition: bottom)', \
     0.05 with lines lc rgb '#2ca02c' dt 2 title '5%', \
     0.2 with lines lc rgb '#d62728' dt 2 title '20%'
