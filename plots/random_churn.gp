# bench/random_churn: one column per allocator (and device). Left: ns per operation
# (median over batches, p25..p75 bars), alloc and free call medians and p99 (log scale).
# Right: peak requested, allocated and reserved bytes (empty where the allocator cannot know).
call 'plots/common.gp' ARG1 ARG2 ARG3
set xtics () rotate by -20
do for [i=1:nfiles] { set xtics add (tic(LABEL[i]) i) }
set xrange [0.5:nfiles+0.5]
set key inside left top font ',8'
set multiplot layout 1,2 title 'random churn (RMM random_allocations)'
set title 'time per operation'
set logscale y
set ylabel 'ns (host)'
plot for [i=1:nfiles] FILE[i] using (i-0.15):"batch_op_median_ns":"batch_op_p25_ns":"batch_op_p75_ns" \
        with yerrorbars lc 1 pt 7 ps 1.2 title (i==1 ? 'ns/op (batches: median, p25-p75)' : ''), \
     for [i=1:nfiles] FILE[i] using (i):"alloc_median_ns" with points lc 2 pt 5 title (i==1 ? 'alloc median' : ''), \
     for [i=1:nfiles] FILE[i] using (i):"alloc_p99_ns" with points lc 2 pt 4 title (i==1 ? 'alloc p99' : ''), \
     for [i=1:nfiles] FILE[i] using (i+0.15):"free_median_ns" with points lc 3 pt 9 title (i==1 ? 'free median' : ''), \
     for [i=1:nfiles] FILE[i] using (i+0.15):"free_p99_ns" with points lc 3 pt 8 title (i==1 ? 'free p99' : '')
unset logscale y
set title 'peak memory'
set ylabel 'GiB'
set yrange [0:*]
set style fill solid 0.6
set boxwidth 0.24
plot for [i=1:nfiles] FILE[i] using (i-0.25):(column("peak_requested_bytes")/2**30) with boxes lc 2 \
        title (i==1 ? 'peak requested' : ''), \
     for [i=1:nfiles] FILE[i] using (i):(column("peak_allocated_bytes")/2**30) with boxes lc 4 \
        title (i==1 ? 'peak allocated' : ''), \
     for [i=1:nfiles] FILE[i] using (i+0.25):(column("peak_reserved_bytes")/2**30) with boxes lc 6 \
        title (i==1 ? 'peak reserved' : ''), \
     0 with lines lc black notitle  # keeps the panel drawable when no allocator knows its peaks
unset multiplot
