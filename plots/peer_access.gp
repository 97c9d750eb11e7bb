# peer_access: two GPUs (scenarios/peer_access.c).
# (a) copy bandwidth GPU a -> GPU b by size: cudaMemcpyPeerAsync with peer access off
#     (bad) and on (fixed), and a copy staged through pinned host memory.
# (b) the time to enable peer access each way, and the device memory it took on each GPU.
load 'plots/common.gp'
set terminal pngcairo size 1400,650 noenhanced font 'DejaVu Sans,10'
set output out
set datafile columnheaders
set multiplot layout 1,2 title "peer_access: P2P between two GPUs"
MiB = 1024.0 * 1024
array V[3] = ['p2p_peer_disabled', 'p2p_peer_enabled', 'staged_pinned']
array C[3] = ['red', 'forest-green', 'blue']
file1 = word(files, 1)

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
plot file1 using (strcol('section') eq 'enable' ? column('enable_ms') : NaN):xtic(strcol('section') eq 'enable' ? strcol('variant') : '') title 'enable (ms)' lc rgb 'gray40', \
     '' using (strcol('section') eq 'enable' ? column('used_delta_a_bytes') / MiB : NaN) title 'MiB on GPU a' lc rgb 'orange', \
     '' using (strcol('section') eq 'enable' ? column('used_delta_b_bytes') / MiB : NaN) title 'MiB on GPU b' lc rgb 'purple'
unset multiplot
