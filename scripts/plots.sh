#!/usr/bin/env bash
# `make plots RUN=<run-id>`: renders results/<run-id>/plots/<program>.png from the run's
# CSVs with plots/<program>.gp (one plot per program, one curve set per allocator).
# Works on any machine with gnuplot, e.g. on results brought back from a GPU box.
set -u
cd "$(dirname "$0")/.."
run=${1:-}
if [ -z "$run" ]; then
    run=$(ls -1t results 2>/dev/null | grep -v '^README' | head -1)
    [ -n "$run" ] || { echo "plots: no results folder; give RUN=<run-id>" >&2; exit 2; }
fi
dir=results/$run
[ -d "$dir" ] || dir=$run # a path works too
[ -d "$dir" ] || { echo "plots: no results folder '$run'" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "plots: gnuplot is not installed (apt-get install gnuplot-nox)" >&2; exit 1; }
mkdir -p "$dir/plots"
status=0 made=0
for gp in plots/*.gp; do
    prog=$(basename "$gp" .gp)
    [ "$prog" = common ] && continue
    files=() labels=()
    for csv in "$dir/$prog".*.csv; do
        [ -s "$csv" ] || continue
        grep -qv '^#' "$csv" || continue # metadata only: the program skipped or failed
        files+=("$csv")
        labels+=("$(basename "$csv" .csv | sed "s/^$prog\.//")")
    done
    [ ${#files[@]} -gt 0 ] || continue
    if gnuplot -e "files='${files[*]}'; labels='${labels[*]}'; out='$dir/plots/$prog.png'" "$gp" 2>"$dir/plots/$prog.log"; then
        made=$((made + 1)); rm -f "$dir/plots/$prog.log"
    else
        echo "plots: $gp failed: $(head -3 "$dir/plots/$prog.log")" >&2; status=1
    fi
done
echo "plots: $made rendered into $dir/plots/"
exit $status
