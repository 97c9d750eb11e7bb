# context_cost: device memory per process (scenarios/context_cost.c).
# (a) what one fresh process adds to the device (context, + fat binary, + cuBLAS), each
#     sample a point, per configuration: eager (bad) in red, lazy (fixed) in green.
# (b) N processes alive at once on one GPU: device memory they add, lazy and eager.
# Several files (runs) are drawn with different point types and dash types.
call 'plots/common.gp' ARG1 ARG2 ARG3
set datafile columnheaders
set multiplot layout 1,2 title "context_cost: device memory per process"
MiB = 1024.0 * 1024
array V[4] = ['', '+fatbin', '+cublas', '+fatbin+cublas']
cfg(s) = (p_ = strstrt(s, '+'), rest_ = p_ ? s[p_:] : '', rest_ eq V[1] ? 1 : rest_ eq V[2] ? 2 : rest_ eq V[3] ? 3 : rest_ eq V[4] ? 4 : NaN)
eager(s) = strstrt(s, 'eager') == 1
set key inside left top

set title '(a) one process: device memory it adds'
set xrange [0.4:4.6]
set xtics ('context' 1, '+ fat binary' 2, '+ cuBLAS' 3, '+ both' 4)
set ylabel 'MiB'
set yrange [0:*]
plot for [i=1:nfiles] FILE[i] using (strcol('test') eq 'context' && eager(strcol('variant')) ? cfg(strcol('variant')) - 0.12 : NaN): \
         (column('device_used_bytes') / MiB) with points pt 7 + (i - 1) lc rgb 'red' title (i == 1 ? 'eager' : ''), \
     for [i=1:nfiles] FILE[i] using (strcol('test') eq 'context' && !eager(strcol('variant')) ? cfg(strcol('variant')) + 0.12 : NaN): \
         (column('device_used_bytes') / MiB) with points pt 7 + (i - 1) lc rgb 'forest-green' title (i == 1 ? 'lazy' : '')

set title '(b) N processes on one GPU'
set xrange [*:*]
set xtics auto
set logscale x 2
set xlabel 'processes alive'
plot for [i=1:nfiles] FILE[i] using (strcol('test') eq 'processes' && eager(strcol('variant')) ? column('workers') : NaN): \
         (column('device_used_bytes') / MiB) with linespoints lw 2 pt 7 dt i lc rgb 'red' title 'eager'.(nfiles > 1 ? ' '.LABEL[i] : ''), \
     for [i=1:nfiles] FILE[i] using (strcol('test') eq 'processes' && !eager(strcol('variant')) ? column('workers') : NaN): \
         (column('device_used_bytes') / MiB) with linespoints lw 2 pt 7 dt i lc rgb 'forest-green' title 'lazy'.(nfiles > 1 ? ' '.LABEL[i] : '')
unset multiplot
