# bench/alloc_latency: alloc (left) and free (right) latency by size, log-log.
# Per allocator: median (points and line) with its p25..p75 range as error bars,
# p99 dashed; right panel also the alloc+free pair (batch mean, dash-dot: a caching
# allocator's cache-hit fast path) and alloc+free+device sync (dotted), the honest cost
# of stream-ordered frees. Rows whose first call was refused (first_free_ns empty: the
# --beyond-device row, time to refusal, not an allocation) are left out.
call 'plots/common.gp' ARG1 ARG2 ARG3
size_if_served(dummy) = strlen(strcol("first_free_ns")) == 0 ? NaN : column("size_bytes")
set logscale xy
set xtics ('512B' 512, '4KiB' 4096, '32KiB' 32768, '256KiB' 262144, '2MiB' 2097152, '16MiB' 16777216, \
           '128MiB' 134217728, '1GiB' 1073741824, '8GiB' 8589934592)
set mxtics 1
set xlabel 'allocation size'
set ylabel 'host time per call [ns]'
set key inside left top font ',8'
set multiplot layout 1,2 title 'alloc / free latency by size (median, p25-p75 bars; p99 dashed)'
set title 'alloc'
plot for [i=1:nfiles] FILE[i] using (size_if_served(0)):"alloc_median_ns":"alloc_p25_ns":"alloc_p75_ns" \
        with yerrorlines lc i pt 7 ps 0.6 title LABEL[i], \
     for [i=1:nfiles] FILE[i] using (size_if_served(0)):"alloc_p99_ns" with lines lc i dt 2 notitle
set title 'free (alloc+free pair, dash-dot; alloc+free+sync, dotted)'
plot for [i=1:nfiles] FILE[i] using (size_if_served(0)):"free_median_ns":"free_p25_ns":"free_p75_ns" \
        with yerrorlines lc i pt 7 ps 0.6 title LABEL[i], \
     for [i=1:nfiles] FILE[i] using (size_if_served(0)):"free_p99_ns" with lines lc i dt 2 notitle, \
     for [i=1:nfiles] FILE[i] using (size_if_served(0)):"pair_median_ns" with linespoints lc i dt 4 pt 4 ps 0.5 \
        title LABEL[i].' alloc+free pair', \
     for [i=1:nfiles] FILE[i] using (size_if_served(0)):"cycle_sync_median_ns" with linespoints lc i dt 3 pt 6 ps 0.5 \
        title LABEL[i].' alloc+free+sync'
unset multiplot
