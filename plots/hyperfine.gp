# make hyperfine: whole-process wall time of every timed run, per program (x) and
# allocator (one colour per file), so the spread between runs is visible; the CSVs are
# results/<run>/hyperfine.<alloc>.csv (program,command,run,time_ms).
call 'plots/common.gp' ARG1 ARG2 ARG3
set title 'whole-process wall time per run (hyperfine; quick configurations)'
set ylabel 'ms per run'
set logscale y
set key inside left top font ',8'
# Programs get x positions in order of first appearance over all files.
names_ = "\n"
do for [i=1:nfiles] {
    stats FILE[i] using (strcol(1) ne 'program' ? add(strcol(1)) : 0) nooutput
}
nprogs = items(names_)
array P[nprogs > 0 ? nprogs : 1]
do for [k=1:nprogs] { P[k] = item(names_, k) }
set xtics () rotate by -30
do for [k=1:nprogs] { set xtics add (tic(P[k]) k) }
pos(p) = sum [k=1:nprogs] (P[k] eq p ? k : 0)
set xrange [0.5:nprogs+0.5]
plot for [i=1:nfiles] FILE[i] using (pos(strcol(1)) + (i - (nfiles+1)/2.0) * 0.6/nfiles):"time_ms" \
        with points pt 7 ps 0.6 lc i title LABEL[i]
