# scripts/compare: one program's metrics, every repetition of A (blue, left) and of B
# (red, right) as a point, divided by A's median so all metrics share one axis (log), and
# the estimated ratio B/A with its confidence interval in black between them. Called by
# scripts/compare with FILES OUT/samples.csv, LABELS <program>.
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,800 enhanced font 'DejaVu Sans,10'
set output out
prog = LABEL[1]
# Only this program's rows: rows that a condition skips would still set tic labels.
f = sprintf("< awk -F, -v p=%s '$1 !~ /^#/ && (NR == 2 || $2 == p)' %s", shq(prog), shq(FILE[1]))
# One row per metric (first = 1) carries its label and ratio.
lead = sprintf("< awk -F, -v p=%s '$1 !~ /^#/ && (NR == 2 || ($2 == p && $11 == 1))' %s", shq(prog), shq(FILE[1]))
set logscale y
set key inside left top font ',9'
set ylabel 'value / median of A (log)'
set xlabel 'metric'
set title noenhanced sprintf('%s: every repetition of A and B (one process each), and B/A with its interval', prog)
set xtics rotate by 60 right font ',7' noenhanced
set offsets 0.5, 0.5, 0, 0
in(side) = (strcol("program") eq prog && strcol("side") eq side) ? column("norm") : NaN
# A deterministic jitter inside each side's lane keeps equal values apart.
jit(x) = 0.08 * (x - floor(x)) 
plot f using ($1 - 0.22 + jit($0 * 0.618)):(in("A")) with points pt 6 ps 0.7 lc rgb '#1f77b4' title 'A (each repetition)', \
     f using ($1 + 0.14 + jit($0 * 0.618)):(in("B")) with points pt 6 ps 0.7 lc rgb '#d62728' title 'B (each repetition)', \
     lead using 1:(column("ratio") > 0 ? column("ratio") : NaN):"ratio_lo":"ratio_hi":xticlabels(strcol("metric")) \
       with yerrorbars pt 7 ps 0.8 lc rgb 'black' title 'B/A and its interval', \
     1 with lines lc rgb '#888888' dt 2 notitle
