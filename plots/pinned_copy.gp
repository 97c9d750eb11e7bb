# pinned_copy: pageable vs pinned host memory (scenarios/pinned_copy.c).
# (a) H2D bandwidth by size, host time from the call to the end of the copy.
# (b) when cudaMemcpyAsync returns, as a share of the copy's time (1: only at the end).
# (c) a copy issued while a kernel of the same length runs: share of the shorter one hidden,
#     and how long the host was blocked in the cudaMemcpyAsync call.
# (d) what pinning costs by size.
# Several files (runs) are drawn with different dash types.
call 'plots/common.gp' ARG1 ARG2 ARG3
set termoption noenhanced  # labels and file names contain underscores
set datafile columnheaders
set datafile missing NaN  # rows of other tests are skipped without breaking lines
set multiplot layout 2,2 title "pinned_copy: pageable vs pinned host->device copies"
MiB = 1024.0 * 1024
is(t, v) = strcol('test') eq t && strcol('variant') eq v
array V[3] = ['pageable', 'pinned', 'pin_per_copy']
array C[3] = ['red', 'forest-green', 'orange']

set title '(a) bandwidth by copy size'
set logscale x 2
set xlabel 'copy size (MiB)'
set ylabel 'GB/s'
set key inside left top
plot for [i=1:nfiles] for [v=1:3] FILE[i] using (is('copy', V[v]) ? column('size_bytes') / MiB : NaN):'bandwidth_gbps' \
         with linespoints lw 2 pt 7 lc rgb C[v] dt i title V[v].(nfiles > 1 ? ' '.LABEL[i] : '')

set title '(b) cudaMemcpyAsync returns after ... of the copy time'
set ylabel 'call time / copy time'
set yrange [0:1.1]
plot for [i=1:nfiles] for [v=1:2] FILE[i] using (is('copy', V[v]) ? column('size_bytes') / MiB : NaN):(column('call_median_ns') / column('time_median_ns')) \
         with linespoints lw 2 pt 7 lc rgb C[v] dt i title V[v].(nfiles > 1 ? ' '.LABEL[i] : '')

set title '(c) copy overlapped with a kernel on another stream'
unset logscale x
set xlabel ''
set xrange [0.4:2.6]
set xtics ('pageable' 1, 'pinned' 2)
set ylabel 'share of the shorter op hidden'
set yrange [0:1.1]
set style fill solid 0.6 border -1
set key off
plot for [i=1:nfiles] for [v=1:2] FILE[i] using (is('overlap', V[v]) ? v + (i - 1) * 0.15 : NaN):'overlap_fraction':(0.3) \
         with boxes lc rgb C[v] notitle, \
     for [i=1:nfiles] for [v=1:2] FILE[i] using (is('overlap', V[v]) ? v + (i - 1) * 0.15 : NaN):(column('overlap_fraction') / 2): \
         (sprintf("host blocked\nin the call:\n%.3g ms", column('call_median_ns') / 1e6)) with labels font ',9' notitle

set title '(d) cost of pinning host memory'
set key inside left top
set logscale xy
set xtics auto
set xrange [*:*]
set yrange [*:*]
set xlabel 'size (MiB)'
set ylabel 'ms'
array P[4] = ['cudaMallocHost', 'cudaHostRegister_fresh', 'cudaHostRegister_touched', 'mmap_first_touch']
array PC[4] = ['blue', 'dark-violet', 'orange', 'gray']
plot for [i=1:nfiles] for [k=1:4] FILE[i] using (is('pin_cost', P[k]) ? column('size_bytes') / MiB : NaN):(column('time_median_ns') / 1e6) \
         with linespoints lw 2 pt 7 lc rgb PC[k] dt i title P[k].(nfiles > 1 ? ' '.LABEL[i] : '')
unset multiplot
