# scripts/matrix: heat map of one program's metrics (rows) against the machines
# (columns; the baseline first), coloured by log2 of the ratio to the baseline (red:
# slower/worse direction is not known here, so red = higher, blue = lower), with the
# verdict mark in each cell; inconclusive cells are faint, so only real differences
# stand out. Called by scripts/matrix as
#   gnuplot -c plots/matrix.gp FILE OUT ROWS COLS LIM TITLE LABEL_CHARS
# FILE: its program's rows of cells.csv (program,y,x,metric,column,log2_ratio,verdict,mark);
# LIM: colour range +-LIM; LABEL_CHARS: the longest metric label. Arguments are data,
# never evaluated; the numbers are read as numbers.
file = ARG1[1:1] eq "/" ? ARG1 : "./" . ARG1
out = ARG2[1:1] eq "/" ? ARG2 : "./" . ARG2
rows = int(real(ARG3)); cols = int(real(ARG4)); lim = real(ARG5); title = ARG6; label_chars = int(real(ARG7))
set datafile separator ','
W = label_chars * 6 + 120 * cols + 160
W = W < 900 ? 900 : W
set terminal pngcairo size W,(rows * 14 + 170) font 'DejaVu Sans,8'
set output out
set termoption noenhanced
set title title."\nmarks: = same  + faster/better  - slower/worse  ~ changed  ? inconclusive (faint)  ! regression"
set xrange [-0.5:cols - 0.5]
set yrange [rows - 0.5:-0.5]
set link x2
set x2tics rotate by 30 left nomirror
set xtics format ''
set ytics nomirror
set tics scale 0
set lmargin at screen (label_chars * 6.0 + 20) / W
set palette defined (-1 '#2166ac', 0 '#f7f7f7', 1 '#b2182b')
set cbrange [-lim:lim]
set cblabel 'log2(ratio to the baseline)'
# Missing cells (a metric a machine did not report) show the grey background.
set object 1 rect from graph 0, graph 0 to graph 1, graph 1 behind fc rgb '#d0d0d0' fs solid noborder
is(v, x) = (strcol(7) eq v) ? x : NaN
sure(x) = (strcol(7) ne 'inconclusive' && strcol(7) ne 'baseline') ? x : NaN
plot file using 3:(is('baseline', $2)):(0.5):(0.5) with boxxyerror fs solid 1 noborder fc rgb '#ffffff' notitle, \
     file using 3:(sure($2)):(0.5):(0.5):6 with boxxyerror fs solid 1 noborder fc palette notitle, \
     file using 3:(is('inconclusive', $2)):(0.5):(0.5):6 with boxxyerror fs transparent solid 0.3 noborder fc palette notitle, \
     file using 3:2:8:x2tic(5):ytic(4) with labels font ',9' notitle
