# fork_workers: CUDA and fork() (scenarios/fork_workers.c).
# (a) the error each of a single worker's first CUDA calls returned, per variant.
# (b) device memory taken by N workers alive at once (contexts), per variant.
# (c) time from spawning the workers until each had its context, median.
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1500,700 noenhanced font 'DejaVu Sans,10'  # error names need room
set output out
set datafile columnheaders
set datafile missing NaN  # rows of other tests are skipped without breaking lines
set multiplot layout 1,3 title "fork_workers: CUDA in child processes"
GiB = 1024.0 * 1024 * 1024
array V[3] = ['fork_after_init', 'fork_before_init', 'fork_exec']
array C[3] = ['red', 'forest-green', 'blue']
vindex(s) = s eq V[1] ? 1 : s eq V[2] ? 2 : s eq V[3] ? 3 : NaN
cindex(s) = s eq 'cudaGetDeviceCount' ? 1 : s eq 'cudaSetDevice' ? 2 : s eq 'cudaFree(0)' ? 3 : s eq 'cudaMalloc(1MiB)' ? 4 : NaN
file1 = FILE[1]

set title "(a) first CUDA calls of one worker"
set bmargin 5
set lmargin 14
set xrange [0.5:3.5]
set yrange [4.5:0.5]
set ytics ("cudaGet-\nDeviceCount" 1, "cudaSet-\nDevice" 2, "cudaFree(0)" 3, "cudaMalloc" 4)
set xtics ("fork after\ninit" 1, "fork before\ninit" 2, "fork+exec" 3)
set grid noxtics noytics
set key off
plot file1 using (strcol('test') eq 'first_calls' ? vindex(strcol('variant')) : NaN):(cindex(strcol('call'))): \
         (strcol('status') eq 'no_report' ? 'no report' : strcol('status') eq 'not_made' ? 'not made' : (strcol('error_name') eq 'cudaSuccess' ? 'ok' : substr(strcol('error_name'), 10, 40))) \
         with labels font ',8' notitle

set title '(b) device memory of N workers'
set lmargin 10
set grid
set xrange [0.5:*]
set xtics auto
set ytics auto
set yrange [0:*]
set logscale x 2
set xlabel 'workers alive'
set ylabel 'GiB'
set key inside left top
plot for [v=1:3] file1 using (strcol('test') eq 'context_cost' && strcol('variant') eq V[v] ? column('workers') : NaN):(column('device_used_bytes') / GiB) \
         with linespoints lw 2 pt 7 lc rgb C[v] dt v title V[v]

set title '(c) time until the workers had a context'
set ylabel 'ms (median)'
plot for [v=1:3] file1 using (strcol('test') eq 'context_cost' && strcol('variant') eq V[v] ? column('workers') : NaN):'startup_median_ms' \
         with linespoints lw 2 pt 7 lc rgb C[v] dt v title V[v]
unset multiplot
