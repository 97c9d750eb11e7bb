# stream_pools: allocation from several streams (scenarios/stream_pools.c).
# (a) peak reserved over peak requested by the number of allocating streams: each
#     stream allocating for itself (bad, solid) vs one allocation stream (fixed, dashed).
# (b) OOMs at the budget (--memory) by the number of streams.
# One colour per file (allocator/device).
call 'plots/common.gp' ARG1 ARG2 ARG3
set datafile columnheaders
set multiplot layout 1,2 title "stream_pools: per-stream free lists"
set logscale x 2
set xlabel 'allocating streams'
set key inside left top
is(v) = strcol('variant') eq v

set title '(a) peak reserved / peak requested'
set ylabel 'ratio'
plot for [i=1:nfiles] FILE[i] using (is('per_stream') ? column('streams') : NaN):'reserved_over_requested' \
         with linespoints lw 2 pt 7 lc i dt 1 title LABEL[i].' per_stream', \
     for [i=1:nfiles] FILE[i] using (is('alloc_stream') ? column('streams') : NaN):'reserved_over_requested' \
         with linespoints lw 2 pt 6 lc i dt 2 title LABEL[i].' alloc_stream'

set title '(b) OOMs at the budget'
set ylabel 'allocations that failed'
set yrange [0:*]
plot for [i=1:nfiles] FILE[i] using (is('per_stream') ? column('streams') : NaN):'ooms' \
         with linespoints lw 2 pt 7 lc i dt 1 title LABEL[i].' per_stream', \
     for [i=1:nfiles] FILE[i] using (is('alloc_stream') ? column('streams') : NaN):'ooms' \
         with linespoints lw 2 pt 6 lc i dt 2 title LABEL[i].' alloc_stream'
unset multiplot
