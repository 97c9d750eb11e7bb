# One workload's step times, step by step, on a GPU: a planned SPEC (plan=1) against
# PyTorch's default allocator, one allocator per process, several processes each
# (scripts/torch/steps_from.py --per-step: per step the median over the processes, with
# the lowest and highest). Below, the planned SPEC's map calls in each step: the steps
# before the plan relocate under the tight budget, the plan starts (the cache given back,
# the arena mapped), then no map call.
#   gnuplot -c plots/plan_steps.gp OUT.png steps.csv 'planned torch'
# LABELS: the planned allocator's name, then the reference's, as the CSV's columns name them.
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
a = word(LABEL[1], 1)
ref = word(LABEL[1], 2)
if (strlen(a) == 0 || strlen(ref) == 0) {
    print "plan_steps.gp: LABELS must name the planned allocator and the reference"
    exit status 2
}
set terminal pngcairo size 1100,760 enhanced font 'DejaVu Sans,10'
set output out
set termoption noenhanced
set multiplot layout 2,1 title "Step by step: ".a." (plan=1) against ".ref.", median over processes, lowest to highest shaded"
set key top right
set logscale y
set ylabel 'step time (ms, log scale)'
set xrange [-0.5:*]
set lmargin 12
set rmargin 24
plot f using 'step':(column(a.'_ms_min')):(column(a.'_ms_max')) with filledcurves lc rgb '#c6dbef' notitle, \
     f using 'step':(column(ref.'_ms_min')):(column(ref.'_ms_max')) with filledcurves lc rgb '#fdd0a2' fs transparent solid 0.6 notitle, \
     f using 'step':(column(ref.'_ms')) with linespoints pt 7 ps 0.6 lc rgb '#d62728' title ref, \
     f using 'step':(column(a.'_ms')) with linespoints pt 5 ps 0.6 lc rgb '#1f77b4' title a
unset logscale y
set ylabel 'map calls in the step'
set xlabel 'step (0: the cold one)'
set yrange [0:*]
plot f using 'step':(column(a.'_maps')) with impulses lw 4 lc rgb '#1f77b4' title a.': map calls'
unset multiplot
