#!/usr/bin/env bash
# `make hyperfine`: whole-process wall time of the suite's programs (scripts/suite.d/*.tsv)
# per allocator, with hyperfine: warm-up runs, then --runs timed runs of each program's
# quick configuration (no shell between: -N; each writes its CSV into a scratch folder,
# deleted at the end). One hyperfine call per allocator writes
# results/<run-id>/hyperfine/hyperfine.<alloc-tag>.json (every run's time: what
# scripts/compare weighs differences against) and a flat CSV beside the other results,
# results/<run-id>/hyperfine.<alloc-tag>.csv (program,command,run,time_ms), for plots/hyperfine.gp.
# The suite's lines are read as scripts/bench.sh reads them (scripts/bench.d/suite.sh):
# a line's label (its sixth column) names its command in the JSON, <program>.<label>,
# as it names bench.sh's CSVs; an unlabelled line's command is the program's name.
# With a GPU the cuda lines are timed, without one the sim lines. Every suite line (of
# --only's programs) is timed or left out with the reason, and the run ends with the
# counts: lines of the other device, a probe run that exits non-zero (77: no GPU, a peer
# not built) with its exit code and first stderr line, the same command twice.
# --repeat N: N rounds into results/<run-id>/rep-<k>/, each taking the allocators in
# another (rotated) order, so that a drift of the machine does not land on one of them;
# scripts/compare pools every timed run (each one a process) over the rounds.
# Each folder gets COMPLETE (written last, as scripts/bench.sh does) once its round
# succeeded; scripts/compare refuses a folder without it. Run ids and the lock on a run
# folder follow scripts/bench.d/run-folder.sh (a run of bench.sh into it is refused).
#
# Usage: hyperfine.sh [--run-id ID] [--runs N] [--warmup N] [--only PROG[,PROG...]] [--allocs "SPEC ..."]
#                     [--repeat N] [--bin DIR]
#   --bin DIR  the programs of another build (default build/bin)
# Environment (for the tests): VL_RESULTS, the results root (default results).
set -u
cd "$(dirname "$0")/../.."
. scripts/bench.d/suite.sh
. scripts/bench.d/run-folder.sh
results=${VL_RESULTS:-results}
run_id= named=0 runs=5 warmup=1 only= allocs_override= repeat=1 bin=build/bin
while [ $# -gt 0 ]; do
    case $1 in
    --run-id) [ $# -ge 2 ] || { echo "hyperfine.sh: --run-id needs a value" >&2; exit 2; }; run_id=$2 named=1; shift ;;
    --runs) runs=${2:?}; shift ;;
    --warmup) warmup=${2:?}; shift ;;
    --only) only=${2:?}; shift ;;
    --allocs) allocs_override=${2:?}; shift ;;
    --repeat) repeat=${2:?}; shift ;;
    --bin) bin=${2:?}; shift ;;
    *) echo "hyperfine.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "hyperfine.sh: --repeat needs a positive count" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "hyperfine.sh: --runs needs a positive count" >&2; exit 2; }
[[ $warmup =~ ^[0-9]+$ ]] || { echo "hyperfine.sh: --warmup needs a count" >&2; exit 2; }
[ "$named" = 0 ] || run_id_ok "$run_id" ||
    { echo "hyperfine.sh: --run-id '$run_id': a run id is one folder name of letters, digits and . _ - (not starting with a dot)" >&2; exit 2; }
suites=(scripts/suite.d/*.tsv)
[ -z "$only" ] || suite_check_only hyperfine.sh "$only" "${suites[@]}" || exit 2
command -v hyperfine >/dev/null || { echo "hyperfine.sh: hyperfine is not installed (PATH=.deps/usr/bin:\$PATH after scripts/fetch-deps.sh)" >&2; exit 1; }
[ -x "$bin/device_info" ] || { echo "hyperfine.sh: no programs in '$bin' (build them with make)" >&2; exit 2; }
[ -n "$run_id" ] || run_id="$(date -u +%Y%m%dT%H%M%SZ)-$(hostname -s)-hyperfine"
top=$results/$run_id
if run_in_reference "$top" "$results"; then
    echo "hyperfine.sh: $top is in $results/reference/, the stored runs the docs cite: give another run id" >&2; exit 2
fi
# The programs' CSVs: written, as in a bench run, then thrown away.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# A folder of ours (or a new one) is locked for the run; an older run's folder without a
# mark is joined as it is.
if [ ! -e "$top" ]; then
    mkdir -p "$top" || exit 1
fi
if [ -e "$top/$RUN_MARK" ] || [ -z "$(ls -A "$top")" ]; then
    run_lock "$top" || { [ "$?" = 1 ] && echo "hyperfine.sh: $top is being written by another run (pid $run_holder): wait for it to end, or give another run id" >&2; exit 2; }
    run_mark "$top"
fi

have_gpu=1 want=cuda
$bin/device_info -o "$scratch/device_info.csv" 2>/dev/null || have_gpu=0 want=sim

# Jobs: one per (suite line, allocator), "where<US>name<US>prog<US>qargs" in per_alloc;
# a job replaying a fixture last, so that the line replaying it already is the one timed.
# left_out["where<TAB>name<TAB>alloc"]: why the job was not timed (in some round).
US=$'\x1f'
declare -A per_alloc per_alloc_fixture left_out
order=()
selected=0
while IFS=$'\t' read -r where prog devices allocs args qargs label; do
    if [ -n "$only" ] && [[ ",$only," != *",$prog,"* ]]; then continue; fi
    allocs=${allocs//@all/$SUITE_ALL_ALLOCS}
    allocs=${allocs//@peers/$SUITE_PEER_ALLOCS}
    [ "$allocs" = -peer ] && allocs=-
    [ -n "$allocs_override" ] && [ "$allocs" != - ] && allocs=$allocs_override
    suite_fixtures
    [ "$qargs" = - ] && qargs=
    name=$prog${label:+.$label}
    for alloc in $allocs; do
        selected=$((selected + 1))
        if [[ " ${devices//:full/} " != *" $want "* ]]; then
            left_out["$where"$'\t'"$name"$'\t'"$alloc"]="devices '$devices': $([ "$have_gpu" = 1 ] && echo "the cuda lines are timed here" || echo "no GPU here: the sim lines are timed")"
            continue
        fi
        [[ " ${order[*]} " == *" $alloc "* ]] || order+=("$alloc")
        if [[ $label == *-fixture ]]; then
            per_alloc_fixture[$alloc]+="$where$US$name$US$prog$US$qargs"$'\n'
        else
            per_alloc[$alloc]+="$where$US$name$US$prog$US$qargs"$'\n'
        fi
    done
done < <(suite_lines "${suites[@]}")
mapfile -t allocs < <(printf '%s\n' "${order[@]}" | sort)
[ ${#order[@]} -gt 0 ] || allocs=()

# The file-name tag of an allocator SPEC, as scripts/bench.sh's: ':,=/' as _; and, for
# a SPEC of --allocs, anything else outside [A-Za-z0-9._-] as _ and no leading dot.
alloc_tag() {
    [ "$1" = - ] && { echo default; return; }
    printf '%s' "$1" | tr ':,=/' '____' | sed 's/[^A-Za-z0-9._-]/_/g; s/^\./_/'
}

status=0
for ((k = 1; k <= repeat; k++)); do
    out=$top
    [ "$repeat" -gt 1 ] && out=$top/rep-$k
    mkdir -p "$out/hyperfine"
    jobs=0
    scripts/machine-state >"$out/machine.txt"
    for ((i = 0; i < ${#allocs[@]}; i++)); do
        alloc=${allocs[$(((i + k - 1) % ${#allocs[@]}))]}
        tag=$(alloc_tag "$alloc")
        hf=() names=() timing=()
        unset seen_cmd seen_name
        declare -A seen_cmd=() seen_name=()
        while IFS=$US read -r where name prog qargs; do
            [ -n "$prog" ] || continue
            job=$where$'\t'$name$'\t'$alloc
            argv=("$bin/$prog" --quick -o "$scratch/$name.$tag.csv")
            [ "$alloc" != - ] && argv+=(--alloc "$alloc")
            [ "$want" = sim ] && argv+=(--device sim)
            [ -n "$qargs" ] && { read -ra extra <<<"$qargs"; argv+=("${extra[@]}"); }
            key="$prog ${argv[*]:4}" # the command but its scratch CSV
            if [ -n "${seen_cmd[$key]:-}" ]; then
                left_out[$job]="the same command as ${seen_cmd[$key]}"; continue
            fi
            if [ -n "${seen_name[$name]:-}" ]; then
                left_out[$job]="named $name as ${seen_name[$name]} is: label one of the two lines"; continue
            fi
            # One probe run: programs that skip or fail here are not timed.
            "${argv[@]}" >/dev/null 2>"$scratch/probe.err"
            rc=$?
            if [ "$rc" -ne 0 ]; then
                left_out[$job]="exit $rc: $(head -1 "$scratch/probe.err")"
                echo "hyperfine: left out: $name --alloc $alloc ($where): ${left_out[$job]}"
                continue
            fi
            seen_cmd[$key]=$where seen_name[$name]=$where
            printf -v cmd '%q ' "${argv[@]}"
            hf+=(--command-name "$name" "${cmd% }")
            names+=("$name") timing+=("$job")
        done <<<"${per_alloc[$alloc]:-}${per_alloc_fixture[$alloc]:-}"
        [ ${#names[@]} -gt 0 ] || continue
        json=$out/hyperfine/hyperfine.$tag.json
        echo "== hyperfine: --alloc $alloc (${#names[@]} programs)"
        hyperfine -N --warmup "$warmup" --runs "$runs" --style basic --export-json "$json" "${hf[@]}"
        rc=$?
        if [ "$rc" != 0 ]; then
            status=1
            for job in "${timing[@]}"; do left_out[$job]="hyperfine failed (exit $rc; a timed run failed?)"; done
        fi
        python3 scripts/vl compare.hyperfine_to_csv "$json" >"$out/hyperfine.$tag.csv" || status=1
        rm -f "$scratch"/*.csv
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
# Every job (suite line x allocator) is timed or left out: the counts, then the reasons,
# one line per suite line and reason, its allocators together.
echo "hyperfine: timed $((selected - ${#left_out[@]})), left out ${#left_out[@]} (jobs: a suite line under one allocator$([ "$repeat" -gt 1 ] && echo "; timed: in every round"))"
for job in "${!left_out[@]}"; do printf '%s\t%s\n' "$job" "${left_out[$job]}"; done | sort -t$'\t' -k1,1V -k2,2 -k4,4 -k3,3 |
    awk -F'\t' '{ k = $1 FS $2 FS $4 }
        k != last { if (NR > 1) print line ": " why; line = "  left out: " $2 " (" $1 ") under " $3; why = $4; last = k; next }
        { line = line " " $3 }
        END { if (NR) print line ": " why }'
exit $status
