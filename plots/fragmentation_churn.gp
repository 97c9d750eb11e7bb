# scenarios/fragmentation_churn: left, reserved (solid) and allocated (dashed) bytes
# during random churn; middle, the largest single allocation that still succeeds as a
# share of all free memory (device free + the allocator's cached free) at the end of
# each pattern (filled: live blocks kept; open: every other block freed); right, peak
# reserved over peak allocated per pattern (1.0 = no waste).
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,800 noenhanced font 'DejaVu Sans,10'
set output out
# Short names in the keys: 'caching_segments-expandable' -> 'expandable'.
base(l) = strstrt(l, '.sim') ? l[1:strstrt(l, '.sim') - 1] : l
lab(i) = (strstrt(LABEL[i], 'expandable') ? 'expandable' : base(LABEL[i])) . (strstrt(LABEL[i], '.sim') ? ' (sim)' : '')
set multiplot layout 1,3 title 'fragmentation_churn: can one large request use the free memory?'
set key outside below font ',8' maxrows 4
set title 'random churn over time'
set xlabel 'operation'
set ylabel 'GiB'
mem(col) = strcol('pattern') eq 'random_churn' && strcol('record') eq 'sample' && column(col) > 0 ? column(col) / 2.0**30 : NaN
plot for [i=1:nfiles] FILE[i] using 'step':(mem('reserved_bytes')) with lines lc i lw 2 title lab(i).' reserved', \
     for [i=1:nfiles] FILE[i] using 'step':(mem('allocated_bytes')) with lines lc i dt 2 title lab(i).' allocated'
set title 'largest allocation / total free'
set xlabel ''
set ylabel 'share'
set yrange [0:1.1]
set xrange [-0.5:2.5]
set xtics ('churn' 0, 'KV concat' 1, 'var. batch' 2)
pidx(p) = p eq 'random_churn' ? 0 : (p eq 'kv_cache_concat' ? 1 : 2)
fin(r) = strcol('record') eq r ? column('largest_over_total_free') : NaN
xoff(i) = (i - (nfiles + 1) / 2.0) * 0.1
plot for [i=1:nfiles] FILE[i] using (pidx(strcol('pattern')) + xoff(i)):(fin('final_live')) with points lc i pt 7 ps 1.4 \
        title lab(i).' live kept', \
     for [i=1:nfiles] FILE[i] using (pidx(strcol('pattern')) + xoff(i)):(fin('final_half_freed')) with points lc i pt 6 ps 1.6 \
        title lab(i).' half freed'
set title 'peak reserved / peak allocated'
set ylabel 'ratio'
set yrange [0.9:*]
set logscale y
ratio(dummy) = strcol('record') eq 'final_live' && column('peak_reserved_over_peak_allocated') > 0 ? column('peak_reserved_over_peak_allocated') : NaN
plot for [i=1:nfiles] FILE[i] using (pidx(strcol('pattern')) + xoff(i)):(ratio(0)) with points lc i pt 5 ps 1.4 title lab(i)
unset multiplot
