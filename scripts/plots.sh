#!/usr/bin/env bash
# `make plots RUN=<run-id>`: renders results/<run-id>/plots/<program>.png from the run's
# CSVs with plots/<program>.gp (one plot per program, one curve set per allocator).
# Works on any machine with gnuplot, e.g. on results brought back from a GPU box.
# For a repeated run (make bench REPEAT=N) it renders each repetition's plots, and the
# spread of every metric over the repetitions.
# gnuplot gets file names as data (gnuplot -c SCRIPT OUT FILES LABELS, plots/common.gp),
# so names with quotes, spaces or gnuplot code are only names, and runs no command: an
# input it cannot parse is prepared here first, into a scratch folder. A folder without
# its COMPLETE marker (an interrupted or running suite) is plotted with a warning.
#   plots.sh --render SCRIPT OUT FILES LABELS   one plot, as gnuplot -c SCRIPT OUT FILES
#                                               LABELS (same folder) with its inputs prepared
set -u
scratch=$(mktemp -d) || exit 1
trap 'rm -rf "$scratch"' EXIT
# unquote <IN >OUT: commas inside double-quoted fields as ';' and the quotes dropped, as
# gnuplot cuts a quoted field at its first comma. The data is only ever awk's input.
unquote() { LC_ALL=C awk -F'"' -v OFS= '{ for (i = 2; i <= NF; i += 2) gsub(/,/, ";", $i); $1 = $1; print }'; }
# prepared SCRIPT FILES-LIST: the list for gnuplot, a prepared copy (same base name: .sim
# marks simulated results) in place of each input that SCRIPT cannot read as it is.
prepared() {
    local i=0 f d
    while IFS= read -r f; do
        i=$((i + 1))
        case $(basename "$1" .gp):$i in
        zoo_criterion:1 | zoo_tradeoff:1) # the sweep's SPEC column holds commas
            d=$(mktemp -d "$scratch/in.XXXXXX") && unquote <"$f" >"$d/$(basename -- "$f")" || return 1
            f=$d/$(basename -- "$f") ;;
        esac
        printf '%s\n' "$f"
    done <<<"$2"
}
if [ "${1:-}" = --render ]; then
    [ $# -eq 5 ] || { echo "usage: plots.sh --render SCRIPT OUT FILES LABELS (FILES and LABELS one per line)" >&2; exit 2; }
    command -v gnuplot >/dev/null || { echo "plots: gnuplot is not installed (apt-get install gnuplot-nox)" >&2; exit 1; }
    list=$(prepared "$2" "$4") || { echo "plots: cannot read the inputs of $2" >&2; exit 1; }
    gnuplot -c "$2" "$3" "$list" "$5"
    exit
fi
cd "$(dirname "$0")/.."
run=${1:-}
if [ -z "$run" ]; then
    run=$(ls -1t results 2>/dev/null | grep -v '^README' | head -1)
    [ -n "$run" ] || { echo "plots: no results folder; give RUN=<run-id>" >&2; exit 2; }
fi
case /$run/ in */./* | */../*) echo "plots: '$run': a path with . or .. in it is refused (name the folder under results/)" >&2; exit 2 ;; esac
dir=results/$run
[ -d "$dir" ] || dir=$run # a path works too
[ -d "$dir" ] || { echo "plots: no results folder '$run'" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "plots: gnuplot is not installed (apt-get install gnuplot-nox)" >&2; exit 1; }
case $dir in *$'\n'*) echo "plots: a folder name with a newline is refused" >&2; exit 2 ;; esac

# gnuplot -c SCRIPT OUT FILES LABELS, the lists one name per line (ARGn are never
# evaluated), the inputs prepared; stderr into LOG.
plot() { # script out log files-list labels-list
    local list
    list=$(prepared "$1" "$4") || { echo "cannot read the inputs" >"$3"; return 1; }
    gnuplot -c "$1" "$2" "$list" "$5" 2>"$3"
}
join_lines() { local IFS=$'\n'; echo "$*"; }

# A repeated run (rep-1/, rep-2/, ...): every repetition's plots in its own folder, and
# at the top the spread of every metric over the repetitions (summary.csv).
mapfile -t reps < <(find "$dir" -mindepth 1 -maxdepth 1 -type d -name 'rep-[0-9]*' | sort -V)
if [ ${#reps[@]} -gt 0 ]; then
    status=0
    for rep in "${reps[@]}"; do "$0" "$rep" >/dev/null || status=1; done
    mkdir -p "$dir/plots"
    if [ -s "$dir/summary.csv" ]; then
        plot plots/spread.gp "$dir/plots/spread.png" "$dir/plots/spread.log" "$dir/summary.csv" "${#reps[@]}" &&
            rm -f "$dir/plots/spread.log" ||
            { echo "plots: plots/spread.gp failed: $(head -3 "$dir/plots/spread.log")" >&2; status=1; }
    fi
    echo "plots: each repetition's plots in $dir/rep-*/plots/; the spread over repetitions in $dir/plots/spread.png"
    exit $status
fi
[ -e "$dir/COMPLETE" ] || echo "plots: $dir has no COMPLETE marker: an interrupted or unfinished run, plotted as it is" >&2
mkdir -p "$dir/plots"
status=0 made=0
for gp in plots/*.gp; do
    prog=$(basename "$gp" .gp)
    [ "$prog" = common ] && continue
    files=() labels=()
    for csv in "$dir/$prog".*.csv; do
        [ -s "$csv" ] || continue
        case $csv in *$'\n'*) echo "plots: skipping a file name with a newline in $dir" >&2; continue ;; esac
        grep -qv '^#' "$csv" || continue # metadata only: the program skipped or failed
        files+=("$csv")
        labels+=("$(basename "$csv" .csv | sed "s/^$prog\.//")")
    done
    [ ${#files[@]} -gt 0 ] || continue
    if plot "$gp" "$dir/plots/$prog.png" "$dir/plots/$prog.log" "$(join_lines "${files[@]}")" "$(join_lines "${labels[@]}")"; then
        made=$((made + 1)); rm -f "$dir/plots/$prog.log"
    else
        echo "plots: $gp failed: $(head -3 "$dir/plots/$prog.log")" >&2; status=1
    fi
done
echo "plots: $made rendered into $dir/plots/"
exit $status
