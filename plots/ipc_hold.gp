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
sumcol(f, sec, var, col) = system(sprintf("awk -F, '/^#/{next} !h{for(i=1;i<=NF;i++)c[$i]=i;h=1;next} $c[\"section\"]==\"%s\" && $c[\"variant\"]==\"%s\" {s+=$c[\"%s\"]} END{print s+0}' %s", sec, var, col, shq(f)))

set title '(a) held after free + trim (MiB)'
set ylabel 'MiB'
set print $held
do for [i=1:nfiles] {
    f = FILE[i]
    print sprintf("%s,%g,%g", LABEL[i], (sumcol(f, "hold", "consumer_holds", "held_while_shared_bytes") + 0) / MiB, (sumcol(f, "hold", "consumer_closed", "held_while_shared_bytes") + 0) / MiB)
}
set print
plot $held using 2:xtic(1) title 'consumer holds (bad)' lc rgb 'red', '' using 3 title 'consumer closed first (fixed)' lc rgb 'forest-green'

set title '(b) race: corrupted elements read by the consumer'
set ylabel 'elements (all trials)'
set print $race
do for [i=1:nfiles] {
    f = FILE[i]
    print sprintf("%s,%g,%g", LABEL[i], sumcol(f, "race", "no_wait", "corrupted_elements") + 0, sumcol(f, "race", "ipc_event", "corrupted_elements") + 0)
}
set print
plot $race using 2:xtic(1) title 'no wait (bad)' lc rgb 'red', '' using 3 title 'IPC event (fixed)' lc rgb 'forest-green'
unset multiplot
