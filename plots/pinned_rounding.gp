# pinned_rounding: pinned host memory held vs requested (scenarios/pinned_rounding.c).
# (a) pinned over requested with every request alive: the allocator's own sum (held) and
#     the OS's figure (os: VmLck/VmPin/smaps Locked, the one that moved; none drawn when
#     no per-process counter moved) and MemFree's drop.
# (b) H2D and D2H bandwidth of a block from each allocator (median, p25..p75).
# Several files (runs) are drawn side by side.
call 'plots/common.gp' ARG1 ARG2 ARG3
set datafile columnheaders
set multiplot layout 1,2 title "pinned_rounding: power-of-two caching vs exact sizes vs cudaHostRegister"
array V[3] = ['pow2_cache', 'exact_cache', 'host_register']
vindex(s) = s eq V[1] ? 1 : s eq V[2] ? 2 : s eq V[3] ? 3 : NaN
x(i, k) = vindex(strcol('variant')) + (i - 1) * 0.08 + k * 0.22 - 0.22
set xrange [0.4:3.6]
set xtics ('pow2 cache' 1, 'exact cache' 2, 'cudaHostRegister' 3)
set style fill solid 0.6 border -1
set key inside left top

set title '(a) pinned / requested, every request alive'
set ylabel 'ratio'
set yrange [0:*]
plot for [i=1:nfiles] FILE[i] using (strcol('test') eq 'hold' ? x(i, 0) : NaN):'held_over_requested':(0.2) \
         with boxes lc rgb 'steelblue' title (i == 1 ? 'allocator: held' : ''), \
     for [i=1:nfiles] FILE[i] using (strcol('test') eq 'hold' ? x(i, 1) : NaN):'os_over_requested':(0.2) \
         with boxes lc rgb 'orange' title (i == 1 ? 'OS: locked/pinned counter' : ''), \
     for [i=1:nfiles] FILE[i] using (strcol('test') eq 'hold' ? x(i, 2) : NaN): \
         (column('mem_free_drop_bytes') / column('requested_bytes')):(0.2) \
         with boxes lc rgb 'gray' title (i == 1 ? 'OS: MemFree drop' : '')

set title '(b) copy bandwidth'
set ylabel 'GB/s'
plot for [i=1:nfiles] FILE[i] using (strcol('test') eq 'copy' && strcol('direction') eq 'h2d' ? x(i, 0.5) : NaN):'bandwidth_gbps':(0.2) \
         with boxes lc rgb 'forest-green' title (i == 1 ? 'H2D' : ''), \
     for [i=1:nfiles] FILE[i] using (strcol('test') eq 'copy' && strcol('direction') eq 'd2h' ? x(i, 1.5) : NaN):'bandwidth_gbps':(0.2) \
         with boxes lc rgb 'dark-violet' title (i == 1 ? 'D2H' : '')
unset multiplot
