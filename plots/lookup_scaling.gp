# bench/lookup_scaling: allocation latency against the number of cached blocks in one
# size class (left) and of streams (right), one line per allocator (and device):
# median solid, p99 dashed. Flat lines = lookups that do not grow with the tables.
call 'plots/common.gp' ARG1 ARG2 ARG3
set key inside left top font ',8'
set logscale xy
set xlabel 'count'
set ylabel 'ns (host)'
set multiplot layout 1,2 title 'allocation latency as the tables grow'
do for [c in "cached streams"] {
    set title (c eq "cached" ? 'cached blocks in one size class' : 'streams with a cached block')
    plot for [i=1:nfiles] FILE[i] using (strcol("case") eq c ? column("count") : NaN):"alloc_median_ns" \
            with linespoints lc i pt 7 title LABEL[i].' median', \
         for [i=1:nfiles] FILE[i] using (strcol("case") eq c ? column("count") : NaN):"alloc_p99_ns" \
            with linespoints lc i dt 2 pt 6 title LABEL[i].' p99'
}
unset multiplot
