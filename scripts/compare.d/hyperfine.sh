#!/usr/bin/env bash
# `make hyperfine`: whole-process wall time of the suite's programs (scripts/suite.d/*.tsv)
# per allocator, with hyperfine: warm-up runs, then --runs timed runs of each program's
# quick configuration (output to /dev/null; no shell between: -N). One hyperfine call per allocator writes
# results/<run-id>/hyperfine/hyperfine.<alloc-tag>.json (every run's time: what
# scripts/compare weighs differences against) and a flat CSV beside the other results,
# results/<run-id>/hyperfine.<alloc-tag>.csv (command,run,time_ms), for plots/hyperfine.gp.
# Programs that skip (exit 77, e.g. no GPU) are left out after one probe run.
# --repeat N: N rounds into results/<run-id>/rep-<k>/, each taking the allocators in
# another (rotated) order, so that a drift of the machine does not land on one of them;
# scripts/compare pools every timed run (each one a process) over the rounds.
# Each folder gets COMPLETE (written last, as scripts/bench.sh does) once its round
# succeeded; scripts/compare refuses a folder without it.
#
# Usage: hyperfine.sh [--run-id ID] [--runs N] [--warmup N] [--only PROG[,PROG...]] [--allocs "SPEC ..."] [--repeat N]
set -u
cd "$(dirname "$0")/../.."
run_id= runs=5 warmup=1 only= allocs_override= repeat=1
while [ $# -gt 0 ]; do
    case $1 in
    --run-id) run_id=${2:?}; shift ;;
    --runs) runs=${2:?}; shift ;;
    --warmup) warmup=${2:?}; shift ;;
    --only) only=${2:?}; shift ;;
    --allocs) allocs_override=${2:?}; shift ;;
    --repeat) repeat=${2:?}; shift ;;
    *) echo "hyperfine.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "hyperfine.sh: --repeat needs a positive count" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "hyperfine.sh: hyperfine is not installed (PATH=.deps/usr/bin:\$PATH after scripts/fetch-deps.sh)" >&2; exit 1; }
bin=build/bin
ALL_ALLOCS="raw async caching caching:segments=expandable"
[ -n "$run_id" ] || run_id="$(date -u +%Y%m%dT%H%M%SZ)-$(hostname -s)-hyperfine"
top=results/$run_id

# alloc SPEC -> list of "program<TAB>quick args" lines (cuda entries; sim ones with no GPU).
have_gpu=1
$bin/device_info -o /dev/null 2>/dev/null || have_gpu=0
declare -A per_alloc
for suite in scripts/suite.d/*.tsv; do
    [ -f "$suite" ] || continue
    while IFS=$'\t' read -r prog devices allocs args qargs; do
        case $prog in ''|'#'*) continue ;; esac
        if [ -n "$only" ] && [[ ",$only," != *",$prog,"* ]]; then continue; fi
        want=cuda; [ "$have_gpu" = 0 ] && want=sim
        [[ " $devices " == *" $want "* ]] || continue
        [ "$allocs" = "@all" ] && allocs=$ALL_ALLOCS
        [ -n "$allocs_override" ] && [ "$allocs" != - ] && allocs=$allocs_override
        [ "$qargs" = - ] && qargs=
        for alloc in $allocs; do
            per_alloc[$alloc]+="$prog"$'\x1f'"$qargs"$'\x1f'"$want"$'\n'
        done
    done <"$suite"
done

status=0
mapfile -t allocs < <(printf '%s\n' "${!per_alloc[@]}" | sort)
for ((k = 1; k <= repeat; k++)); do
    out=$top
    [ "$repeat" -gt 1 ] && out=$top/rep-$k
    mkdir -p "$out/hyperfine"
    jobs=0
    scripts/machine-state >"$out/machine.txt"
    for ((i = 0; i < ${#allocs[@]}; i++)); do
        alloc=${allocs[$(((i + k - 1) % ${#allocs[@]}))]}
        tag=$(printf '%s' "$alloc" | tr ':,=/' '__-_')
        [ "$alloc" = - ] && tag=default
        cmds=()
        while IFS=$'\x1f' read -r prog qargs dev; do
            [ -n "$prog" ] || continue
            cmd="$bin/$prog --quick -o /dev/null"
            [ "$alloc" != - ] && cmd+=" --alloc $alloc"
            [ "$dev" = sim ] && cmd+=" --device sim"
            [ -n "$qargs" ] && cmd+=" $qargs"
            # One probe run: programs that skip or fail here are not timed.
            $cmd >/dev/null 2>&1
            rc=$?
            if [ "$rc" -ne 0 ]; then
                echo "hyperfine: left out (exit $rc): $cmd"
                continue
            fi
            cmds+=("$cmd")
        done <<<"${per_alloc[$alloc]}"
        [ ${#cmds[@]} -gt 0 ] || continue
        json=$out/hyperfine/hyperfine.$tag.json
        echo "== hyperfine: --alloc $alloc (${#cmds[@]} programs)"
        hyperfine -N --warmup "$warmup" --runs "$runs" --style basic --export-json "$json" "${cmds[@]}" || status=1
        python3 scripts/compare.d/hyperfine_to_csv.py "$json" >"$out/hyperfine.$tag.csv" || status=1
        jobs=$((jobs + 1))
    done
    scripts/machine-state --end >>"$out/machine.txt"
    # The shared COMPLETE mark (scripts/bench.sh's convention), unless the folder already
    # has one (a bench run that the hyperfine files join) or a round failed.
    if [ "$status" = 0 ] && [ ! -e "$out/COMPLETE" ]; then
        echo "complete $(date -u +%Y-%m-%dT%H:%M:%SZ) jobs=$jobs" >"$out/COMPLETE.tmp" && mv "$out/COMPLETE.tmp" "$out/COMPLETE"
    fi
done
echo "hyperfine: results in $top ($repeat round(s)): hyperfine/*.json and hyperfine.*.csv"
exit $status
