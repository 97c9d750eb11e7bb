#!/usr/bin/env bash
# GPU-box matrix: every scenario and bench in BUILD/bin against every --alloc peer (and
# the in-tree allocators), --quick, one process each. Stores OUT/matrix.csv
#   program,alloc,status,exit,ms,reason
# status: ok (exit 0, a CSV with rows under its final name), skipped (exit 77, or a
# peer not built: the reason is the first stderr line), failed (any other exit), crash
# (killed by a signal, exit >= 128: the reason names the signal). Programs that take no
# --alloc run once with alloc '-'. Logs in OUT/logs/.
# PROGRAMS='a b' runs only those programs; RESUME=1 keeps OUT/matrix.csv and skips the
# (program, alloc) pairs it already holds, so a matrix longer than one GPU session's call
# is made in parts (the summary and the exit status cover every row of the file).
#   usage: [OUT=DIR] [BUILD=build] [SPECS='raw torch ...'] [PROGRAMS='...'] [RESUME=1] tests/gpu/peer_matrix.sh
# Exit: 0 no crash and no failure; 1 otherwise; 77 no GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-results/peer-matrix}
build=${BUILD:-build}
read -r -a specs <<<"${SPECS:-raw async caching caching:segments=expandable torch torch:expandable_segments=1 rmm:pool rmm:async rmm:arena rmm:binning}"
trace=tests/fixtures/traces/gpt2.tiny.csv
nvidia-smi -L >/dev/null 2>&1 || { echo "peer-matrix: no GPU here (nvidia-smi lists none)"; exit 77; }
[ -d "$build/bin" ] || { echo "peer-matrix: no $build/bin (make programs peers first)" >&2; exit 2; }
mkdir -p "$out/logs" "$out/csv"
if [ "${RESUME:-0}" = 1 ] && [ -s "$out/matrix.csv" ]; then
    echo "peer-matrix: resuming $out/matrix.csv ($(($(wc -l <"$out/matrix.csv") - 1)) rows kept)"
else
    echo "program,alloc,status,exit,ms,reason" >"$out/matrix.csv"
fi
for bin in "$build"/bin/*; do
    [ -x "$bin" ] && [ -f "$bin" ] || continue
    prog=$(basename "$bin")
    [ -z "${PROGRAMS:-}" ] || case " $PROGRAMS " in *" $prog "*) ;; *) continue ;; esac
    extra=()
    [ "$prog" = replay ] && extra=(--trace "$trace")
    if "$bin" --help 2>/dev/null | grep -q -- '--alloc SPEC'; then allocs=("${specs[@]}"); else allocs=(-); fi
    for a in "${allocs[@]}"; do
        grep -q "^$prog,$a," "$out/matrix.csv" && continue # RESUME: already measured
        tag=$prog.${a//[:=,]/_}
        args=(--quick "${extra[@]}" -o "$out/csv/$tag.csv")
        [ "$a" = - ] || args+=(--alloc "$a")
        start=$(date +%s%N)
        timeout 600 "$bin" "${args[@]}" >"$out/logs/$tag.out" 2>"$out/logs/$tag.err"
        rc=$?
        ms=$((($(date +%s%N) - start) / 1000000))
        reason=$(head -1 "$out/logs/$tag.err" | tr -d '\r' | tr ',"' ";'" | cut -c1-200)
        if [ $rc -eq 0 ] && grep -qv '^#' "$out/csv/$tag.csv" 2>/dev/null; then status=ok reason=
        elif [ $rc -eq 0 ]; then status=failed reason="exit 0 without a CSV of rows"
        elif [ $rc -eq 77 ] || grep -q "is not available" "$out/logs/$tag.err"; then status=skipped
        elif [ $rc -ge 128 ]; then status=crash reason="signal $((rc - 128)); ${reason}"
        elif [ $rc -eq 124 ]; then status=crash reason="timed out after 600 s; ${reason}"
        else status=failed
        fi
        printf '%s,%s,%s,%s,%s,"%s"\n' "$prog" "$a" "$status" "$rc" "$ms" "$reason" >>"$out/matrix.csv"
        printf '%-22s %-30s %-8s %s\n' "$prog" "$a" "$status" "$reason"
    done
done
echo "peer-matrix: $(grep -c ',ok,' "$out/matrix.csv") ok, $(grep -c ',skipped,' "$out/matrix.csv") skipped," \
    "$(grep -c ',failed,' "$out/matrix.csv") failed, $(grep -c ',crash,' "$out/matrix.csv") crashed: $out/matrix.csv"
[ "$(grep -c ',failed,\|,crash,' "$out/matrix.csv")" -eq 0 ]
