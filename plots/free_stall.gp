# free_stall: does freeing wait for the GPU? (scenarios/free_stall.c)
# Left: host time of a free (solid) / an allocation (dashed) made while a kernel runs on
# another stream, against the kernel's length; on the diagonal the call waited for the
# whole kernel. Right: steps/s of an allocate-launch-free loop vs the same loop with
# buffers allocated once (hoisted), on 1 and 4 streams.
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1300,850 noenhanced font 'DejaVu Sans,10'  # keys below the panels need room
set output out
set datafile columnheaders
set datafile missing NaN  # rows of other tests are skipped without breaking lines
set multiplot layout 1,2 title "free_stall: cudaFree's implicit sync vs stream-ordered and cached frees"

set title 'host time of the call while another stream runs a kernel'
set logscale xy
set format y '%g'
set xlabel 'kernel length (ms)'
set ylabel 'call time, median (ms)'
set key outside bottom center vertical maxrows 5 font ',8'
set bmargin 11
is(t, v) = strcol('test') eq t && strcol('variant') eq v
plot for [i=1:nfiles] FILE[i] using (is('stall', 'free_during_kernel') ? column('kernel_us') / 1e3 : NaN):(column('time_median_ns') / 1e6) \
         with linespoints lw 2 pt 7 lc i title LABEL[i].' free', \
     for [i=1:nfiles] FILE[i] using (is('stall', 'alloc_during_kernel') ? column('kernel_us') / 1e3 : NaN):(column('time_median_ns') / 1e6) \
         with linespoints lw 1 dt 2 pt 6 lc i title LABEL[i].' alloc', \
     x with lines lc 'gray' dt 3 title 'call = kernel'

set title 'allocate-launch-free loop: steps per second'
unset logscale
set logscale y
set format y '%g'
set xlabel 'streams'
set xtics (1, 4)
set xrange [0.5:4.5]
set ylabel 'steps/s'
set key outside bottom center vertical maxrows 5 font ',8'
set bmargin 11
plot for [i=1:nfiles] FILE[i] using (is('loop', 'alloc_free_per_iter') ? column('streams') : NaN):'steps_per_s' \
         with linespoints lw 2 pt 7 lc i title LABEL[i].' alloc+free per step', \
     for [i=1:nfiles] FILE[i] using (is('loop', 'hoisted') ? column('streams') : NaN):'steps_per_s' \
         with linespoints lw 1 dt 2 pt 6 lc i title (i == 1 ? 'dashed: hoisted (buffers allocated once)' : '')
unset multiplot
