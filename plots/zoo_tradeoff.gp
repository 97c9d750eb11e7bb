# The expandable allocator's trade-off per workload, from scripts/replay-sweep's
# steady.csv (the simulated device; map calls and waste are the policy's, equal to a
# GPU's): x = steady-state peak reserved / peak allocated, y = device map calls per
# 1,000 allocations in the steady state (the second half of a pass). One panel a
# workload:
#   line:   span=0 (one map call per chunk) at reclaim budgets rising left to right
#           (every SPEC of the file with span=0, in the file's order: replay-sweep
#           writes a workload's rows together, in the order of its --spec options);
#   star:   the default SPEC (caching:segments=expandable, spans of 64 MiB);
#   dashed: waste 1.02.
# Zero maps are drawn at 0.01. A map call and its unmap cost ~53 us per 2 MiB chunk on
# an H100 (results/reference/h100-zoo-steps/vmm_batch.csv), so 10 per 1,000 allocations
# cost ~0.5 us per allocation.
#   scripts/plots.sh --render plots/zoo_tradeoff.gp OUT.png steady.csv x
# (through plots.sh, which hands over steady.csv with the commas inside its quoted SPECs as
# ';': gnuplot alone would cut a quoted field at its first comma)
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
set terminal pngcairo size 1500,1000 enhanced font 'DejaVu Sans,9'
set output out
set termoption noenhanced
# The workloads (column 1), sorted; the header row is data here, left out by its name.
names_ = "\n"
stats f using (strcol(1) eq 'workload' ? 0 : adds(strcol(1))) nooutput
nw = items(names_)
if (nw == 0) { print "zoo_tradeoff: no rows in ".f; exit status 1 }
array W[nw]
do for [i = 1:nw] { W[i] = item(names_, i) }
default = 'caching:segments=expandable' # commas in a SPEC read ';' here
is_ladder(s) = strstrt(s, 'span=0') > 0
shown(x) = x < 1e-5 ? 0.01 : x
set logscale y
set yrange [0.005:2000]
set xrange [1.0:1.26]
set xtics 1.0, 0.05 font ',8'
set ytics ('0' 0.01, '0.1' 0.1, '1' 1, '10' 10, '100' 100, '1000' 1000) font ',8'
set grid ytics lc rgb '#dddddd'
set arrow 1 from 1.02, graph 0 to 1.02, graph 1 nohead dt 2 lc rgb '#000000'
cols = (nw + 2) / 3
set multiplot layout 3, cols title "Expandable segments: waste against map calls in the steady state, per workload (simulated replay of recorded traces)"
do for [i = 1:nw] {
    w = W[i]
    if (i == 1) { set key inside top right font ',8' } else { unset key }
    set title w
    set xlabel (i > nw - cols ? 'peak reserved / peak allocated' : '')
    set ylabel ((i - 1) % cols == 0 ? 'maps per 1,000 allocations' : '')
    plot f using (strcol('workload') eq w && is_ladder(strcol('spec')) ? column('waste') : NaN):(shown(1000 * column('maps_per_alloc'))) \
            with linespoints lc rgb '#1f77b4' pt 7 ps 0.8 title (i == 1 ? 'span=0, budget rising' : ''), \
         f using (strcol('workload') eq w && strcol('spec') eq default ? column('waste') : NaN):(shown(1000 * column('maps_per_alloc'))) \
            with points lc rgb '#d62728' pt 3 ps 2 title (i == 1 ? 'default' : '')
}
unset multiplot
