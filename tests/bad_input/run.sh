#!/usr/bin/env bash
# Runs the bad-input table (tests/bad_input/table.tsv, its header explains the columns)
# against every program in BUILD/bin and checks each case: the expected exit status,
# exactly one line on stderr for a non-zero status, no signal, no sanitizer report,
# no hang. Prints each failing case (program, arguments, what happened, stderr) and a
# summary; exits 1 if any case failed.
#   usage: run.sh BUILD [TABLE]
#   env:   BAD_INPUT_TIMEOUT (seconds per case, default 60)
#          BAD_INPUT_GPU=0|1 (default: 1 when nvidia-smi lists a GPU)
#          BAD_INPUT_ONLY=NAME[,NAME] (only these programs)
#          BAD_INPUT_JOBS (cases run at once, default: every core)
set -uo pipefail
build=${1:?usage: run.sh BUILD [TABLE]}
table=${2:-tests/bad_input/table.tsv}
timeout_s=${BAD_INPUT_TIMEOUT:-60}
[ -d "$build/bin" ] || { echo "bad-input: no $build/bin (build the programs first)" >&2; exit 2; }
[ -f "$table" ] || { echo "bad-input: no table $table" >&2; exit 2; }

if [ -n "${BAD_INPUT_GPU:-}" ]; then gpu=$BAD_INPUT_GPU
elif nvidia-smi -L >/dev/null 2>&1; then gpu=1
else gpu=0
fi
column=$((gpu ? 3 : 2))

# The programs run as copies (below), away from the repository they were built in:
# name the snapshot converter for their pickle cases explicitly.
export VRAMLAB_TORCH_CONVERTER=${VRAMLAB_TORCH_CONVERTER:-$(pwd)/scripts/torch-snapshot-to-csv}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Run copies: a rebuild of BUILD/bin while the table runs must not change what is tested.
mkdir -p "$scratch/bin"
cp -p "$build"/bin/* "$scratch/bin/" 2>/dev/null
bindir=$scratch/bin

# --- what each program is: its help, whether it takes --alloc, runs on sim -------------
declare -A help takes_alloc on_sim
programs=()
for bin in "$bindir"/*; do
    [ -x "$bin" ] && [ -f "$bin" ] || continue
    name=$(basename "$bin")
    if [ -n "${BAD_INPUT_ONLY:-}" ] && [[ ",$BAD_INPUT_ONLY," != *",$name,"* ]]; then continue; fi
    programs+=("$name")
    help[$name]=$(timeout "$timeout_s" "$bin" --help 2>/dev/null)
    [[ ${help[$name]} == *"--alloc SPEC"* ]] && takes_alloc[$name]=1 || takes_alloc[$name]=0
    # A program that needs a real GPU refuses --device sim as a usage error before any
    # work; one that runs on sim opens it and then fails to open the CSV (1), or stops
    # at its own missing input (2 with another reason): nothing runs either way.
    timeout "$timeout_s" "$bin" --device sim -o /nonexistent-dir/probe.csv </dev/null >/dev/null 2>"$scratch/probe"
    if grep -q "needs a real GPU" "$scratch/probe"; then on_sim[$name]=0; else on_sim[$name]=1; fi
done
[ ${#programs[@]} -gt 0 ] || { echo "bad-input: no programs in $build/bin" >&2; exit 2; }

# The program's own options of one help kind (N, SIZE, X, TEXT): "--name KIND  help".
options_of_kind() {
    sed -n '/^program options:/,/^$/p' <<<"${help[$1]}" | sed -n "s/^  --\([a-z0-9-]*\) $2 .*/\1/p"
}

selects() { # selector program
    local sel=$1 prog=$2
    if [[ $sel == *'!'* ]]; then
        [[ ",${sel#*!}," == *",$prog,"* ]] && return 1
        sel=${sel%%!*}
    fi
    case $sel in
    '*') return 0 ;;
    +alloc) [ "${takes_alloc[$prog]}" = 1 ] ;;
    +sim) [ "${on_sim[$prog]}" = 1 ] ;;
    +cuda) [ "${on_sim[$prog]}" = 0 ] ;;
    *) [[ ",$sel," == *",$prog,"* ]] ;;
    esac
}

cases=0 failures=0 skipped_rows=0
jobs_max=${BAD_INPUT_JOBS:-$(nproc)}
declare -A named_in_table
fail() { # prog args-string reason stderr-file; into the case's report
    printf 'FAIL %s %s\n     %s\n' "$1" "$2" "$3"
    if [ -s "$4" ]; then sed -n '1,6s/^/     | /p' "$4"; fi
}

# Cases run JOBS at a time; a failing one leaves scratch/fail.N (N: its number), printed
# in order at the end.
run_case() { # expected prog args...
    cases=$((cases + 1))
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    check_case "$@" >"$scratch/report.$cases" &
}

check_case() { # expected prog args...
    local expected=$1 prog=$2
    shift 2
    local dir shown rc lines
    dir=$(mktemp -d "$scratch/case.XXXX")
    local args=("${@//\{TMP\}/$dir}")
    shown=$(printf '%q ' "${args[@]}")
    cases=$((cases + 1))
    timeout -k 5 "$timeout_s" "$bindir/$prog" "${args[@]}" </dev/null >"$dir/stdout" 2>"$dir/stderr"
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        fail "$prog" "$shown" "hang: no exit within ${timeout_s}s (expected $expected)" "$dir/stderr"
    elif [ $rc -gt 128 ]; then
        fail "$prog" "$shown" "crash: killed by signal $((rc - 128)) (expected $expected)" "$dir/stderr"
    elif grep -qE 'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|SUMMARY: UndefinedBehaviorSanitizer' "$dir/stderr"; then
        fail "$prog" "$shown" "sanitizer report (exit $rc, expected $expected)" "$dir/stderr"
    elif [ "$rc" != "$expected" ]; then
        fail "$prog" "$shown" "exit status $rc, expected $expected" "$dir/stderr"
    elif [ "$expected" != 0 ]; then
        lines=$(grep -c '' "$dir/stderr")
        if [ "$lines" -ne 1 ] || ! grep -q '[^[:space:]]' "$dir/stderr"; then
            fail "$prog" "$shown" "exit $rc as expected, but $lines lines on stderr (expected one clear line)" "$dir/stderr"
        fi
    fi
    rm -rf "$dir"
}

lineno=0
while IFS= read -r row || [ -n "$row" ]; do
    lineno=$((lineno + 1))
    [[ -z ${row//[[:space:]]/} || $row == '#'* ]] && continue
    IFS=$'\t' read -r sel no_gpu on_gpu argtext <<<"$row"
    expected=$([ "$gpu" = 1 ] && echo "$on_gpu" || echo "$no_gpu")
    [ "$expected" = - ] && { skipped_rows=$((skipped_rows + 1)); continue; }
    if ! eval "row_args=($argtext)" 2>/dev/null; then
        echo "bad-input: $table:$lineno: cannot split the arguments: $argtext" >&2
        exit 2
    fi
    if [[ ${sel%%!*} != '*' && $sel != +* ]]; then
        for p in ${sel//,/ }; do named_in_table[$p]=1; done
    fi
    for prog in "${programs[@]}"; do
        selects "$sel" "$prog" || continue
        placeholder=$(grep -oE '\{(SIZE|INT|NUM)\}' <<<"$argtext" | head -n 1)
        if [ -z "$placeholder" ]; then
            run_case "$expected" "$prog" "${row_args[@]}"
            continue
        fi
        case $placeholder in
        '{SIZE}') kind=SIZE ;;
        '{INT}') kind=N ;;
        '{NUM}') kind=X ;;
        esac
        for opt in $(options_of_kind "$prog" "$kind"); do
            run_case "$expected" "$prog" "${row_args[@]//$placeholder/$opt}"
        done
    done
done <"$table"

wait
for ((n = 1; n <= cases; n++)); do
    [ -s "$scratch/report.$n" ] || continue
    failures=$((failures + 1))
    cat "$scratch/report.$n"
done

# A program the table names nowhere by name gets only the generic rows: say so, so
# that its owner adds the rows for its own options.
for prog in "${programs[@]}"; do
    if [ -z "${named_in_table[$prog]:-}" ] && [ -n "$(options_of_kind "$prog" '[A-Z]*')" ]; then
        echo "note: $prog has options of its own but no row of its own in $table"
    fi
done

echo "bad-input: $cases cases over ${#programs[@]} programs ($([ "$gpu" = 1 ] && echo 'GPU box' || echo 'no GPU')," \
    "$skipped_rows rows not for this machine), $failures failed"
[ $failures -eq 0 ]
