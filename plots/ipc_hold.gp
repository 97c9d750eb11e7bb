# ipc_hold: CUDA IPC between a producer and a consumer process (scenarios/ipc_hold.c).
# One bar group per allocator (one CSV each):
# (a) device memory still used after the producer freed and trimmed, while the consumer
#     holds the handle (bad) and after it closed it first (fixed);
# (b) elements the consumer read corrupted, free-before-read race: no_wait (bad) vs ipc_event (fixed).
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,650 noenhanced font 'DejaVu Sans,10'
set output out
set multiplot layout 1,2 title "ipc_hold: CUDA IPC from the producer's allocator"
MiB = 1024.0 * 1024
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key inside right top
set yrange [0:*]
set offsets 0, 0, graph 0.15, 0 # headroom: the tallest bar and the key stay apart
set xtics rotate by -20
# Adds column col of a row of section sec and variant var to sum_ (summed over a file by
# stats; the header row is data there, and none of those rows).
sum_ = 0
sumcol(sec, var, col) = (strcol('section') eq sec && strcol('variant') eq var) ? (sum_ = sum_ + num(col), 0) : 0

set title '(a) held after free + trim (MiB)'
set ylabel 'MiB'
set print $held
do for [i=1:nfiles] {
    sum_ = 0; stats FILE[i] using (sumcol("hold", "consumer_holds", "held_while_shared_bytes")) nooutput; holds_ = sum_
    sum_ = 0; stats FILE[i] using (sumcol("hold", "consumer_closed", "held_while_shared_bytes")) nooutput
    print LABEL[i] . sprintf(",%g,%g", holds_ / MiB, sum_ / MiB)
}
set print
plot $held using 2:xtic(1) title 'consumer holds (bad)' lc rgb 'red', '' using 3 title 'consumer closed first (fixed)' lc rgb 'forest-green'

set title '(b) race: corrupted elements read by the consumer'
set ylabel 'elements (all trials)'
set print $race
do for [i=1:nfiles] {
    sum_ = 0; stats FILE[i] using (sumcol("race", "no_wait", "corrupted_elements")) nooutput; no_wait_ = sum_
    sum_ = 0; stats FILE[i] using (sumcol("race", "ipc_event", "corrupted_elements")) nooutput
    print LABEL[i] . sprintf(",%g,%g", no_wait_, sum_)
}
set print
plot $race using 2:xtic(1) title 'no wait (bad)' lc rgb 'red', '' using 3 title 'IPC event (fixed)' lc rgb 'forest-green'
unset multiplot
