# graph_pool: memory held by CUDA graphs (scenarios/graph_pool.c).
# (a) graph memory reserved (cudaGraphMemAttrReservedMemCurrent) by graph count: one
#     graph per shape kept (bad), destroyed and trimmed (fixed), one graph of the
#     largest shape (fixed). First CSV (the graph sections do not depend on --alloc).
# (b) the caching allocator inside a capture: corrupted elements after a replay, per
#     allocator: buffer freed during capture (bad) vs kept for the graph's life (fixed).
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,650 noenhanced font 'DejaVu Sans,10'
set output out
set datafile columnheaders
set multiplot layout 1,2 title "graph_pool: memory held by CUDA graphs"
MiB = 1024.0 * 1024
array V[3] = ['graph_per_shape', 'destroy_and_trim', 'one_graph_max']
array C[3] = ['red', 'forest-green', 'blue']
file1 = FILE[1]

set title '(a) graph memory reserved'
set xlabel 'graphs captured (one per shape)'
set xtics 1
set ylabel 'MiB'
set yrange [0:*]
set offsets 0.2, 0.2, graph 0.12, 0
set key inside right center
# Variants often reach the same value: each is shifted a little along x, with its own point.
array P[3] = [7, 5, 9]
dx(v) = (v - 2) * 0.05
plot for [v=1:3] file1 using (strcol('section') eq 'graph_mem' && strcol('variant') eq V[v] ? column('graphs') + dx(v) : NaN):(column('graph_reserved_bytes') / MiB) \
         with linespoints lw 2 pt P[v] ps 1.5 lc rgb C[v] title V[v]
set offsets 0, 0, 0, 0

set title '(b) allocator used inside a capture'
set key inside left top
set offsets 0, 0, graph 0.15, 0
set datafile nocolumnheaders
set xlabel ''
set ylabel 'corrupted elements after a replay'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -20
# Per file, the corrupted elements of each capture variant, summed (stats: the header
# row is data here, and no capture row).
set print $cap
do for [i=1:nfiles] {
    bad_ = 0; kept_ = 0
    stats FILE[i] using (strcol('section') ne 'capture' ? 0 : \
        strcol('variant') eq 'free_in_capture' ? (bad_ = bad_ + num('corrupted_elements'), 0) : \
        strcol('variant') eq 'private_block' ? (kept_ = kept_ + num('corrupted_elements'), 0) : 0) nooutput
    print LABEL[i] . sprintf(",%g,%g", bad_, kept_)
}
set print
plot $cap using 2:xtic(1) title 'freed during capture (bad)' lc rgb 'red', '' using 3 title 'kept for the graph (fixed)' lc rgb 'forest-green'
unset multiplot
