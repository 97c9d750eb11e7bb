#!/bin/bash
# GPU check of expandable segments against classic (run on an H100/H200 box):
#   1. builds with CUDA_ARCH=sm_90;
#   2. replays the recorded PyTorch traces (tests/fixtures/traces/*.tiny.csv, plus the
#      full-size results/traces/*.csv where the box has them) with classic and
#      expandable: ops/s of the cold first pass and the median of the warm passes, and
#      peak reserved / peak allocated. Target: expandable >= 1 M ops/s warm;
#   3. random_churn and free_stall with both (ns/op and waste; steps/s of the
#      allocate-launch-free loop);
#   4. `make test` (the GPU tests of caching: test_device_cuda, test_caching_*,
#      test_threads_caching, test_torch_plugin, test_backends_gpu run, not skip).
# Writes every CSV and log under $OUT (default results/expandable_speed.<UTC time>) and
# prints a short table last. Exit: 0 all ran and the tests passed, 1 a failure or a
# missed target, 77 no CUDA device.
# Usage: tests/gpu/expandable_speed.sh [--passes N] [--quick] [--device SPEC]
#   --device sim: a dry run of the script on a machine without a GPU (figures simulated)
set -u
cd "$(dirname "$0")/../.." || exit 1

passes=10
quick=0
device=cuda
while [ $# -gt 0 ]; do
    case $1 in
        --passes) passes=${2:?--passes N}; shift 2 ;;
        --quick) quick=1; passes=4; shift ;;
        --device) device=${2:?--device SPEC}; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "expandable_speed.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
case $passes in ''|*[!0-9]*) echo "expandable_speed.sh: --passes needs a number >= 2" >&2; exit 2 ;; esac
[ "$passes" -ge 2 ] || { echo "expandable_speed.sh: --passes needs a number >= 2" >&2; exit 2; }

OUT=${OUT:-results/expandable_speed.$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT/logs" || exit 1
bin=build/bin
classic=caching
expandable=caching:segments=expandable
target_ops=1000000

echo "expandable_speed: building (CUDA_ARCH=sm_90), output in $OUT"
if ! make -j"$(nproc)" CUDA_ARCH=sm_90 >"$OUT/logs/build.log" 2>&1; then
    tail -20 "$OUT/logs/build.log"
    echo "expandable_speed: build failed ($OUT/logs/build.log)"
    exit 1
fi
"$bin/device_info" --device "$device" -o "$OUT/device_info.csv" >"$OUT/logs/device_info.log" 2>&1
rc=$?
if [ "$rc" = 77 ]; then
    echo "expandable_speed: skipped: $(head -1 "$OUT/logs/device_info.log")"
    exit 77
fi
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1 || true

# col FILE NAME: the values of column NAME, one per data row (after '#' lines and the header).
col() {
    awk -F, -v name="$2" '/^#/ { next } !h { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next }
                          c { print $c }' "$1"
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

failed=0
table=$OUT/summary.csv
echo "what,alloc,metric,value,note" >"$table"
row() { echo "$1,$2,$3,$4,${5:-}" >>"$table"; }
tag_of() { [ "$1" = "$classic" ] && echo classic || echo expandable; }

# --- trace replays ---------------------------------------------------------------------
traces=(tests/fixtures/traces/*.tiny.csv)
for t in results/traces/gpt2.csv results/traces/transformer.csv results/traces/resnet50.csv; do
    [ "$quick" = 0 ] && [ -f "$t" ] && traces+=("$t")
done
for trace in "${traces[@]}"; do
    name=$(basename "$trace" .csv)
    for spec in "$classic" "$expandable"; do
        tag=$(tag_of "$spec")
        csv=$OUT/replay.$name.$tag.csv
        if ! "$bin/replay" --device "$device" --alloc "$spec" --trace "$trace" --passes "$passes" -o "$csv" \
            2>"$OUT/logs/replay.$name.$tag.log"; then
            echo "replay $name $tag failed ($OUT/logs/replay.$name.$tag.log)"
            failed=1
            continue
        fi
        cold=$(col "$csv" ops_per_s | head -1)
        warm=$(col "$csv" ops_per_s | tail -n +2 | median)
        waste=$(col "$csv" reserved_over_allocated | head -1)
        row "replay $name" "$tag" ops_per_s_cold "$cold"
        note=""
        if [ "$tag" = expandable ] && awk -v w="$warm" -v t="$target_ops" 'BEGIN { exit !(w < t) }'; then
            note="below the 1 M ops/s target"
            failed=1
        fi
        row "replay $name" "$tag" ops_per_s_warm_median "$warm" "$note"
        row "replay $name" "$tag" reserved_over_allocated "$waste"
    done
done

# --- random_churn and free_stall ---------------------------------------------------------------
quick_flag=()
[ "$quick" = 1 ] && quick_flag=(--quick)
for spec in "$classic" "$expandable"; do
    tag=$(tag_of "$spec")
    csv=$OUT/random_churn.$tag.csv
    if "$bin/random_churn" --device "$device" --alloc "$spec" "${quick_flag[@]}" -o "$csv" \
        2>"$OUT/logs/random_churn.$tag.log"; then
        row random_churn "$tag" ns_per_op "$(col "$csv" ns_per_op | head -1)"
        row random_churn "$tag" reserved_over_allocated "$(col "$csv" reserved_over_allocated | head -1)"
    else
        echo "random_churn $tag failed ($OUT/logs/random_churn.$tag.log)"
        failed=1
    fi
    csv=$OUT/free_stall.$tag.csv
    if [ "$device" != cuda ] && [ "${device#cuda:}" = "$device" ]; then
        row free_stall "$tag" skipped "" "needs a GPU"
        continue
    fi
    "$bin/free_stall" --device "$device" --alloc "$spec" "${quick_flag[@]}" -o "$csv" 2>"$OUT/logs/free_stall.$tag.log"
    rc=$?
    if [ "$rc" = 77 ]; then
        row free_stall "$tag" skipped "" "$(head -1 "$OUT/logs/free_stall.$tag.log" | tr , ' ')"
    elif [ "$rc" = 0 ]; then
        awk -F, '/^#/ { next } !h { for (i = 1; i <= NF; i++) { if ($i == "test") t = i; if ($i == "variant") v = i;
                 if ($i == "streams") s = i; if ($i == "steps_per_s") k = i } h = 1; next }
                 $t == "loop" { print $v " (" $s " streams)," $k }' "$csv" |
            while IFS=, read -r variant steps; do row "free_stall loop $variant" "$tag" steps_per_s "$steps"; done
    else
        echo "free_stall $tag failed ($OUT/logs/free_stall.$tag.log)"
        failed=1
    fi
done

# --- the GPU tests -------------------------------------------------------------------------------
if make test CUDA_ARCH=sm_90 >"$OUT/logs/make_test.log" 2>&1; then
    tests_status=passed
else
    tests_status=FAILED
    failed=1
fi
summary=$(grep -E '^tests: ' "$OUT/logs/make_test.log" | tail -1)
row "make test" - summary "$(echo "$summary" | tr , ';')" "$tests_status"
for t in test_device_cuda test_caching test_caching_expandable test_caching_release test_threads_caching \
    test_torch_plugin test_backends_gpu; do
    line=$(grep -E "^$t +[0-9]+ passed" "$OUT/logs/make_test.log" | head -1)
    [ -n "$line" ] || line="$t $(grep -E "^---- $t " "$OUT/logs/make_test.log" | head -1)"
    row "make test" - "$t" "$(echo "$line" | sed -E "s/^$t +//" | tr , ';')"
done

echo
echo "expandable_speed: results in $OUT (summary.csv, one CSV per run, logs/)"
column -s, -t <"$table" 2>/dev/null || cat "$table"
[ "$failed" = 0 ] && echo "expandable_speed: OK" || echo "expandable_speed: FAILED (see the notes above)"
exit "$failed"
