# The simulated warm-pass criterion per trace, from scripts/replay-sweep's sweep.csv (one
# row per trace, SPEC and pass): x = a pass's peak reserved / peak allocated, y = the share
# of its operations that made a device map call. One panel a trace:
#   points: the warm passes (2 and later) of every span=0 SPEC (blue) and of the default
#           SPEC (caching:segments=expandable, red);
#   box:    where a warm pass passes (waste <= 1.02, maps <= 1% of operations);
#   dotted: the best static layout of the trace (replay --static-layout: knowing every
#           lifetime, the least an allocator that maps nothing once warm reserves), when
#           a layout.csv is given as the second file.
# Zero map calls are drawn at 0.0001%, below the smallest share a trace's pass can have.
#   scripts/plots.sh --render plots/zoo_criterion.gp OUT.png "sweep.csv
#   layout.csv" "x
#   y"
# (through plots.sh, which hands over sweep.csv with the commas inside its quoted SPECs as
# ';': gnuplot alone would cut a quoted field at its first comma)
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
set terminal pngcairo size 1500,1000 enhanced font 'DejaVu Sans,9'
set output out
set termoption noenhanced
# The traces (column 1), sorted; the header row is data here, left out by its name.
names_ = "\n"
stats f using (strcol(1) eq 'workload' ? 0 : adds(strcol(1))) nooutput
nw = items(names_)
if (nw == 0) { print "zoo_criterion: no rows in ".f; exit status 1 }
array W[nw]
array LAY[nw]   # the best static layout per trace (layout.csv's "best (...)" rows), or NaN
do for [i = 1:nw] { W[i] = item(names_, i); LAY[i] = NaN }
if (nfiles >= 2) {
    stats FILE[2] using ((i_ = sum [i = 1:nw] (W[i] eq strcol(1) ? i : 0)) > 0 && strstrt(strcol(3), 'best') == 1 \
                         && LAY[i_] != LAY[i_] ? (LAY[i_] = column(7), 0) : 0) nooutput
}
default = 'caching:segments=expandable' # commas in a SPEC read ';' here
is_ladder(s) = strstrt(s, 'span=0') > 0
shown(x) = x <= 0 ? 0.0001 : x
set logscale y
set yrange [0.00005:200]
set xrange [1.0:1.26]
set xtics 1.0, 0.05 font ',8'
set ytics ('0' 0.0001, '0.001' 0.001, '0.01' 0.01, '0.1' 0.1, '1' 1, '10' 10, '100' 100) font ',8'
set grid ytics lc rgb '#dddddd'
set object 1 rect from 1.0, 0.00005 to 1.02, 1 fc rgb '#d8f0d8' fs solid 0.6 noborder behind
cols = (nw + 2) / 3
set multiplot layout 3, cols title "Simulated warm passes against the criterion (waste <= 1.02, map calls <= 1% of operations): green box passes"
do for [i = 1:nw] {
    w = W[i]
    lay = LAY[i]
    unset arrow 1
    if (lay == lay) { set arrow 1 from lay, graph 0 to lay, graph 1 nohead dt 3 lc rgb '#000000' }
    if (i == 1) { set key inside top right font ',8' } else { unset key }
    set title w
    set xlabel (i > nw - cols ? 'peak reserved / peak allocated' : '')
    set ylabel ((i - 1) % cols == 0 ? '% of operations mapping' : '')
    plot f using (strcol('workload') eq w && column('pass') > 1 && is_ladder(strcol('spec')) ? column('waste') : NaN):(shown(100 * column('maps_per_op'))) \
            with points lc rgb '#1f77b4' pt 7 ps 0.8 title (i == 1 ? 'span=0 SPECs' : ''), \
         f using (strcol('workload') eq w && column('pass') > 1 && strcol('spec') eq default ? column('waste') : NaN):(shown(100 * column('maps_per_op'))) \
            with points lc rgb '#d62728' pt 3 ps 2 title (i == 1 ? 'default' : '')
}
unset multiplot
