# peer_access: two GPUs (scenarios/peer_access.c).
# (a) copy bandwidth GPU a -> GPU b by size: cudaMemcpyPeerAsync with peer access off
#     (bad) and on (fixed), and a copy staged through pinned host memory.
# (b) the time to enable peer access each way, and the device memory it took on each GPU.
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,650 noenhanced font 'DejaVu Sans,10'
set output out
set datafile columnheaders
set multiplot layout 1,2 title "peer_access: P2P between two GPUs"
MiB = 1024.0 * 1024
array V[3] = ['p2p_peer_disabled', 'p2p_peer_enabled', 'staged_pinned']
array C[3] = ['red', 'forest-green', 'blue']
file1 = FILE[1]

set title '(a) copy bandwidth a -> b'
set logscale x 2
set xlabel 'bytes (MiB)'
set ylabel 'GB/s (median wall time)'
set yrange [0:*]
set key inside left top
plot for [v=1:3] file1 using (strcol('section') eq 'copy' && strcol('variant') eq V[v] ? column('bytes') / MiB : NaN):'gbps' \
         with linespoints lw 2 pt 7 lc rgb C[v] title V[v]

set title '(b) enabling peer access'
unset logscale x
set xlabel ''
set ylabel 'ms / MiB'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by 0
# Only the 'enable' rows, as a small table (a histogram of every row leaves empty slots).
# (stats over the rows, the header row included as data; awk's number format, %.6g)
set datafile nocolumnheaders
enable_rows = ''
stats file1 using (strcol('section') ne 'enable' ? 0 : (enable_rows = enable_rows . strcol('variant') . ',' . strcol('enable_ms') \
    . sprintf(",%.6g,%.6g\n", num('used_delta_a_bytes') / MiB, num('used_delta_b_bytes') / MiB), 0)) nooutput
set print $enable
print enable_rows[1:strlen(enable_rows) - 1]
set print
set yrange [0:*]
set offsets 0, 0, graph 0.15, 0
plot $enable using 2:xtic(1) title 'enable (ms)' lc rgb 'gray40', \
     '' using 3 title 'MiB on GPU a (0: none seen)' lc rgb 'orange', \
     '' using 4 title 'MiB on GPU b (0: none seen)' lc rgb 'purple'
unset multiplot
