#!/usr/bin/env bash
# Runs libFuzzer targets: first every file of tests/corpus/NAME/ once (the seeds and the
# regression inputs of crashes found before), then explores for SECONDS per target with a
# scratch corpus under FUZZ_DIR/corpus/. Crashing inputs land in FUZZ_DIR/crashes/.
# Prints one summary line per target (inputs executed, coverage, corpus size) and exits
# 1 if any target failed.
#   usage: run.sh --seconds N FUZZ_DIR fuzz_NAME...
set -uo pipefail
usage() { echo "usage: $0 --seconds N FUZZ_DIR fuzz_NAME..." >&2; exit 2; }
[ "${1:-}" = --seconds ] && [ $# -ge 3 ] || usage
seconds=$2 dir=$3; shift 3
[ $# -gt 0 ] || { echo "fuzz: no targets (tests/fuzz/fuzz_*.c)" >&2; exit 2; }

mkdir -p "$dir/crashes" "$dir/logs"
failed=()
for target in "$@"; do
    name=${target#fuzz_}
    bin=$dir/bin/$target seeds=tests/corpus/$name work=$dir/corpus/$name log=$dir/logs/$target.log
    mkdir -p "$work"
    dict=(); [ -f tests/fuzz/$name.dict ] && dict=(-dict=tests/fuzz/$name.dict)
    corpora=("$work"); [ -d "$seeds" ] && corpora+=("$seeds")
    # Per-target libFuzzer flags (e.g. a shorter -max_len for a slow target), one per line.
    flags=(-max_len=4096); [ -f tests/fuzz/$name.options ] && mapfile -t flags <tests/fuzz/$name.options

    # Regression replay: each stored input as its own run, so a failure names its file.
    if [ -d "$seeds" ] && [ -n "$(ls -A "$seeds")" ]; then
        if ! find "$seeds" -type f -print0 | xargs -0 "$bin" -runs=1 >"$log.replay" 2>&1; then
            echo "fuzz $target: a stored input of $seeds fails; see $log.replay:" >&2
            grep -aE 'Running:|ERROR|runtime error|property violated|SUMMARY' "$log.replay" | tail -n 8 >&2
            failed+=("$target"); continue
        fi
    fi

    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 "${flags[@]}" -print_final_stats=1 \
        -artifact_prefix="$dir/crashes/$target-" "${dict[@]}" "${corpora[@]}" \
        >"$log" 2>&1
    status=$?
    runs=$(grep -a '^stat::number_of_executed_units:' "$log" | sed 's/.*: *//' | tail -n 1)
    cov=$(grep -aoE 'cov: [0-9]+' "$log" | tail -n 1)
    corpus=$(find "$work" -type f | wc -l)
    if [ $status -ne 0 ]; then
        echo "fuzz $target: FAILED after ${runs:-?} inputs (status $status); log $log, input in $dir/crashes/:" >&2
        grep -aE 'ERROR|runtime error|property violated|SUMMARY|Test unit written' "$log" | head -n 8 >&2
        failed+=("$target")
    else
        echo "fuzz $target: ok, ${runs:-?} inputs in ${seconds}s, ${cov:-cov: ?}, scratch corpus $corpus files"
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failing targets: ${failed[*]} (add the crashing input to tests/corpus/NAME/ once fixed)" >&2
    exit 1
fi
