#!/usr/bin/env bash
# `make bench`: runs every program of the suite (scripts/suite.d/*.tsv) against every
# allocator it applies to, writes results/<run-id>/*.csv, a manifest and logs, renders
# the plots where gnuplot is installed, and ends with a summary table.
# Without a CUDA device it says so and runs the simulated-device part of the suite.
#
# Suite lines (tab-separated): program  devices  allocs  args  quick_args  [label]
#   devices: cuda | sim | "cuda sim";  allocs: SPECs, @all, or - (no --alloc);  args: - for none
#   label: names the line's CSVs (<program>.<label>.<alloc>...) when a program has several lines
# Usage: scripts/bench.sh [--quick] [--run-id ID] [--only PROGRAM]
set -u
cd "$(dirname "$0")/.."
quick=0 run_id= only=
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --run-id) run_id=${2:?--run-id needs a value}; shift ;;
    --only) only=${2:?--only needs a program}; shift ;;
    *) echo "bench.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
ALL_ALLOCS="raw async caching caching:segments=expandable"
bin=build/bin

# Is there a GPU? device_info exits 77 with one line when there is none.
info=$(mktemp); trap 'rm -f "$info"' EXIT
$bin/device_info -o "$info" 2>/tmp/vl-device-why
case $? in
0) have_gpu=1; gpu=$(sed -n 's/^# gpu: //p' "$info" | tr -c 'A-Za-z0-9\n' '-' | sed 's/--*/-/g; s/-$//') ;;
77) have_gpu=0; gpu=sim
    echo "bench: no CUDA device here ($(head -1 /tmp/vl-device-why)); running the simulated-device part of the suite only." ;;
*) echo "bench: device_info failed: $(cat /tmp/vl-device-why)" >&2; exit 1 ;;
esac
rev=${VL_GIT_REV:-$(git rev-parse --short=8 HEAD 2>/dev/null || echo norev)}
[ -n "$run_id" ] || run_id="$(date -u +%Y%m%dT%H%M%SZ)-$(hostname -s)-$gpu-$rev"
out=results/$run_id
mkdir -p "$out/logs"
[ "$have_gpu" = 1 ] && cp "$info" "$out/device_info.csv"
{
    echo "run_id: $run_id"; echo "git: ${VL_GIT_REV:-$(git describe --always --dirty 2>/dev/null)}"; echo "quick: $quick"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
} >"$out/env.txt" 2>&1

# Expand the suite into one job per (program, device, allocator).
jobs=()
for suite in scripts/suite.d/*.tsv; do
    [ -f "$suite" ] || continue
    while IFS=$'\t' read -r prog devices allocs args qargs label; do
        case $prog in ''|'#'*) continue ;; esac
        [ -n "$only" ] && [ "$prog" != "$only" ] && continue
        allocs=${allocs//@all/$ALL_ALLOCS} # @all may stand with other SPECs
        for dev in $devices; do
            [ "$dev" = cuda ] && [ "$have_gpu" = 0 ] && continue
            for alloc in $allocs; do
                jobs+=("$prog"$'\t'"$dev"$'\t'"$alloc"$'\t'"$args"$'\t'"$qargs"$'\t'"$label")
            done
        done
    done <"$suite"
done
total=${#jobs[@]}
[ "$total" -gt 0 ] || { echo "bench: the suite is empty" >&2; exit 1; }

manifest=$out/manifest.csv
declare -A count_ok count_skipped count_failed # per program, for the summary
echo "program,device,alloc,status,exit_code,seconds,csv" >"$manifest"
n=0 failed=0 start_all=$(date +%s.%N)
for job in "${jobs[@]}"; do
    IFS=$'\t' read -r prog dev alloc args qargs label <<<"$job"
    n=$((n + 1))
    tag=$(printf '%s' "$alloc" | tr ':,=/' '____')
    [ "$alloc" = - ] && tag=default
    [ "$dev" = sim ] && tag="$tag.sim"
    [ -n "$label" ] && tag="$label.$tag"
    csv=$out/$prog.$tag.csv
    cmd=("$bin/$prog" -o "$csv")
    [ "$alloc" != - ] && cmd+=(--alloc "$alloc")
    [ "$dev" = sim ] && cmd+=(--device sim)
    if [ "$quick" = 1 ]; then
        cmd+=(--quick)
        [ "$qargs" != - ] && [ -n "$qargs" ] && read -ra extra <<<"$qargs" && cmd+=("${extra[@]}")
    else
        [ "$args" != - ] && [ -n "$args" ] && read -ra extra <<<"$args" && cmd+=("${extra[@]}")
    fi
    printf '[%d/%d] %-34s %-30s %-4s ' "$n" "$total" "$prog${label:+ ($label)}" "$alloc" "$dev"
    t0=$(date +%s.%N)
    if [ -x "$bin/$prog" ]; then
        "${cmd[@]}" 2>"$out/logs/$prog.$tag.log"
        rc=$?
    else
        echo "not built: $bin/$prog" >"$out/logs/$prog.$tag.log"; rc=127
    fi
    secs=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
    case $rc in 0) status=ok ;; 77) status=skipped ;; *) status=failed; failed=$((failed + 1)) ;; esac
    : "${count_ok[$prog]:=0}" "${count_skipped[$prog]:=0}" "${count_failed[$prog]:=0}"
    case $status in
    ok) count_ok[$prog]=$((count_ok[$prog] + 1)) ;;
    skipped) count_skipped[$prog]=$((count_skipped[$prog] + 1)) ;;
    failed) count_failed[$prog]=$((count_failed[$prog] + 1)) ;;
    esac
    printf '%-7s %6.1fs\n' "$status" "$secs"
    [ "$status" = failed ] && sed 's/^/        /' "$out/logs/$prog.$tag.log" | tail -3
    echo "$prog,$dev,\"$alloc\",$status,$rc,$secs,$(basename "$csv")" >>"$manifest"
done
elapsed=$(awk -v a="$(date +%s.%N)" -v b="$start_all" 'BEGIN { printf "%.2f", a - b }')

if command -v gnuplot >/dev/null; then
    scripts/plots.sh "$run_id" || echo "bench: some plots failed (see above)"
else
    echo "bench: gnuplot is not installed here: render later with 'make plots RUN=$run_id' on a machine that has it."
fi

echo
echo "== summary: $out ($(printf '%.0f' "$elapsed") s) =="
printf '%-24s %4s %8s %7s\n' program ok skipped failed
for prog in $(printf '%s\n' "${!count_ok[@]}" | sort); do
    printf '%-24s %4d %8d %7d\n' "$prog" "${count_ok[$prog]}" "${count_skipped[$prog]}" "${count_failed[$prog]}"
done
echo "results: $out   manifest: $manifest"
[ "$failed" -eq 0 ]
