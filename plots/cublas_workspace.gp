# cublas_workspace: device memory of cuBLAS workspaces (scenarios/cublas_workspace.c).
# Device memory added as (a) handles, (b) streams of one handle, (c) graph captures grow,
# per variant: cuBLAS's default (bad), a caller-owned workspace, CUBLAS_WORKSPACE_CONFIG.
# Several files (runs) are drawn with different dash types.
call 'plots/common.gp' ARG1 ARG2 ARG3
set datafile columnheaders
set terminal pngcairo size 1500,600 noenhanced font 'DejaVu Sans,10'
set output out
set multiplot layout 1,3 title "cublas_workspace: device memory by handles, streams, graph captures"
MiB = 1024.0 * 1024
array V[3] = ['default', 'set_workspace', 'env_config']
array C[3] = ['red', 'forest-green', 'blue']
array T[3] = ['handles', 'streams', 'captures']
set key inside left top
set ylabel 'MiB'
set yrange [0:*]
do for [t=1:3] {
    set title sprintf('(%s) %s', t == 1 ? 'a' : t == 2 ? 'b' : 'c', T[t])
    set xlabel T[t]
    plot for [i=1:nfiles] for [v=1:3] FILE[i] using (strcol('test') eq T[t] && strcol('variant') eq V[v] && strcol('status') eq 'ok' ? column('count') : NaN): \
             (column('device_used_bytes') / MiB) with linespoints lw 2 pt 7 dt i lc rgb C[v] title V[v].(nfiles > 1 ? ' '.LABEL[i] : '')
}
unset multiplot
