#!/usr/bin/env bash
# Tests of scripts/peer-tables (make test-peer-tables, part of make test; no GPU, even
# on a GPU box):
#  - on a real repeated run of the simulated-device suite (bench.sh --quick --repeat 2):
#    the random_churn, fragmentation_churn and replay tables with vramlab's rows, an
#    absent program said so;
#  - on a synthetic copy with peer CSVs (alloc_latency of torch, random_churn of
#    rmm:pool with its "# alloc_version") and a skipped rmm:arena job in the manifest:
#    the peers' rows, median (min-max) over the repetitions, their versions and the
#    skip's reason;
#  - usage errors exit 2, a folder without these allocators exits 1.
set -u
cd "$(dirname "$0")/../.."
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
tables=scripts/peer-tables
# The table script is under test, not the GPU: bench.sh sees none, so a GPU box runs
# the simulated part only, as CI does (and the suite needs no turn alone on the GPU).
export CUDA_VISIBLE_DEVICES=

scripts/bench.sh --quick --repeat 2 --only random_churn,fragmentation_churn,replay --out "$tmp/sim" --no-plots \
    >"$tmp/bench.log" 2>&1 || { echo "FAIL: bench.sh on the simulated device"; tail "$tmp/bench.log"; exit 1; }

check "simulated repeated run" 0 $tables "$tmp/sim"
expect "simulated repeated run" '^### alloc_latency'
expect "simulated repeated run" '\(no CSVs of this program in the run\)'
expect "simulated repeated run" '^\| vramlab caching \(classic\) \(simulated\) \| 10,000 slots, 512 B–4 MiB \| [0-9,]+( \([0-9,]+–[0-9,]+\))? \| 1\.[0-9]{3}'
expect "simulated repeated run" '^\| vramlab caching \(expandable\) \(simulated\) \| kv_cache_concat \| 0\.9[0-9]+'
expect "simulated repeated run" '^\| vramlab caching \(expandable\) \(simulated\) \| `gpt2\.tiny\.csv` \| [0-9.]+'
expect "simulated repeated run" '2 repetition\(s\)'

# Synthetic peers: the simulated CSVs relabelled as a GPU run of a peer.
cp -r "$tmp/sim" "$tmp/syn"
for k in 1 2; do
    d=$tmp/syn/rep-$k
    sed -e 's/^# alloc: caching$/# alloc: rmm:pool\n# alloc_version: rmm 26.10.0/' -e 's/^# simulated: yes.*/# simulated: no/' \
        "$d/random_churn.caching.sim.csv" >"$d/random_churn.rmm_pool.csv"
    {
        printf '# alloc: torch\n# alloc_version: torch 2.11.0\n# simulated: no\n'
        printf 'size_bytes,alloc_median_ns,free_median_ns,ooms\n'
        printf '512,%d,40,0\n2097152,%d,41,0\n536870912,%d,42,0\n' $((400 + k * 10)) $((420 + k * 10)) $((440 + k * 10))
    } >"$d/alloc_latency.torch.csv"
    echo "random_churn,cuda,\"rmm:arena\",skipped,77,0.01,random_churn.rmm_arena.csv,\"random_churn: --alloc: peer 'rmm' is not available\"" \
        >>"$d/manifest.csv"
done
check "synthetic peers" 0 $tables "$tmp/syn"
expect "synthetic peers" '^\| allocator \| 512 B \| 2 MiB \| 512 MiB \|'
expect "synthetic peers" '^\| PyTorch default \| 415 \(410–420\) / 40 \| 435 \(430–440\) / 41 \| 455 \(450–460\) / 42 \|'
expect "synthetic peers" '^\| RMM pool \| 10,000 slots'
expect "synthetic peers" 'RMM pool: `--alloc rmm:pool`, rmm 26\.10\.0'
expect "synthetic peers" 'PyTorch default: `--alloc torch`, torch 2\.11\.0'
expect "synthetic peers" "not measured: random_churn \`rmm:arena\` on cuda: skipped: random_churn: --alloc: peer 'rmm' is not available"

check "no folder" 2 $tables
check "not a folder" 2 $tables "$tmp/none"
mkdir "$tmp/empty"
check "no CSVs" 1 $tables "$tmp/empty"

checks_report "peer-tables checks"
[ "$failures" = 0 ]
