# cache_hold: why VRAM is not given back (scenarios/cache_hold.c), one colour per allocator.
# (a) device memory this process holds (held_bytes: free-at-start minus free now) after
#     each step; dashed: bytes the allocator says are allocated. (b) did a plain
#     cudaMalloc of half the memory free at start succeed after the frees, without and
#     with a trim, from another process and from this one? (c), (d) cost of trimming every step: time per allocation call and per step.
call 'plots/common.gp' ARG1 ARG2 ARG3
set termoption noenhanced  # labels and file names contain underscores
set terminal pngcairo size 1500,1050 noenhanced font 'DejaVu Sans,10'  # four panels need room
set output out
set datafile columnheaders
set datafile missing NaN  # rows of other phases are skipped without breaking lines
set multiplot layout 2,2 title "cache_hold: memory held after frees, what trim gives back, and what trimming every step costs"
GiB = 1024.0 * 1024 * 1024
is(ph, v) = strcol('phase') eq ph && strcol('variant') eq v
# x position of each hold step, in the order the program runs them
stepx(v, s) = v eq 'baseline' ? 0 : \
    v eq 'no_trim' ? (s eq 'after_alloc' ? 1 : s eq 'after_free' ? 2 : NaN) : \
    v eq 'trim' ? (s eq 'after_alloc' ? 3 : s eq 'after_free' ? 4 : s eq 'after_trim' ? 5 : NaN) : NaN
hx(i) = strcol('phase') eq 'hold' ? stepx(strcol('variant'), strcol('step')) : NaN
set title '(a) memory held after each step'
set xtics ('start' 0, 'no_trim: alloc' 1, 'free' 2, 'trim: alloc' 3, 'free' 4, 'trim' 5)
set xrange [-0.3:5.3]
set ylabel 'GiB'
set offsets 0, 0, graph 0.3, 0
set key inside top center horizontal maxrows 2 font ',8'
plot for [i=1:nfiles] FILE[i] using (hx(0)):(column('held_bytes') / GiB) with linespoints lw 2 pt 7 lc i title LABEL[i].' held (device)', \
     for [i=1:nfiles] FILE[i] using (hx(0)):(column('allocated_bytes') / GiB) with linespoints lw 1 dt 2 pt 6 lc i notitle

set offsets 0, 0, 0, 0
set title "(b) a neighbour's cudaMalloc of half the free memory, after the frees"
set style fill solid 0.6 border -1
set xtics ()
set xrange [0.4:nfiles + 0.6]
do for [i=1:nfiles] { set xtics add (tic(LABEL[i]) i) }
set yrange [0:1.35]
set ytics ('refused (OOM)' 0, 'granted' 1)
set ylabel ''
set key outside bottom center horizontal maxrows 2 font ',8'
set xtics font ',8' rotate by -12
nb(v, s) = is('hold', v) && strcol('step') eq s
plot for [i=1:nfiles] FILE[i] using (nb('no_trim', 'neighbour_process') ? i - 0.3 : NaN):(column('neighbour_ok') + 0.02):(0.19) \
         with boxes lc 'dark-red' title (i == 1 ? 'no trim: other process' : ''), \
     for [i=1:nfiles] FILE[i] using (nb('no_trim', 'neighbour_cudaMalloc') ? i - 0.1 : NaN):(column('neighbour_ok') + 0.02):(0.19) \
         with boxes lc 'salmon' title (i == 1 ? 'no trim: same process' : ''), \
     for [i=1:nfiles] FILE[i] using (nb('trim', 'neighbour_process') ? i + 0.1 : NaN):(column('neighbour_ok') + 0.02):(0.19) \
         with boxes lc 'dark-green' title (i == 1 ? 'trim: other process' : ''), \
     for [i=1:nfiles] FILE[i] using (nb('trim', 'neighbour_cudaMalloc') ? i + 0.3 : NaN):(column('neighbour_ok') + 0.02):(0.19) \
         with boxes lc 'light-green' title (i == 1 ? 'trim: same process' : '')

set title '(c) allocation call, median'
set key outside top center horizontal font ',8'
set yrange [*:*]
set ytics auto
set logscale y
set ylabel 'ns per call'
plot for [i=1:nfiles] FILE[i] using (is('loop', 'keep_cache') ? i - 0.18 : NaN):'alloc_median_ns':(0.34) \
         with boxes lc 'forest-green' title (i == 1 ? 'keep cache' : ''), \
     for [i=1:nfiles] FILE[i] using (is('loop', 'trim_every_iter') ? i + 0.18 : NaN):'alloc_median_ns':(0.34) \
         with boxes lc 'red' title (i == 1 ? 'trim every step' : '')

set title '(d) whole step (allocs, frees, sync, trim), median'
set ylabel 'ms per step'
plot for [i=1:nfiles] FILE[i] using (is('loop', 'keep_cache') ? i - 0.18 : NaN):(column('step_median_ns') / 1e6):(0.34) \
         with boxes lc 'forest-green' title (i == 1 ? 'keep cache' : ''), \
     for [i=1:nfiles] FILE[i] using (is('loop', 'trim_every_iter') ? i + 0.18 : NaN):(column('step_median_ns') / 1e6):(0.34) \
         with boxes lc 'red' title (i == 1 ? 'trim every step' : '')
unset multiplot
