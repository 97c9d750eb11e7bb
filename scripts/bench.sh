#!/usr/bin/env bash
# `make bench`: runs every program of the suite (scripts/suite.d/*.tsv) against every
# allocator it applies to, writes results/<run-id>/*.csv, a manifest and logs, renders
# the plots where gnuplot is installed, and ends with a summary table.
# Without a CUDA device it says so and runs the simulated-device part of the suite.
#
# One process is one sample: with --repeat N (make bench REPEAT=N) the whole suite runs
# N times as separate processes into results/<run-id>/rep-<k>/, each a complete results
# folder, and summary.csv gives every metric over the repetitions. Each repetition runs
# the jobs in another order (rotated, and reversed every other time), so a slow drift of
# the machine spreads over all programs instead of landing on the last ones.
#
# Suite lines (tab-separated): program  devices  allocs  args  quick_args  [label]
#   devices: cuda | sim | "cuda sim" | multi (cuda, using every GPU; skips itself with 77 on one)
#   allocs: SPECs, @all, @peers, or - (no --alloc);  args: - for none
#   (@all: vramlab's own and the CUDA allocators; @peers: PyTorch's and RMM's, each skipped
#   where its shim is not built)
#   label: names the line's CSVs (<program>.<label>.<alloc>...) when a program has several lines
# A job whose --trace FILE is not here (the full traces of results/traces/, which
# `make torch-traces` records) is skipped, as is one whose program exits 77 (no GPU, a
# peer not built); manifest.csv's note says why (the first line of the job's log).
# Usage: scripts/bench.sh [--quick] [--repeat N] [--run-id ID | --out DIR] [--only PROG[,PROG...]]
#                         [--alloc SPEC] [--bin DIR] [--no-plots]
#   --alloc SPEC  every line that takes an allocator runs with SPEC alone (sim lines only
#                 for caching SPECs); lines without --alloc run unchanged
#   --bin DIR     the programs of another build (scripts/ab compares two builds)
#   --out DIR     write into DIR instead of results/<run-id>
#   --device-info CSV  what device_info wrote earlier in this session (scripts/ab runs it
#                 once, not once per pass: a CUDA context costs each pass time)
#   --device SPEC every cuda line runs with --device SPEC (cuda:N: on GPU N); lines whose
#                 devices column is `multi` (programs that use several GPUs) are left out
#   --gpus all|N[,N...]  (make bench GPUS=...) the single-GPU suite once per GPU into
#                 <out>/gpu<N>/ (each a complete results folder, for scripts/compare
#                 <out>/gpu0 <out>/gpu1), then the `multi` lines once into <out>/multigpu/
set -u
cd "$(dirname "$0")/.."
quick=0 run_id= only= repeat=1 out= alloc_override= bin=build/bin plots=1 known_info= device_override= gpus= multi_only=0
args_in=("$@")
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --run-id) run_id=${2:?--run-id needs a value}; shift ;;
    --out) out=${2:?--out needs a folder}; shift ;;
    --only) only=${2:?--only needs a program}; shift ;;
    --repeat) repeat=${2:?--repeat needs a count}; shift ;;
    --alloc) alloc_override=${2:?--alloc needs a SPEC}; shift ;;
    --bin) bin=${2:?--bin needs a folder}; shift ;;
    --no-plots) plots=0 ;;
    --device-info) known_info=${2:?--device-info needs a file}; shift ;;
    --device) device_override=${2:?--device needs a SPEC}; shift ;;
    --gpus) gpus=${2:?--gpus needs all or a list of ordinals}; shift ;;
    --multi-only) multi_only=1 ;; # internal: the `multi` lines alone (the last step of --gpus)
    *) echo "bench.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: --repeat needs a positive count, not '$repeat'" >&2; exit 2; }
[ -x "$bin/device_info" ] || { echo "bench.sh: no programs in '$bin' (build them with make)" >&2; exit 2; }
[ -z "$gpus" ] || [[ $gpus =~ ^(all|[0-9]+(,[0-9]+)*)$ ]] || { echo "bench.sh: --gpus needs all or N[,N...], not '$gpus'" >&2; exit 2; }
[ -z "$gpus" ] || [ -z "$device_override" ] || { echo "bench.sh: --gpus and --device exclude each other" >&2; exit 2; }
ALL_ALLOCS="raw async caching caching:segments=expandable"
PEER_ALLOCS="torch torch:expandable_segments=1 rmm:pool,initial=256MiB rmm:async rmm:arena rmm:binning" # pool: RMM's default first size, half the free memory, would be what it measures

# Is there a GPU? device_info exits 77 with one line when there is none.
info=$(mktemp) why_file=$(mktemp); trap 'rm -f "$info" "$why_file"' EXIT
if [ -n "$known_info" ]; then
    cp "$known_info" "$info" 2>"$why_file" && grep -q '^# gpu: ' "$info"
    [ $? = 0 ] && di_status=0 || { di_status=77; echo "device_info: $known_info names no GPU" >"$why_file"; }
else
    $bin/device_info ${device_override:+--device "$device_override"} -o "$info" 2>"$why_file"
    di_status=$?
fi
case $di_status in
0) have_gpu=1; gpu=$(sed -n 's/^# gpu: //p' "$info" | tr -c 'A-Za-z0-9\n' '-' | sed 's/--*/-/g; s/-$//') ;;
77) have_gpu=0; gpu=sim
    echo "bench: no CUDA device here ($(head -1 "$why_file")); running the simulated-device part of the suite only." ;;
*) echo "bench: device_info failed: $(cat "$why_file")" >&2; exit 1 ;;
esac
rev=${VL_GIT_REV:-$(git rev-parse --short=8 HEAD 2>/dev/null || echo norev)}
[ -n "$run_id" ] || run_id="$(date -u +%Y%m%dT%H%M%SZ)-$(hostname -s)-$gpu-$rev"
[ -n "$out" ] || out=results/$run_id
run_id=$(basename "$out")
mkdir -p "$out"

# --gpus: this script again, once per GPU (with --device cuda:N, into gpu<N>/), then the
# lines that use several GPUs once. device_info answers 77 for an ordinal that is not there.
if [ -n "$gpus" ] && [ "$have_gpu" = 1 ]; then
    if [ "$gpus" = all ]; then
        list=()
        for ((g = 0; g < 64; g++)); do
            $bin/device_info --device "cuda:$g" -o /dev/null 2>/dev/null || break
            list+=("$g")
        done
    else
        IFS=, read -ra list <<<"$gpus"
    fi
    [ ${#list[@]} -gt 0 ] || { echo "bench: --gpus $gpus: no such GPU" >&2; exit 2; }
    pass=() skip_next=0
    for a in "${args_in[@]}"; do # the caller's options without --gpus/--out/--run-id
        if [ "$skip_next" = 1 ]; then skip_next=0; continue; fi
        case $a in --gpus|--out|--run-id) skip_next=1; continue ;; esac
        pass+=("$a")
    done
    status=0
    for g in "${list[@]}"; do
        echo "== bench: GPU $g -> $out/gpu$g"
        "$0" "${pass[@]}" --device "cuda:$g" --out "$out/gpu$g" || status=1
    done
    # The lines that use several GPUs, where the suite (and --only) has any.
    if awk -F'\t' -v only=",$only," '$1 !~ /^#/ && $2 ~ /multi/ && (only == ",," || index(only, "," $1 ",")) { f = 1 }
                                      END { exit !f }' scripts/suite.d/*.tsv; then
        echo "== bench: the multi-GPU lines -> $out/multigpu"
        "$0" "${pass[@]}" --multi-only --out "$out/multigpu" || status=1
    fi
    echo "bench: per-GPU results in $out/gpu{$(IFS=,; echo "${list[*]}")}; compare two with: scripts/compare $out/gpu${list[0]} $out/gpu${list[-1]}"
    exit $status
fi

# Expand the suite into one job per (program, device, allocator).
jobs=()
for suite in scripts/suite.d/*.tsv; do
    [ -f "$suite" ] || continue
    while IFS=$'\t' read -r prog devices allocs args qargs label; do
        case $prog in ''|'#'*) continue ;; esac
        if [ -n "$only" ] && [[ ",$only," != *",$prog,"* ]]; then continue; fi
        allocs=${allocs//@all/$ALL_ALLOCS} # @all and @peers may stand with other SPECs
        allocs=${allocs//@peers/$PEER_ALLOCS}
        [ -n "$alloc_override" ] && [ "$allocs" != - ] && allocs=$alloc_override
        for dev in $devices; do
            [ "$multi_only" = 1 ] && [ "$dev" != multi ] && continue
            [ "$dev" = multi ] && [ -n "$device_override" ] && continue
            [ "$dev" != sim ] && [ "$have_gpu" = 0 ] && continue
            [ "$dev" = sim ] && [ -n "$device_override" ] && continue
            [ "$dev" = sim ] && [ -n "$alloc_override" ] && [[ $alloc_override != caching* ]] && continue
            for alloc in $allocs; do
                jobs+=("$prog"$'\t'"$dev"$'\t'"$alloc"$'\t'"$args"$'\t'"$qargs"$'\t'"$label")
            done
        done
    done <"$suite"
done
# The same (program, device, SPEC, args) twice is one job: an --alloc override maps
# several SPECs of one line to one.
mapfile -t jobs < <(printf '%s\n' "${jobs[@]}" | awk '!seen[$0]++')
total=${#jobs[@]}
[ "$total" -gt 0 ] || { echo "bench: the suite is empty${only:+ for --only $only}" >&2; exit 1; }

declare -A count_ok count_skipped count_failed # per program, for the summary
failed=0

# missing_trace CMD...: the FILE of a --trace FILE that does not exist, or nothing.
missing_trace() {
    while [ $# -gt 1 ]; do
        [ "$1" = --trace ] && [ ! -e "$2" ] && { echo "$2"; return; }
        shift
    done
}

# run_pass DIR ROTATE REVERSE VERBOSE: every job once, into DIR (a complete results folder).
run_pass() {
    local dir=$1 rotate=$2 reverse=$3 verbose=$4
    local order=() i job prog dev alloc args qargs label tag csv cmd extra rc status secs t0 trace note n=0 pass_failed=0
    mkdir -p "$dir/logs"
    [ "$have_gpu" = 1 ] && cp "$info" "$dir/device_info.csv"
    {
        echo "run_id: $run_id"; echo "git: ${VL_GIT_REV:-$(git describe --always --dirty 2>/dev/null)}"; echo "quick: $quick"
        echo "machine state (clocks, temperature, load, other GPU processes): machine.txt"
    } >"$dir/env.txt" 2>&1
    scripts/machine-state >"$dir/machine.txt"
    for ((i = 0; i < total; i++)); do order+=("${jobs[$(((i + rotate) % total))]}"); done
    if [ "$reverse" = 1 ]; then
        local rev_order=()
        for ((i = total - 1; i >= 0; i--)); do rev_order+=("${order[$i]}"); done
        order=("${rev_order[@]}")
    fi
    local manifest=$dir/manifest.csv
    echo "program,device,alloc,status,exit_code,seconds,csv,note" >"$manifest"
    for job in "${order[@]}"; do
        IFS=$'\t' read -r prog dev alloc args qargs label <<<"$job"
        [ -n "$prog" ] || continue
        n=$((n + 1))
        tag=$(printf '%s' "$alloc" | tr ':,=/' '____')
        [ "$alloc" = - ] && tag=default
        [ "$dev" = sim ] && tag="$tag.sim"
        [ -n "$label" ] && tag="$label.$tag"
        csv=$dir/$prog.$tag.csv
        cmd=("$bin/$prog" -o "$csv")
        [ "$alloc" != - ] && cmd+=(--alloc "$alloc")
        [ "$dev" = sim ] && cmd+=(--device sim)
        [ "$dev" = cuda ] && [ -n "$device_override" ] && cmd+=(--device "$device_override")
        if [ "$quick" = 1 ]; then
            cmd+=(--quick)
            [ "$qargs" != - ] && [ -n "$qargs" ] && read -ra extra <<<"$qargs" && cmd+=("${extra[@]}")
        else
            [ "$args" != - ] && [ -n "$args" ] && read -ra extra <<<"$args" && cmd+=("${extra[@]}")
        fi
        [ "$verbose" = 1 ] && printf '[%d/%d] %-34s %-30s %-4s ' "$n" "$total" "$prog${label:+ ($label)}" "$alloc" "$dev"
        t0=$(date +%s.%N)
        trace=$(missing_trace "${cmd[@]}")
        if [ -n "$trace" ]; then
            echo "$prog: trace $trace is not here (make torch-traces records results/traces/) (skipped)" \
                >"$dir/logs/$prog.$tag.log"
            rc=77
        elif [ -x "$bin/$prog" ]; then
            "${cmd[@]}" 2>"$dir/logs/$prog.$tag.log"
            rc=$?
        else
            echo "not built: $bin/$prog" >"$dir/logs/$prog.$tag.log"; rc=127
        fi
        secs=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
        case $rc in 0) status=ok ;; 77) status=skipped ;; *) status=failed; pass_failed=$((pass_failed + 1)) ;; esac
        : "${count_ok[$prog]:=0}" "${count_skipped[$prog]:=0}" "${count_failed[$prog]:=0}"
        case $status in
        ok) count_ok[$prog]=$((count_ok[$prog] + 1)) ;;
        skipped) count_skipped[$prog]=$((count_skipped[$prog] + 1)) ;;
        failed) count_failed[$prog]=$((count_failed[$prog] + 1)) ;;
        esac
        [ "$verbose" = 1 ] && printf '%-7s %6.1fs\n' "$status" "$secs"
        if [ "$status" = failed ]; then
            [ "$verbose" = 1 ] || echo "        failed: $prog $alloc $dev (exit $rc)"
            sed 's/^/        /' "$dir/logs/$prog.$tag.log" | tail -3
        fi
        note=
        [ "$status" = ok ] || note=$(head -1 "$dir/logs/$prog.$tag.log" | tr '"' "'")
        echo "$prog,$dev,\"$alloc\",$status,$rc,$secs,$(basename "$csv"),\"$note\"" >>"$manifest"
    done
    scripts/machine-state --end >>"$dir/machine.txt"
    failed=$((failed + pass_failed))
}

start_all=$(date +%s.%N)
if [ "$repeat" = 1 ]; then
    run_pass "$out" 0 0 1
else
    echo "bench: $total jobs, $repeat repetitions into $out/rep-1 .. rep-$repeat"
    for ((k = 1; k <= repeat; k++)); do
        t_rep=$(date +%s.%N)
        run_pass "$out/rep-$k" $(((k - 1) * total / repeat)) $(((k + 1) % 2)) 0
        printf 'bench: repetition %d/%d done in %.0f s (%d failed so far)\n' "$k" "$repeat" \
            "$(awk -v a="$(date +%s.%N)" -v b="$t_rep" 'BEGIN { print a - b }')" "$failed"
    done
    python3 scripts/compare.d/summarize.py "$out" || echo "bench: the summary over repetitions failed" >&2
fi
elapsed=$(awk -v a="$(date +%s.%N)" -v b="$start_all" 'BEGIN { printf "%.2f", a - b }')

if [ "$plots" = 0 ]; then
    :
elif command -v gnuplot >/dev/null; then
    scripts/plots.sh "$out" || echo "bench: some plots failed (see above)"
else
    echo "bench: gnuplot is not installed here: render later with 'make plots RUN=$run_id' on a machine that has it."
fi

echo
echo "== summary: $out ($(printf '%.0f' "$elapsed") s, $repeat repetition(s)) =="
printf '%-24s %4s %8s %7s\n' program ok skipped failed
for prog in $(printf '%s\n' "${!count_ok[@]}" | sort); do
    printf '%-24s %4d %8d %7d\n' "$prog" "${count_ok[$prog]}" "${count_skipped[$prog]}" "${count_failed[$prog]}"
done
if [ "$repeat" = 1 ]; then
    echo "results: $out   manifest: $out/manifest.csv"
else
    echo "results: $out/rep-1 .. rep-$repeat   summary over repetitions: $out/summary.csv"
fi
[ "$failed" -eq 0 ]
