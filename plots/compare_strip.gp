# scripts/compare: one program's metrics, every repetition of A (blue, left) and of B
# (red, right) as a point, divided by A's median so all metrics share one axis (log), and
# the estimated ratio B/A with its confidence interval in black between them. Called by
# scripts/compare with FILES OUT/samples.csv, LABELS <program>.
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,800 enhanced font 'DejaVu Sans,10'
set output out
prog = LABEL[1]
# Only this program's rows, selected into gnuplot's own tables: rows that a condition
# skips would still set tic labels, and the jitter follows the row number. $F: index,
# side (1 A, 2 B), norm; $LEAD, one row per metric (first = 1): index, ratio, ratio_lo,
# ratio_hi, metric (last: a table writes a space after every other field).
set table $F separator comma
plot FILE[1] using (strcol("index")):(strcol("side") eq "A" ? 1 : strcol("side") eq "B" ? 2 : 0):(strcol("norm")) \
    with table if (strcol("program") eq prog)
set table $LEAD separator comma
plot FILE[1] using (strcol("index")):(strcol("ratio")):(strcol("ratio_lo")):(strcol("ratio_hi")):(strcol("metric")) \
    with table if (strcol("program") eq prog && column("first") == 1)
unset table
set logscale y
set key inside left top font ',9'
set ylabel 'value / median of A (log)'
set xlabel 'metric'
set title noenhanced sprintf('%s: every repetition of A and B (one process each), and B/A with its interval', prog)
set xtics rotate by 60 right font ',7' noenhanced
set offsets 0.5, 0.5, 0, 0
in(side) = column(2) == side ? column(3) : NaN
# A deterministic jitter inside each side's lane keeps equal values apart, from the row's
# number counted as in a file with its header row ($F has none).
jit(x) = 0.08 * (x - floor(x)) 
plot $F using ($1 - 0.22 + jit(($0 + 1) * 0.618)):(in(1)) with points pt 6 ps 0.7 lc rgb '#1f77b4' title 'A (each repetition)', \
     $F using ($1 + 0.14 + jit(($0 + 1) * 0.618)):(in(2)) with points pt 6 ps 0.7 lc rgb '#d62728' title 'B (each repetition)', \
     $LEAD using 1:(column(2) > 0 ? column(2) : NaN):3:4:xticlabels(strcol(5)) \
       with yerrorbars pt 7 ps 0.8 lc rgb 'black' title 'B/A and its interval', \
     1 with lines lc rgb '#888888' dt 2 notitle
