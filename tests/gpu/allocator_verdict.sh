#!/usr/bin/env bash
# The GPU half of the caching allocator's verdict (expandable defaults, parking), in
# parts that each fit one call of a time-limited GPU lease; a part whose folder holds
# COMPLETE is skipped, so the same command resumes.
#   pair    the cache-hit alloc+free pair with and without parking: scripts/ab, 12
#           pairs of alloc_latency --quick processes, alloc=caching:park=0 against
#           alloc=caching (pair_median_ns per size, with intervals), and the same for
#           expandable (about 1.5 minutes);
#   cold    cold replay of the zoo's recorded traces (COLD_TRACES_TAR, default
#           results/reference/h100-zoo-steps/zoo-traces.txz): ops/s of the first pass, vramlab expandable against
#           PyTorch's expandable segments (the torch peer, built by make peers), 3
#           rounds of one process each, interleaved (about 3 minutes); COLD_ROUNDS=N
#           rounds instead, COLD_TRACES=a,b only those traces, COLD_SPECS='SPEC SPEC'
#           these vramlab SPECs (blank-separated), each against PyTorch's;
#   fastpath the cache-hit alloc+free pair (alloc_latency --quick, pair_median_ns) one
#           allocator per process, FAST_ROUNDS (default 10) interleaved rounds, each
#           round a rep-K/ folder: vramlab classic and expandable called directly, the
#           same through the PyTorch plugin's ABI (--alloc plugin: the .so PyTorch loads),
#           c10's own allocator (--alloc torch), and both vramlab SPECs on the simulated
#           device in the same rounds (what the device path adds; about 2 minutes);
#           FAST_ARGS: alloc_latency's options (default --quick; a steadier sample:
#           '--max-size 2MiB --step 1024 --budget-ms 200', up to 300 batches a size at
#           512 B and 512 KiB; the summary covers every size measured);
#           FAST_BASE=DIR: a checkout of another revision, built there (make programs
#           plugin): its four vramlab configurations join the same rounds as base_NAME,
#           and the summary gives NAME / base_NAME paired by round;
#   test    make test, timed, from the current build state (the README's figure).
# The zoo's live verdict is make torch-bench itself (docs/torch-bench.md: RUN=, BUDGET=,
# RESUME=1), not repeated here.
#
#   tests/gpu/allocator_verdict.sh [pair|cold|fastpath|test ...]    (default: pair cold test)
#   OUT=dir (default results/allocator-verdict-<rev>)
# Exit 77 without a GPU; 1 when a part failed; 2 usage.
set -uo pipefail
cd "$(dirname "$0")/../.."
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(pair cold test)
for p in "${parts[@]}"; do
    case $p in pair | cold | fastpath | test) ;; *) echo "allocator_verdict: unknown part '$p' (pair, cold, fastpath, test)" >&2; exit 2 ;; esac
done
cold_rounds=${COLD_ROUNDS:-3} cold_traces=${COLD_TRACES:-}
read -r -a cold_specs <<<"${COLD_SPECS:-caching:segments=expandable}"
[ ${#cold_specs[@]} -gt 0 ] || { echo "allocator_verdict: COLD_SPECS names no SPEC" >&2; exit 2; }
for spec in "${cold_specs[@]}"; do
    [[ $spec == caching* ]] || { echo "allocator_verdict: COLD_SPECS: '$spec' is not a caching SPEC" >&2; exit 2; }
done
fast_rounds=${FAST_ROUNDS:-10} fast_base=${FAST_BASE:-}
if [ -n "$fast_base" ]; then
    [[ $fast_base != *[[:space:]]* ]] || { echo "allocator_verdict: FAST_BASE '$fast_base': a path without blanks, please" >&2; exit 2; }
    [ -x "$fast_base/build/bin/alloc_latency" ] && [ -f "$fast_base/build/lib/libvramlab_caching.so" ] ||
        { echo "allocator_verdict: FAST_BASE '$fast_base' has no build/bin/alloc_latency and build/lib/libvramlab_caching.so (make programs plugin there)" >&2; exit 2; }
fi
read -r -a fast_args <<<"${FAST_ARGS---quick}"
[[ $fast_rounds =~ ^[1-9][0-9]*$ ]] || { echo "allocator_verdict: FAST_ROUNDS must be a count, not '$fast_rounds'" >&2; exit 2; }
cold_tar=${COLD_TRACES_TAR:-results/reference/h100-zoo-steps/zoo-traces.txz}
[[ " ${parts[*]} " != *" cold "* ]] || [ -f "$cold_tar" ] || { echo "allocator_verdict: no trace archive '$cold_tar' (COLD_TRACES_TAR)" >&2; exit 2; }
[[ $cold_rounds =~ ^[1-9][0-9]*$ ]] || { echo "allocator_verdict: COLD_ROUNDS must be a count, not '$cold_rounds'" >&2; exit 2; }
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "allocator_verdict: no GPU (nvidia-smi -L failed): nothing measured" >&2
    exit 77
fi
# VL_GIT_REV first: a copied working tree may carry another checkout's .git
rev=${VL_GIT_REV:-$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)}
out=${OUT:-results/allocator-verdict-$rev}
mkdir -p "$out" || exit 2
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
status=0

part_pair() {
    local d=$out/pair
    mkdir -p "$d"
    make -s programs >"$d/build.log" 2>&1 || { tail -5 "$d/build.log"; return 1; }
    for spec in caching caching:segments=expandable; do
        local name=${spec//[:=,]/_} sep=:
        [[ $spec == *:* ]] && sep=,
        scripts/ab --pairs 12 --quick --only alloc_latency --out "$d/$name" \
            "alloc=$spec${sep}park=0" "alloc=$spec" >"$d/$name.log" 2>&1
        local rc=$?
        tail -1 "$d/$name.log"
        grep -E "pair_median_ns" "$d/$name.log" | head -20
        [ $rc -le 1 ] || return 1 # 1: a difference found, which is the point
    done
}

part_cold() {
    local d=$out/cold
    mkdir -p "$d/tr"
    tar -xJf "$cold_tar" -C "$d/tr" || return 1
    make -s programs peers >"$d/build.log" 2>&1 || { tail -5 "$d/build.log"; return 1; }
    local specs=("${cold_specs[@]}" torch:expandable_segments=1) order round t spec i
    {
        echo "# git_revision: $rev"
        echo "# traces: $cold_tar"
        echo "# gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
        echo "# driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
        echo "round,trace,alloc,pass,ops_per_s,reserved_over_allocated"
    } >"$d/cold.csv"
    for round in $(seq "$cold_rounds"); do
        order=("${specs[@]}")
        if [ $((round % 2)) = 0 ]; then # A B, then B A
            order=()
            for ((i = ${#specs[@]} - 1; i >= 0; i--)); do order+=("${specs[i]}"); done
        fi
        for t in "$d"/tr/*/*.trace; do
            [ -z "$cold_traces" ] || [[ ",$cold_traces," == *",$(basename "$t" .trace),"* ]] || continue
            for spec in "${order[@]}"; do run_cold "$d" "$round" "$t" "$spec"; done
        done
    done
    python3 - "$d/cold.csv" "$cold_rounds" "${cold_specs[@]}" <<'EOF' | tee "$d/summary.txt"
import sys
sys.path.insert(0, "scripts")  # the vramlab package
from vramlab import cold
rate = cold.first_pass_rates(sys.argv[1])
for spec in sys.argv[3:]:
    print(f"cold pass ops/s, median of {sys.argv[2]} processes: vramlab {spec} / PyTorch expandable segments;"
          " the Hodges-Lehmann ratio between processes with its 95% interval (none below 4 a side)")
    for t in sorted({k[0] for k in rate}):
        r = cold.ratio(rate, t, spec)
        if r:
            interval = f" [{r['lo']:.3f}, {r['hi']:.3f}]" if r["lo"] is not None else ""
            print(f"  {t}: {r['median']:,.0f} / {r['base_median']:,.0f} = {r['median'] / r['base_median']:.2f}; "
                  f"HL {r['estimate']:.3f}{interval}: {r['call']}")
        else:
            print(f"  {t}: missing ({'vramlab' if not rate.get((t, spec)) else 'torch'})")
EOF
}

# run_cold DIR ROUND TRACE SPEC: one replay process, its pass rows into DIR/cold.csv.
run_cold() {
    local d=$1 round=$2 t=$3 spec=$4 name
    name=$(basename "$t" .trace)
    if ! build/bin/replay --alloc "$spec" --trace "$t" --passes 2 -o "$d/r.csv" >"$d/r.log" 2>&1; then
        echo "allocator_verdict: replay $name under $spec failed: $(tail -1 "$d/r.log")" >&2
        return
    fi
    scripts/csv-columns "$d/r.csv" "$round,$name,\"$spec\"" pass ops_per_s reserved_over_allocated >>"$d/cold.csv"
}

# The fast path's configurations: NAME ENV ROOT ARGS... (ENV: VRAMLAB_ALLOC for the
# plugin, or -; ROOT: the checkout whose build/ runs it)
fast_configs=(
    "direct_classic - . --alloc caching"
    "direct_expandable - . --alloc caching:segments=expandable"
    "plugin_classic caching . --alloc plugin:build/lib/libvramlab_caching.so"
    "plugin_expandable caching:segments=expandable . --alloc plugin:build/lib/libvramlab_caching.so"
    "c10 - . --alloc torch"
    "sim_classic - . --alloc caching --device sim"
    "sim_expandable - . --alloc caching:segments=expandable --device sim"
)
if [ -n "$fast_base" ]; then # the same four through the other build; its plugin by path
    fast_configs+=(
        "base_direct_classic - $fast_base --alloc caching"
        "base_direct_expandable - $fast_base --alloc caching:segments=expandable"
        "base_plugin_classic caching $fast_base --alloc plugin:$fast_base/build/lib/libvramlab_caching.so"
        "base_plugin_expandable caching:segments=expandable $fast_base --alloc plugin:$fast_base/build/lib/libvramlab_caching.so"
    )
fi

part_fastpath() {
    local d=$out/fastpath round i n=${#fast_configs[@]} name env root args rep ok
    mkdir -p "$d"
    make -s programs plugin peer-torch >"$d/build.log" 2>&1 || { tail -5 "$d/build.log"; return 1; }
    for round in $(seq "$fast_rounds"); do
        rep=$d/rep-$round ok=1
        mkdir -p "$rep"
        build/bin/device_info -o "$rep/device_info.csv" >/dev/null 2>&1
        for ((i = 0; i < n; i++)); do # each round starts one configuration later
            read -r name env root args <<<"${fast_configs[(i + round) % n]}"
            # shellcheck disable=SC2086 # ARGS is a word list by design
            if [ "$env" = - ]; then
                "$root/build/bin/alloc_latency" "${fast_args[@]}" $args -o "$rep/alloc_latency.$name.csv" >"$rep/$name.log" 2>&1
            else
                VRAMLAB_ALLOC=$env "$root/build/bin/alloc_latency" "${fast_args[@]}" $args -o "$rep/alloc_latency.$name.csv" \
                    >"$rep/$name.log" 2>&1
            fi || { echo "allocator_verdict: fastpath round $round: $name failed: $(tail -1 "$rep/$name.log")" >&2; ok=0; }
            [ -s "$rep/$name.log" ] || rm -f "$rep/$name.log"
        done
        [ $ok = 1 ] || return 1
        echo "complete $(date -u +%FT%TZ) jobs=$n" >"$rep/COMPLETE"
    done
    scripts/vl fastpath "$d" | tee "$d/summary.txt"
}

part_test() {
    local d=$out/test t0
    mkdir -p "$d"
    t0=$(date +%s)
    make test >"$d/make-test.log" 2>&1
    local rc=$?
    echo "make test wall $(($(date +%s) - t0)) s, exit $rc" | tee -a "$d/make-test.log"
    tail -3 "$d/make-test.log"
    return $rc
}

for p in "${parts[@]}"; do
    [ -e "$out/$p/COMPLETE" ] && { echo "allocator_verdict: $p: done already ($out/$p/COMPLETE)"; continue; }
    echo "allocator_verdict: $p -> $out/$p"
    if "part_$p"; then
        echo "$rev $(date -u +%FT%TZ)" >"$out/$p/COMPLETE"
    else
        echo "allocator_verdict: $p failed" >&2
        status=1
    fi
done
exit $status
