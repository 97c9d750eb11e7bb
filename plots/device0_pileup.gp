# device0_pileup: contexts piling up on GPU 0 (scenarios/device0_pileup.c).
# (a) bytes on GPU 0 charged to workers of other GPUs, per foreign worker, by worker count.
# (b) device memory the workers added on each GPU, by worker count (GPU 0 solid, others dashed).
# The fixed variants often give equal values: each variant is shifted a little along x
# (dx) and has its own point shape, so none hides another.
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,650 noenhanced font 'DejaVu Sans,10'
set output out
set datafile columnheaders
set multiplot layout 1,2 title "device0_pileup: worker processes, one per GPU"
MiB = 1024.0 * 1024
array V[3] = ['touch_before_set', 'set_device_first', 'visible_devices']
array C[3] = ['red', 'forest-green', 'blue']
array P[3] = [7, 5, 9]
dx(v) = (v - 2) * 0.06
file1 = FILE[1]
set key inside left top
set xlabel 'workers alive'
set xtics 1
set offsets 0.3, 0.3, 0, 0
set yrange [0:*]

set title '(a) on GPU 0, per worker of another GPU'
set ylabel 'MiB per foreign worker'
plot for [v=1:3] file1 using (strcol('variant') eq V[v] && column('gpu') == 0 && column('foreign_workers') > 0 ? column('workers') + dx(v) : NaN):(column('foreign_bytes_per_worker') / MiB) \
         with linespoints lw 2 pt P[v] ps 1.5 lc rgb C[v] title V[v]

set title '(b) memory the workers added, per GPU'
set ylabel 'MiB'
plot for [v=1:3] file1 using (strcol('variant') eq V[v] && column('gpu') == 0 ? column('workers') + dx(v) : NaN):(column('used_delta_bytes') / MiB) \
         with linespoints lw 2 pt P[v] ps 1.5 lc rgb C[v] title V[v].' GPU 0', \
     for [v=1:3] file1 using (strcol('variant') eq V[v] && column('gpu') > 0 ? column('workers') + dx(v) : NaN):(column('used_delta_bytes') / MiB) \
         with linespoints lw 1 dt 2 pt (P[v] - 1) ps 1.5 lc rgb C[v] title V[v].' GPU 1..'
unset multiplot
