# Peak reserved / peak allocated of real PyTorch workloads, per allocator (lower is
# less waste; 1.0 = no waste). Input: results/traces/peaks.csv from
# scripts/torch/record_traces.py, rendered with
#   gnuplot -c plots/torch_peaks.gp peaks.png results/traces/peaks.csv peaks
call 'plots/common.gp' ARG1 ARG2 ARG3
f = FILE[1]
names = "torch torch-expandable vramlab vramlab-expandable"
wl = "transformer gpt2 resnet50"
n = words(names)
w = 0.8 / n
wx(s) = s eq 'transformer' ? 0 : s eq 'gpt2' ? 1 : s eq 'resnet50' ? 2 : NaN
pick(k, v) = (strcol(3) eq word(names, k) && strcol(2) eq 'full') ? v : NaN
set title 'Peak reserved / peak allocated on PyTorch workloads'
set ylabel 'peak reserved / peak allocated'
set yrange [0.95:*]
set bmargin 4
set xrange [-0.6:2.6]
set xtics ("transformer training\nvariable seq. length" 0, "GPT-2 generation\ngrowing KV cache" 1, "ResNet-50 training\nvariable batch" 2)
set style fill solid 0.85 border -1
set boxwidth w
set arrow 1 from -0.5, 1.03 to 2.5, 1.03 nohead dt 2 lw 1.5 lc rgb '#444444' front
set label 1 'target 1.03' at 2.45, 1.035 right font ',8' front
plot for [k=1:n] f using (wx(strcol(1)) + (k - (n + 1) / 2.0) * w):(pick(k, column('reserved_over_allocated'))) \
         with boxes lc k title word(names, k), \
     for [k=1:n] f using (wx(strcol(1)) + (k - (n + 1) / 2.0) * w):(pick(k, column('reserved_over_allocated'))):(sprintf('%.3f', pick(k, column('reserved_over_allocated')))) \
         with labels offset 0, 0.7 font ',8' notitle
