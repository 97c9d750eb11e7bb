# scenarios/retained_graph: allocated bytes per training iteration for each habit and
# its remedy (one panel per case; one colour per allocator, one dash per variant).
# A line that climbs is a leak; the eval-loop graph climbs until it runs out of memory.
call 'plots/common.gp' ARG1 ARG2 ARG3
set terminal pngcairo size 1400,800 noenhanced font 'DejaVu Sans,10'
set output out
# Short names in the keys: 'caching_segments-expandable' -> 'expandable'.
base(l) = strstrt(l, '.sim') ? l[1:strstrt(l, '.sim') - 1] : l
lab(i) = (strstrt(LABEL[i], 'expandable') ? 'expandable' : base(LABEL[i])) . (strstrt(LABEL[i], '.sim') ? ' (sim)' : '')
set multiplot layout 1,3 title 'retained_graph: memory per iteration (allocated; requested where the backend cannot tell)'
set key outside below font ',8' maxrows 4
set xlabel 'iteration'
set ylabel 'GiB'
used(dummy) = column('allocated_bytes') > 0 ? column('allocated_bytes') : column('requested_bytes')
pick(c, v) = (strcol('record') eq 'iteration' && strcol('case') eq c && strcol('variant') eq v) ? used(0) / 2.0**30 : NaN
set title 'loss history'
plot for [i=1:nfiles] FILE[i] using 'iteration':(pick('loss_history','append_loss_no_backward')) \
        with linespoints lc i dt 1 pt 7 ps 0.5 title lab(i).' append(loss), eval, no backward', \
     for [i=1:nfiles] FILE[i] using 'iteration':(pick('loss_history','append_loss')) \
        with lines lc i dt 2 title lab(i).' append(loss) after backward', \
     for [i=1:nfiles] FILE[i] using 'iteration':(pick('loss_history','item')) \
        with lines lc i dt 3 title lab(i).' append(loss.item())'
set title 'gradients (peak reserved, dots)'
peak(c, v) = (strcol('record') eq 'iteration' && strcol('case') eq c && strcol('variant') eq v && column('peak_reserved_bytes') > 0) ? \
    column('peak_reserved_bytes') / 2.0**30 : NaN
plot for [i=1:nfiles] FILE[i] using 'iteration':(pick('grad_accum','accumulate_no_zero')) \
        with lines lc i dt 1 title lab(i).' never zeroed', \
     for [i=1:nfiles] FILE[i] using 'iteration':(pick('grad_accum','zero_grad_each_step')) \
        with lines lc i dt 2 title lab(i).' zero_grad(set_to_none)', \
     for [i=1:nfiles] FILE[i] using 'iteration':(peak('grad_accum','accumulate_no_zero')) \
        with points lc i pt 7 ps 0.4 notitle, \
     for [i=1:nfiles] FILE[i] using 'iteration':(peak('grad_accum','zero_grad_each_step')) \
        with points lc i pt 6 ps 0.4 notitle
set title 'outputs kept across epochs'
plot for [i=1:nfiles] FILE[i] using 'iteration':(pick('epoch_outputs','outputs_kept_across_epochs')) \
        with lines lc i dt 1 title lab(i).' kept', \
     for [i=1:nfiles] FILE[i] using 'iteration':(pick('epoch_outputs','outputs_cleared_each_epoch')) \
        with lines lc i dt 2 title lab(i).' cleared each epoch'
unset multiplot
