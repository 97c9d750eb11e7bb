#!/usr/bin/env bash
# Every plot in plots/*.gp, rendered as its users render it, from real results whose
# string cells are hostile (hostile.py: shell and gnuplot code, quotes, a newline inside
# a quoted cell, formats, macros), in hostile file and folder names:
#   static    no plot script runs a command (system, a '<' or '|' pipe, backquotes,
#             shell, !) or holds eval, load or a macro
#   rounds    scripts/plots.sh on a run folder of one real CSV per program, and each
#             other script as its tool calls it (gnuplot -c SCRIPT OUT FILES LABELS, or
#             scripts/plots.sh --render for those whose inputs it prepares; cwd a
#             scratch folder): every value in every payload (the rows once per
#             payload), then newlines inside cells, then the header rows hostile too.
#             Nothing may run (no PWNED* file appears in the scratch folder, the
#             repository or /tmp) and gnuplot may not crash; a plot may fail to draw.
#   names     the plots that read names from their data (workloads, allocators, SPEC
#             options, file labels) draw them, hostile as they are
# usage: run.sh      exit 0 passed, 1 failed, 77 skipped (no gnuplot)
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/tests/plots_hostile
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$repo/tests/support/checks.sh"

# static: what the scripts could run, read off their code (comment lines and the text
# of string literals left out; backquotes only outside '...', where gnuplot expands them).
code=$(grep -nH '' "$repo"/plots/*.gp | grep -vE '^[^:]+:[0-9]+: *#' | sed -E "s/'([^']|'')*'/''/g")
code=$(grep -E '`' <<<"$code"; sed -E "s/\"([^\"\\\\]|\\\\.)*\"/\"\"/g" <<<"$code" |
    grep -E '(^|[^a-z_])(system|eval|load|shell)([^a-z_]|$)|@|^[^:]+:[0-9]+: *!')
[ -z "$code" ] && passes=$((passes + 1)) || { echo "FAIL: plots run code or commands:"; echo "$code" | sed 's/^/    /'; failures=$((failures + 1)); }
# A string that gnuplot would open as a pipe ('<cmd' a data source, '|cmd' an output),
# whatever its quotes, spaces or octal escapes: every such literal, as file:line:literal.
pipes=$(for gp in "$repo"/plots/*.gp; do
    sed -E 's/^ *#.*//' "$gp" | grep -noE "'([^']|'')*'|\"([^\"\\\\]|\\\\.)*\"" | sed "s|^|${gp##*/}:|"
done | grep -E "^[^:]+:[0-9]+:['\"][[:space:]]*([<|]|\\\\0*74|\\\\0*174)")
[ -z "$pipes" ] && passes=$((passes + 1)) || { echo "FAIL: a plot opens a pipe (gnuplot reads plain files only):"; echo "$pipes" | sed 's/^/    /'; failures=$((failures + 1)); }

# fixtures/: one real CSV per plot (fixtures/SOURCES: where from), fixtures/<program>.csv.
# plots.sh renders a run folder's <program>.*.csv; the others are drawn by their tools
# (scripts/compare, matrix, ab, replay-sweep, torch/*) as in each script's header:
# SCRIPT|FILES (';' between)|LABELS.
fx=$here/fixtures
direct="compare|$fx/compare.csv|B/A
compare_strip|$fx/compare_strip.csv|=alloc_latency
noise|$tmp/noise.csv|8
spread|$fx/spread.csv|2
plan_steps|$fx/plan_steps.csv|planned torch
torch_peaks|$fx/torch_peaks.csv|peaks
zoo_binding|$fx/zoo_binding.csv|x
zoo_conflict|$fx/zoo_conflict.csv|x
zoo_criterion|$fx/zoo_criterion.csv;$fx/zoo_criterion.layout.csv|x;y
zoo_steps|$fx/zoo_steps.csv|x
zoo_tradeoff|$fx/zoo_tradeoff.csv|x
zoo_tradeoff_live|$fx/zoo_tradeoff_live.csv|x
zoo_tradeoff_procs|$fx/zoo_tradeoff_procs.csv|x"
# noise.csv as scripts/ab writes it, from compare.csv.
python3 "$repo/scripts/vl" noise "$fx/compare.csv" 8 >"$tmp/noise.csv" ||
    { echo "FAIL: noise.py"; failures=$((failures + 1)); }

# Every script has an input here: a new plot needs one.
for gp in "$repo"/plots/*.gp; do
    p=$(basename "$gp" .gp)
    case $p in common | matrix) continue ;; esac
    if ! grep -q "^$p|" <<<"$direct" && [ ! -s "$fx/$p.csv" ]; then
        echo "FAIL: no input for plots/$p.gp in tests/plots_hostile/run.sh"; failures=$((failures + 1))
    fi
done

# gnuplot as plots.sh and the tools call it, then: its exit status, and any PWNED* file
# that appeared meanwhile (named, with the script, and removed).
real_gnuplot=$(command -v gnuplot)
mkdir -p "$tmp/bin"
touch "$tmp/start"
cat >"$tmp/bin/gnuplot" <<EOF
#!/usr/bin/env bash
"$real_gnuplot" "\$@"
rc=\$?
printf '%s\t%s\n' "\$rc" "\$(basename "\$2")" >>"$tmp/rcs"
find "$tmp" "$repo" "$repo/plots" "$repo/scripts" /tmp -maxdepth 1 -name 'PWNED*' -newer "$tmp/start" 2>/dev/null |
    while read -r m; do printf '%s\t%s\n' "\$(basename "\$2")" "\$m" >>"$tmp/ran"; rm -f "\$m"; done
find "$tmp" -mindepth 2 -name 'PWNED*' 2>/dev/null |
    while read -r m; do printf '%s\t%s\n' "\$(basename "\$2")" "\$m" >>"$tmp/ran"; rm -f "\$m"; done
exit \$rc
EOF
chmod +x "$tmp/bin/gnuplot"
export PATH=$tmp/bin:$PATH

# round NAME HOSTILE-OPTIONS...: every plot once, from its inputs made hostile
# (hostile.py with those options), under hostile file and folder names.
round() {
    local r=$tmp/$1 p gp files labels i in run label conv=() render
    shift
    in="$r/in/in';touch\${IFS}PWNED20;'\$(touch PWNED21)"
    run="$r/run \"q\" '\`touch PWNED22\`'"
    label="l';touch\${IFS}PWNED23;'\$(touch PWNED24)%s@x"
    mkdir -p "$r/cwd" "$in" "$run"
    ln -s "$repo/plots" "$r/cwd/plots" # the scripts call 'plots/common.gp'
    for gp in "$repo"/plots/*.gp; do
        p=$(basename "$gp" .gp)
        [ -s "$fx/$p.csv" ] && ! grep -q "^$p|" <<<"$direct" && conv+=("$fx/$p.csv" "$run/$p.$label.csv")
    done
    while IFS='|' read -r p srcs labels; do
        IFS=';' read -ra list <<<"$srcs"
        for i in "${!list[@]}"; do conv+=("${list[$i]}" "$in/$p.$i.csv"); done
    done <<<"$direct"
    python3 "$here/hostile.py" "$@" "${conv[@]}" || { echo "FAIL: hostile.py $*"; failures=$((failures + 1)); }
    # matrix.gp's cells have no header row
    python3 "$here/hostile.py" --headers "$@" "$fx/cells.csv" "$in/cells.csv"
    touch "$run/COMPLETE"
    (cd "$r/cwd" && "$repo/scripts/plots.sh" "$run") </dev/null >"$r/plots.log" 2>&1
    while IFS='|' read -r p srcs labels; do
        files=
        IFS=';' read -ra list <<<"$srcs"
        for i in "${!list[@]}"; do files+=${files:+$'\n'}$in/$p.$i.csv; done
        # a label that is a value of the data (compare_strip: the program) is what it became
        case $labels in =*) labels=$(python3 "$here/hostile.py" --name "${labels#=}") ;; *) labels=${labels//;/$'\n'} ;; esac
        # the scripts whose input plots.sh prepares are drawn through it (their headers say so)
        case $p in zoo_criterion | zoo_tradeoff) render=("$repo/scripts/plots.sh" --render) ;; *) render=(gnuplot -c) ;; esac
        (cd "$r/cwd" && "${render[@]}" "plots/$p.gp" "$r/$p.png" "$files" "$labels") </dev/null >"$r/$p.log" 2>&1
    done <<<"$direct"
    (cd "$r/cwd" && gnuplot -c plots/matrix.gp "$in/cells.csv" "$r/matrix.png" 3 2 1 "$label" 30) </dev/null >"$r/matrix.log" 2>&1
}

npayloads=$(python3 -c "import sys; sys.path.insert(0, '$here'); import hostile; print(len(hostile.PAYLOADS))")
# (a newline inside a cell splits its row, and most plots stop at the first short row:
# the rows of every payload come without one, and the newline in a round of its own)
round all --flat --copies "$npayloads"
round newline
round headers --headers
# Values a plot compares with its own constants (sections, variants, SPECs, configs) stay
# here, and no value holds a newline (it would split its row).
round names --flat --keep section,variant,spec,config

# Nothing ran; gnuplot ended every time (drawn or not) and never by a signal.
if [ -s "$tmp/ran" ]; then
    echo "FAIL: plots ran commands from their data (script, file it made):"
    sort "$tmp/ran" | uniq -c | sed 's/^/    /'
    failures=$((failures + 1))
else
    passes=$((passes + 1))
fi
crashed=$(awk -F'\t' '$1 >= 128' "$tmp/rcs")
[ -z "$crashed" ] && passes=$((passes + 1)) || { echo "FAIL: gnuplot crashed (exit status, script):"; echo "$crashed" | sort | uniq -c | sed 's/^/    /'; failures=$((failures + 1)); }
n=$(wc -l <"$tmp/rcs")
[ "$n" -gt 0 ] && passes=$((passes + 1)) || { echo "FAIL: no plot rendered at all"; failures=$((failures + 1)); }
# Names are only names: the plots that read names from their data draw them.
for p in torch_bench torch_zoo zoo_conflict zoo_criterion zoo_binding zoo_steps zoo_tradeoff graph_pool ipc_hold peer_access hyperfine; do
    png=$(find "$tmp/names" -name "$p.png" -size +10k | head -1)
    [ -n "$png" ] && passes=$((passes + 1)) || {
        echo "FAIL: plots/$p.gp did not draw hostile names:"; grep -h "$p" "$tmp/names"/*.log | head -3 | sed 's/^/    /'
        failures=$((failures + 1))
    }
done
echo "($n renders, $(awk -F'\t' '$1 != 0' "$tmp/rcs" | wc -l) of them without a plot)"
checks_report plots_hostile
[ "$failures" -eq 0 ]
