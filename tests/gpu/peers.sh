#!/usr/bin/env bash
# GPU-box check of the peer backends (--alloc torch, --alloc rmm): builds vramlab and
# the peer shims (`make peers`; RMM comes from .deps/rmm, which scripts/fetch-deps.sh
# fills on a machine with network), runs alloc_latency, random_churn,
# fragmentation_churn and replay of one fixture trace (tests/fixtures/traces/) --quick
# with each peer, checks that each run succeeds and that the CSVs carry the peer's own
# reserved bytes (column reserved_bytes or peak_reserved_bytes non-empty on every row
# that has it, and more than 0 on some row), and prints a short table.
# CSVs and logs go to $OUT (default results/peers-check/). Takes under 4 minutes.
#   usage: [OUT=DIR] tests/gpu/peers.sh   env: CUDA_ARCH (default sm_90), PEER_SPECS (override)
# Exit: 0 all passed; 1 a run failed or skipped (peer missing) or a CSV lacks reserved
# bytes; 77 no GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-results/peers-check}
arch=${CUDA_ARCH:-sm_90}
mkdir -p "$out"
start=$SECONDS

nvidia-smi -L >/dev/null 2>&1 || { echo "peers: no GPU here (nvidia-smi lists none)"; exit 77; }
echo "peers: building (CUDA_ARCH=$arch) ..."
if ! { make -j"$(nproc)" CUDA_ARCH="$arch" programs && make -j2 CUDA_ARCH="$arch" peers; } >"$out/build.log" 2>&1; then
    tail -30 "$out/build.log"
    echo "peers: the build failed (log: $out/build.log)"
    exit 1
fi
grep -E '^peer-(torch|rmm): skipped' "$out/build.log"
build/bin/alloc_latency --alloc help | grep -A0 -E '^  (torch|rmm) |peer library' | tee "$out/alloc-help.txt"

read -r -a specs <<<"${PEER_SPECS:-torch torch:expandable_segments=1 rmm:pool rmm:async rmm:binning rmm:arena}"
# Each entry: the program and its own arguments (word-split).
programs=(alloc_latency random_churn fragmentation_churn "replay --trace tests/fixtures/traces/gpt2.tiny.csv")
# Where the peer keeps no reserved counter the field is rightly empty: RMM's arena.
no_reserved_expected() { [ "$1" = rmm:arena ]; }

# Prints "rows reserved most" for a CSV: data rows, how many carry reserved bytes, and
# the largest of them ("- -" when the CSV has no reserved column at all).
reserved_rows() {
    python3 - "$1" <<'PY'
import csv, sys
lines = [l for l in open(sys.argv[1]) if not l.startswith('#')]
rows = list(csv.DictReader(lines))
cols = [c for c in ('peak_reserved_bytes', 'reserved_bytes') if rows and c in rows[0]]
if not cols:
    print(len(rows), '-', '-')
else:
    values = [float(r[c]) for r in rows for c in cols if r[c] not in ('', None)]
    print(len(rows), sum(1 for r in rows if all(r[c] not in ('', None) for c in cols)), int(max(values, default=0)))
PY
}

failed=0
printf '%-34s %-20s %-8s %6s %9s %14s %7s\n' spec program status rows reserved peak_reserved seconds |
    tee "$out/table.txt"
for spec in "${specs[@]}"; do
    safe=${spec//[:=,]/_}
    for entry in "${programs[@]}"; do
        read -r -a args <<<"$entry"
        prog=${args[0]}
        csv=$out/$prog.$safe.csv
        t0=$SECONDS
        timeout 60 build/bin/"$prog" "${args[@]:1}" --quick --alloc "$spec" -o "$csv" >"$out/$prog.$safe.log" 2>&1
        rc=$?
        status=ok rows=- reserved=- most=-
        case $rc in
        0)
            read -r rows reserved most < <(reserved_rows "$csv")
            if [ "$reserved" != - ] && { [ "$reserved" != "$rows" ] || [ "$most" = 0 ]; } &&
                ! no_reserved_expected "$spec"; then
                status=no-resv; failed=1
            fi
            ;;
        77) status=skipped; failed=1 ;; # the peer is not built here: the log says how to get it
        *) status="exit$rc"; failed=1 ;;
        esac
        printf '%-34s %-20s %-8s %6s %9s %14s %7d\n' "$spec" "$prog" "$status" "$rows" "$reserved" "$most" \
            $((SECONDS - t0)) |
            tee -a "$out/table.txt"
        [ "$status" = ok ] || [ "$status" = skipped ] || tail -3 "$out/$prog.$safe.log"
        [ "$status" = skipped ] && head -1 "$out/$prog.$safe.log"
    done
done
echo "peers: CSVs and logs in $out ($((SECONDS - start)) s)"
[ "$failed" = 0 ] && echo "peers: passed" || echo "peers: FAILED"
exit "$failed"
