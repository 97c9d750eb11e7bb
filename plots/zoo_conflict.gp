# One SPEC against both limits, per zoo workload: scripts/torch/conflict.py's CSV (one row
# per SPEC and workload). x: the cold replay's first-pass ops/s over PyTorch's expandable
# segments on the same GPU, with its 95% Hodges-Lehmann interval between processes (log
# scale); y: live peak reserved / peak allocated. The shaded box is where both limits hold
# (x >= 1, y <= 1.02): a SPEC that suits every workload would put all its points there.
# One marker per SPEC (its options), each point labelled with its workload.
#   gnuplot -c plots/zoo_conflict.gp OUT.png conflict.csv x
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
set terminal pngcairo size 1300,900 enhanced font 'DejaVu Sans,10'
set output out
set termoption noenhanced
# The SPECs' options (column 1) of the rows with a cold ratio (9) and a waste (6), in order
# of first appearance; the header row is data here, left out by its name.
names_ = "\n"
stats f using (strcol(1) ne 'options' && strcol(9) ne '' && strcol(6) ne '' ? add(strcol(1)) : 0) nooutput
n = items(names_)
if (n == 0) { print "zoo_conflict: no row with both a waste and a cold ratio in ".f; exit status 1 }
set datafile separator comma
set logscale x
set xrange [0.03:8]
set xtics (0.03, 0.1, 0.3, 1, 2, 4, 8)
set yrange [0.995:*]
set xlabel 'cold replay ops/s / PyTorch expandable segments (same GPU)'
set ylabel 'live peak reserved / peak allocated'
set grid lc rgb '#dddddd'
set object 1 rect from first 1, graph 0 to graph 1, first 1.02 behind fillcolor rgb '#e3f2e3' fillstyle solid noborder
set arrow 1 from first 1, graph 0 to first 1, graph 1 nohead dt 2 lc rgb '#000000'
set arrow 2 from graph 0, first 1.02 to graph 1, first 1.02 nohead dt 2 lc rgb '#000000'
set key outside right top font ',9' title 'SPEC options'
set title "One expandable SPEC against both limits, per workload (shaded: both hold)"
array O[n]
do for [i = 1:n] { O[i] = item(names_, i) }
pick(i, col) = strcol('options') eq O[i] ? column(col) : NaN
plot for [i = 1:n] f using (pick(i, 'cold')):'waste':(pick(i, 'cold_lo')):(pick(i, 'cold_hi')) \
        with xerrorbars pt (i + 4) ps 1.3 lc i title O[i], \
     for [i = 1:n] f using (pick(i, 'cold')):'waste':(strcol('workload')) \
        with labels offset 0.6, 0.5 left font ',8' textcolor lt i notitle
