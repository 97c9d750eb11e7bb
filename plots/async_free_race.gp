# scenarios/async_free_race: memory freed on stream A while stream B still uses it.
# Left: share of the new owner's elements corrupted, bad variant (free with no
# dependency, filled) against the fixed ones (record_use, event wait, stream sync:
# open), by stream B's backlog. Middle: host time of the free call against that
# backlog (raw cudaFree stalls until B is done: the dashed line is y = x).
# Right: pinned staging buffer refilled while its copy may be in flight.
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,800 noenhanced font 'DejaVu Sans,10'
set output out
# Short names in the keys: 'caching_segments-expandable' -> 'expandable'.
base(l) = strstrt(l, '.sim') ? l[1:strstrt(l, '.sim') - 1] : l
lab(i) = (strstrt(LABEL[i], 'expandable') ? 'expandable' : base(LABEL[i])) . (strstrt(LABEL[i], '.sim') ? ' (sim)' : '')
# Allocators often give the same share (all 0 or all 1): each one's points sit a little
# to the side of the true backlog (log x), so that every series stays visible.
dodge(i) = 1.3 ** (i - (nfiles + 1) / 2.0)
set multiplot layout 1,3 title 'async_free_race: freeing memory another stream still uses'
set key outside below font ',8' maxrows 4
set logscale x
set xlabel "stream B's backlog when freed [ms] (allocators side by side)"
set ylabel 'corrupted share of the new buffer (all trials)'
set yrange [-0.05:1.05]
share(kind) = (strcol('section') eq 'device' && strcol('role') eq kind && column('trials') > 0) ? \
    column('corrupted_elements') / (column('trials') * column('size_bytes') / 4.0) : NaN
set title 'device: corruption'
plot for [i=1:nfiles] FILE[i] using (column('side_work_ms') * dodge(i)):(share('bad')) with points lc i pt 7 ps 1.2 \
        title lab(i).' no dependency', \
     for [i=1:nfiles] FILE[i] using (column('side_work_ms') * dodge(i)):(share('fixed')) with points lc i pt 6 ps 1.6 \
        title lab(i).' fixed variants'
set title 'device: host time of the free call'
set key outside below font ',8' maxrows 4
set logscale xy
set yrange [*:*]
set ylabel 'free call, median [ms]'
freems(v) = (strcol('section') eq 'device' && strcol('variant') eq v) ? column('free_call_median_ns') / 1e6 : NaN
plot for [i=1:nfiles] FILE[i] using 'side_work_ms':(freems('no_dependency')) with points lc i pt 7 \
        title lab(i).' no dependency', \
     for [i=1:nfiles] FILE[i] using 'side_work_ms':(freems('stream_sync')) with points lc i pt 4 \
        title lab(i).' after stream sync', \
     x with lines lc rgb 'gray' dt 2 title 'y = backlog'
unset logscale y
set title 'host: pinned buffer refilled during its copy'
set key outside below font ',8' maxrows 4
set xlabel "copy's backlog [ns] (0 drawn at 1 us; allocators side by side)"
set ylabel 'corrupted share of the copied data'
set yrange [-0.05:1.05]
hshare(v) = (strcol('section') eq 'host' && strcol('variant') eq v && column('trials') > 0) ? \
    column('corrupted_elements') / (column('trials') * column('size_bytes') / 4.0) : NaN
lag(x) = x > 0 ? x : 1000
plot for [i=1:nfiles] FILE[i] using (lag(column('lag_ns')) * dodge(i)):(hshare('host_reuse_no_wait')) with points lc i pt 7 \
        title lab(i).' no wait', \
     for [i=1:nfiles] FILE[i] using (lag(column('lag_ns')) * dodge(i)):(hshare('host_reuse_event_sync')) with points lc i pt 6 ps 1.6 \
        title lab(i).' event sync'
unset multiplot
