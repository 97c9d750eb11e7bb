# scenarios/out_of_place: left, the largest input that still fits for each allocation
# pattern (share of free memory; one point per allocator); middle and right, achieved
# bandwidth (bytes the kernels move / device time, allocations included) by size,
# bad form (filled) against its remedies.
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,800 noenhanced font 'DejaVu Sans,10'
set output out
# Short names in the keys: 'caching_segments-expandable' -> 'expandable'.
base(l) = strstrt(l, '.sim') ? l[1:strstrt(l, '.sim') - 1] : l
lab(i) = (strstrt(LABEL[i], 'expandable') ? 'expandable' : base(LABEL[i])) . (strstrt(LABEL[i], '.sim') ? ' (sim)' : '')
set multiplot layout 1,3 title 'out_of_place: temporaries cost memory (and, with some allocators, time)'
set key outside below font ',8' maxrows 4
set title 'largest input that fits'
set ylabel 'share of free memory'
set yrange [0:1.1]
set xrange [-0.5:2.5]
set xtics ('y=x+1 (2)' 0, 'x+=1 (1)' 1, 'chain (3)' 2) font ',9'
set xlabel 'pattern (tensors alive at the peak)'
# The 'largest' rows, x = their number in the file (k_ starts again at a file's first row).
big(r) = r eq 'largest'
plot for [i=1:nfiles] FILE[i] \
        using (k_ = $0 == 0 ? 0 : k_, big(strcol('record')) ? (k_ = k_ + 1) - 1 + (i - (nfiles + 1) / 2.0) * 0.08 : NaN):(big(strcol('record')) ? column('largest_fit_fraction_of_free') : NaN) \
        with points lc i pt 7 ps 1.5 title lab(i)
set autoscale
set xtics auto font ',10'
set logscale x
set xlabel 'tensor size [bytes]'
set ylabel 'achieved GB/s'
set yrange [0:*]
gbps(f) = (strcol('record') eq 'timing' && strcol('form') eq f) ? column('achieved_gbps') : NaN
set title 'y = x + 1 vs x += 1'
plot for [i=1:nfiles] FILE[i] using 'size_bytes':(gbps('add_out_of_place')) with linespoints lc i pt 7 \
        title lab(i).' y = x + 1', \
     for [i=1:nfiles] FILE[i] using 'size_bytes':(gbps('add_in_place')) with linespoints lc i pt 6 dt 2 \
        title lab(i).' x += 1'
set title 'chain of three: temporaries vs fused in place'
plot for [i=1:nfiles] FILE[i] using 'size_bytes':(gbps('chain_temporaries')) with linespoints lc i pt 7 \
        title lab(i).' temporaries', \
     for [i=1:nfiles] FILE[i] using 'size_bytes':(gbps('chain_in_place')) with linespoints lc i pt 4 dt 3 \
        title lab(i).' in place (3 passes)', \
     for [i=1:nfiles] FILE[i] using 'size_bytes':(gbps('chain_fused_in_place')) with linespoints lc i pt 6 dt 2 \
        title lab(i).' fused in place'
unset multiplot
