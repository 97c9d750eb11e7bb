# bench/replay: left, operations per second by replay pass (pass 1 cold, later passes
# on the warm allocator) with the alloc latency median (dashed, right axis); right,
# peak requested, allocated and reserved bytes per allocator (pass 1; empty where the
# allocator cannot know), reserved/allocated on top.
call 'plots/common.gp' ARG1 ARG2 ARG3
# Room for up to a dozen inputs: the legend below the left panel, the bar labels upright.
set terminal pngcairo size 1400,850 enhanced font 'DejaVu Sans,10'
set termoption noenhanced
set output out
set key below left font ',7' maxrows 6
set multiplot layout 1,2 title 'trace replay'
set title 'throughput by pass'
set xlabel 'pass'
set ylabel 'operations / s'
set y2label 'alloc median [ns] (dashed)'
set logscale y
set logscale y2
set ytics nomirror
set y2tics
set xtics 1
plot for [i=1:nfiles] FILE[i] using "pass":"ops_per_s" with linespoints lc i pt 7 title LABEL[i], \
     for [i=1:nfiles] FILE[i] using "pass":"alloc_median_ns" axes x1y2 with linespoints lc i dt 2 pt 6 notitle
unset logscale y
unset logscale y2
unset y2tics
unset y2label
set ytics mirror
set title 'peak memory (pass 1)'
set xlabel ''
set ylabel 'GiB'
set yrange [0:*]
set offsets 0,0,graph 0.1,0
set xtics () rotate by 90 right font ',7'
do for [i=1:nfiles] { set xtics add (tic(LABEL[i]) i) }
set key inside left top font ',8'
set xrange [0.5:nfiles+0.5]
set style fill solid 0.6
set boxwidth 0.24
first(c) = column("pass") == 1 ? column(c) / 2**30 : NaN
plot for [i=1:nfiles] FILE[i] using (i-0.25):(first("peak_requested_bytes")) with boxes lc 2 \
        title (i==1 ? 'peak requested' : ''), \
     for [i=1:nfiles] FILE[i] using (i):(first("peak_allocated_bytes")) with boxes lc 4 \
        title (i==1 ? 'peak allocated' : ''), \
     for [i=1:nfiles] FILE[i] using (i+0.25):(first("peak_reserved_bytes")) with boxes lc 6 \
        title (i==1 ? 'peak reserved' : ''), \
     for [i=1:nfiles] FILE[i] using (i+0.25):(first("peak_reserved_bytes")):(column("pass") == 1 ? \
        sprintf('%.2fx', column("reserved_over_allocated")) : '') with labels offset 0,0.8 font ',7' notitle, \
     0 with lines lc black notitle  # keeps the panel drawable when no allocator knows its peaks
unset multiplot
