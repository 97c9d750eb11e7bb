# bench/multi_stream: kernels per second against the number of streams, per allocator;
# pattern own (alloc/kernel/free on each stream) solid, cross (block of stream 0 used on
# stream i, record_use) dashed; median over repetitions with p25..p75 bars. The black
# line is the bound with every stream busy all the time.
call 'plots/common.gp' ARG1 ARG2 ARG3
set logscale x 2
set xlabel 'streams'
set ylabel 'kernels / s'
set yrange [0:*]
set key inside left top font ',8'
set title 'multi-stream allocations with a spin kernel between them'
own(c) = strcol("pattern") eq "own" ? column(c) : NaN
cross(c) = strcol("pattern") eq "cross" ? column(c) : NaN
plot for [i=1:nfiles] FILE[i] using (own("streams")):"kernels_median_per_s":"kernels_p25_per_s":"kernels_p75_per_s" \
        with yerrorlines lc i pt 7 title LABEL[i].' own', \
     for [i=1:nfiles] FILE[i] using (cross("streams")):"kernels_median_per_s":"kernels_p25_per_s":"kernels_p75_per_s" \
        with yerrorlines lc i dt 2 pt 6 title LABEL[i].' cross', \
     FILE[1] using (own("streams")):"ideal_kernels_per_s" with lines lc black dt 3 title 'all streams busy'
