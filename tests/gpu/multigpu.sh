#!/usr/bin/env bash
# GPU-box check of the four multi-GPU / multi-process scenarios:
# device0_pileup, ipc_hold, graph_pool (one GPU) and peer_access (two GPUs). Builds the
# programs, runs each --quick (ipc_hold and graph_pool with several --alloc), and checks
# with awk on the CSVs that every BAD variant shows its failure and every FIXED variant
# does not. One line per check: PASS / FAIL / SKIP and what was seen.
#   usage: OUT=dir tests/gpu/multigpu.sh   (CSVs and logs in OUT, default results/multigpu-check)
#   env:   CUDA_ARCH (default sm_90), BUILD (default build), NO_BUILD=1 (use what is built)
# Exit: 0 every check passed (checks that need 2 GPUs skip on one); 1 a check failed or
# a program failed; 77 no GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-results/multigpu-check}
build=${BUILD:-build}
arch=${CUDA_ARCH:-sm_90}
mkdir -p "$out"
MiB=1048576

nvidia-smi -L >/dev/null 2>&1 || { echo "multigpu: no GPU here (nvidia-smi lists none)"; exit 77; }
if [ "${NO_BUILD:-0}" != 1 ]; then
    echo "multigpu: building (CUDA_ARCH=$arch) ..."
    if ! make -j"$(nproc)" CUDA_ARCH="$arch" BUILD="$build" programs >"$out/build.log" 2>&1; then
        tail -30 "$out/build.log"; echo "multigpu: the build failed (log: $out/build.log)"; exit 1
    fi
fi
nvidia-smi -L >"$out/gpus.txt" 2>&1

passed=0 failed=0 skipped=0
declare -A rc_of
report() { # STATUS LABEL DETAIL
    printf '%-4s %-66s %s\n' "$1" "$2" "$3" | tee -a "$out/checks.txt"
    case $1 in PASS) passed=$((passed + 1)) ;; FAIL) failed=$((failed + 1)) ;; SKIP) skipped=$((skipped + 1)) ;; esac
}

# run TAG PROGRAM ARGS...: one --quick run into $out/TAG.csv; records its exit status.
run() {
    local tag=$1 prog=$2
    shift 2
    local t0=$SECONDS
    timeout 900 "$build/bin/$prog" --quick "$@" -o "$out/$tag.csv" >"$out/$tag.log" 2>&1
    rc_of[$tag]=$?
    echo "multigpu: $tag: exit ${rc_of[$tag]} ($((SECONDS - t0)) s)"
    case ${rc_of[$tag]} in
    0) report PASS "$tag: runs (exit 0)" "" ;;
    77) report SKIP "$tag: runs" "$(tail -1 "$out/$tag.log")" ;;
    *) report FAIL "$tag: runs (exit ${rc_of[$tag]})" "$(tail -1 "$out/$tag.log")" ;;
    esac
}

# check TAG LABEL AWK: the awk program sees each data row with c["column"] = field
# number and prints, in its END block, "PASS detail" or "FAIL detail".
check() {
    local tag=$1 label=$2 prog=$3 verdict
    if [ "${rc_of[$tag]:-x}" != 0 ]; then
        report SKIP "$tag: $label" "(the run did not succeed: exit ${rc_of[$tag]:-none})"
        return
    fi
    verdict=$(awk -F, '/^#/ { next } !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next } '"$prog" "$out/$tag.csv")
    report "${verdict%% *}" "$tag: $label" "${verdict#* }"
}

# --- device0_pileup: contexts of other GPUs' workers on GPU 0 -----------------------------------
run device0_pileup device0_pileup
check device0_pileup "bad (touch_before_set): > 100 MiB per foreign worker on GPU 0" '
    $c["variant"] == "touch_before_set" && $c["gpu"] == 0 && $c["foreign_workers"] > 0 {
        n++; v = $c["foreign_bytes_per_worker"] / '$MiB'; if (v <= 100) bad++; s = s sprintf(" %.0f", v) }
    END { if (n && !bad) print "PASS MiB/foreign worker:" s; else print "FAIL rows " n ", MiB/foreign worker:" s }'
for v in set_device_first visible_devices; do
    check device0_pileup "fixed ($v): < 100 MiB per foreign worker on GPU 0" '
    $c["variant"] == "'$v'" && $c["gpu"] == 0 && $c["foreign_workers"] > 0 {
        n++; v = $c["foreign_bytes_per_worker"] / '$MiB'; if (v >= 100) bad++; s = s sprintf(" %.0f", v) }
    END { if (n && !bad) print "PASS MiB/foreign worker:" s; else print "FAIL rows " n ", MiB/foreign worker:" s }'
done
check device0_pileup "every worker came up (status ok)" '
    { n++; if ($c["status"] != "ok") { bad++; s = s " " $c["variant"] "/" $c["workers"] ":" $c["error"] } }
    END { if (n && !bad) print "PASS " n " rows"; else print "FAIL" s }'

# --- ipc_hold: segment pinned by a consumer, the free-before-read race -------------------------
for spec in caching raw async caching:segments=expandable; do
    run "ipc_hold.${spec//[:=]/_}" ipc_hold --alloc "$spec"
done
t=ipc_hold.caching
check $t "bad (consumer_holds): memory held after free + trim > 0" '
    $c["section"] == "hold" && $c["variant"] == "consumer_holds" { n++; v = $c["held_while_shared_bytes"]; a = $c["allocation_bytes"] }
    END { if (n && v > 0) print "PASS held " v " B (allocation " a " B)"; else print "FAIL held " v " B, rows " n }'
check $t "fixed (consumer_closed): nothing held after free + trim (< 2 MiB)" '
    $c["section"] == "hold" && $c["variant"] == "consumer_closed" { n++; v = $c["held_while_shared_bytes"] }
    END { if (n && v < 2 * '$MiB') print "PASS held " v " B"; else print "FAIL held " v " B, rows " n }'
check $t "bad (race no_wait): corrupted elements > 0" '
    $c["section"] == "race" && $c["variant"] == "no_wait" { n++; e += $c["corrupted_elements"]; r += $c["reused_trials"]; tr += $c["trials"]; st = st " " $c["status"] }
    END { if (n && e > 0) print "PASS corrupted " e " over " tr " trials (reused " r ")"; else print "FAIL corrupted " e " over " tr " trials (reused " r ", status" st ")" }'
check $t "fixed (race ipc_event): no corrupted element" '
    $c["section"] == "race" && $c["variant"] == "ipc_event" { n++; e += $c["corrupted_elements"]; tr += $c["trials"]; if ($c["status"] != "ok") bad++; st = st " " $c["status"] }
    END { if (n && tr > 0 && e == 0 && !bad) print "PASS 0 corrupted over " tr " trials"; else print "FAIL corrupted " e " over " tr " trials (status" st ")" }'
check ipc_hold.caching_segments_expandable "expandable segments: legacy IPC recorded as not applicable" '
    $c["section"] == "hold" { n++; if ($c["status"] != "not_applicable") bad++; e = $c["error"] }
    END { if (n && !bad) print "PASS " e; else print "FAIL status not not_applicable on " bad " of " n " rows (" e ")" }'
check ipc_hold.async "async: pool export; importer_frees_first ok and nothing held" '
    $c["section"] == "pool" { s = s " " $c["variant"] "=" $c["status"] }
    $c["section"] == "pool" && $c["variant"] == "importer_frees_first" { n++; ok = $c["status"] == "ok" && $c["consumer_mismatches"] == 0 && $c["held_after_release_bytes"] < 2 * '$MiB' }
    END { if (n && ok) print "PASS" s; else print "FAIL" s }'
check ipc_hold.raw "raw: hold rows measured (info: bytes held while shared)" '
    $c["section"] == "hold" { n++; s = s " " $c["variant"] "=" $c["status"] ":" $c["held_while_shared_bytes"] }
    $c["section"] == "race" { s = s " race:" $c["variant"] "=" $c["corrupted_elements"] }
    END { if (n) print "PASS" s; else print "FAIL no hold rows" }'

# --- graph_pool: graph memory per shape, auto-free, allocator in capture ------------------------
for spec in caching async; do
    run "graph_pool.$spec" graph_pool --alloc "$spec"
done
t=graph_pool.caching
check $t "bad (graph_per_shape): graph memory grows with the graph count" '
    $c["section"] == "graph_mem" && $c["variant"] == "graph_per_shape" { n++; if (n == 1) f = $c["graph_reserved_bytes"]; l = $c["graph_reserved_bytes"]; s = s " " int($c["graph_reserved_bytes"] / '$MiB') }
    END { if (n > 1 && l > f) print "PASS reserved MiB:" s; else print "FAIL reserved MiB:" s }'
check $t "fixed (destroy_and_trim): graph memory does not grow" '
    $c["section"] == "graph_mem" && $c["variant"] == "destroy_and_trim" { n++; if (n == 1) f = $c["graph_reserved_bytes"]; l = $c["graph_reserved_bytes"]; s = s " " int($c["graph_reserved_bytes"] / '$MiB') }
    END { if (n > 1 && l <= f) print "PASS reserved MiB:" s; else print "FAIL reserved MiB:" s }'
check $t "fixed (one_graph_max): graph memory constant" '
    $c["section"] == "graph_mem" && $c["variant"] == "one_graph_max" { n++; v = $c["graph_reserved_bytes"]; if (n == 1 || v > mx) mx = v; if (n == 1 || v < mn) mn = v; s = s " " int(v / '$MiB') }
    END { if (n > 1 && mx == mn) print "PASS reserved MiB:" s; else print "FAIL reserved MiB:" s }'
check $t "auto_free: relaunch without free fails, AutoFreeOnLaunch works" '
    $c["section"] == "auto_free" { st[$c["variant"]] = $c["status"]; e[$c["variant"]] = $c["error"] }
    END { if (st["unfreed_relaunch"] == "error" && st["auto_free_on_launch"] == "ok") print "PASS relaunch: " e["unfreed_relaunch"];
          else print "FAIL unfreed_relaunch=" st["unfreed_relaunch"] " (" e["unfreed_relaunch"] ") auto_free_on_launch=" st["auto_free_on_launch"] }'
check $t "bad (free_in_capture): replay corrupts the reused block" '
    $c["section"] == "capture" && $c["variant"] == "free_in_capture" { n++; e = $c["corrupted_elements"]; r = $c["reused"]; st = $c["status"] " " $c["error"] }
    END { if (n && e > 0) print "PASS corrupted " e " (reused " r ")"; else print "FAIL corrupted " e " (reused " r ", " st ")" }'
check $t "fixed (private_block): no corruption, block held by the graph" '
    $c["section"] == "capture" && $c["variant"] == "private_block" { n++; e = $c["corrupted_elements"]; h = $c["held_bytes"]; st = $c["status"] }
    END { if (n && st == "ok" && e == 0) print "PASS held " h " B"; else print "FAIL corrupted " e " status " st }'
check graph_pool.async "async in capture (graph nodes): private_block not corrupted" '
    $c["section"] == "capture" { s = s " " $c["variant"] "=" $c["status"] ":" $c["corrupted_elements"] }
    $c["section"] == "capture" && $c["variant"] == "private_block" { n++; ok = $c["status"] == "ok" && $c["corrupted_elements"] == 0 }
    END { if (n && ok) print "PASS" s; else print "FAIL" s }'

# --- peer_access: two GPUs ------------------------------------------------------------------------
run peer_access peer_access
check peer_access "enabling peer access both ways succeeds (time, memory recorded)" '
    $c["section"] == "enable" { n++; if ($c["status"] != "ok") bad++; s = s sprintf(" %s: %.2f ms, +%d/+%d MiB;", $c["variant"], $c["enable_ms"], $c["used_delta_a_bytes"] / '$MiB', $c["used_delta_b_bytes"] / '$MiB') }
    END { if (n == 2 && !bad) print "PASS" s; else print "FAIL" s }'
check peer_access "bad (no_pool_access): the peer read fails, recorded" '
    $c["section"] == "pool" && $c["variant"] == "no_pool_access" { n++; fl = $c["access_flags"]; ce = $c["copy_error"]; ke = $c["kernel_error"]; st = $c["status"] }
    END { if (n && (ke != "cudaSuccess" || ce != "cudaSuccess")) print "PASS flags " fl ", copy " ce ", kernel " ke;
          else print "FAIL flags " fl ", copy " ce ", kernel " ke " (status " st ")" }'
check peer_access "fixed (pool_set_access): the peer reads the pool block" '
    $c["section"] == "pool" && $c["variant"] == "pool_set_access" { n++; ok = $c["status"] == "ok" && $c["kernel_error"] == "cudaSuccess" && $c["mismatches"] == 0; s = "flags " $c["access_flags"] ", copy " $c["copy_error"] ", kernel " $c["kernel_error"] " " $c["error"] }
    END { if (n && ok) print "PASS " s; else print "FAIL " s }'
check peer_access "copies: P2P and staged bandwidth recorded (info: largest size)" '
    $c["section"] == "copy" { n++; b[$c["variant"]] = $c["gbps"]; sz = $c["bytes"] }
    END { if (n) printf "PASS at %d MiB: p2p enabled %.1f GB/s, disabled %.1f, staged %.1f\n", sz / '$MiB', b["p2p_peer_enabled"], b["p2p_peer_disabled"], b["staged_pinned"]; else print "FAIL no copy rows" }'

echo "multigpu: $passed passed, $failed failed, $skipped skipped (CSVs, logs, checks.txt in $out)"
[ "$failed" -eq 0 ]
