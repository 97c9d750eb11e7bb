#!/usr/bin/env bash
# Untrusted input and interrupted runs, on the programs of one build (no GPU):
#   outputs   -o naming an input (same path, hard link, symbolic link) is refused and
#             the input is unchanged; a CSV appears under its name only when complete
#   killed    SIGTERM/SIGINT mid-run leave no CSV and no temporary file; kill -9 leaves
#             only a hidden temporary name that no *.csv glob takes for a result; the
#             snapshot converter dies with replay
#   faults    injected device failures (sim:fail_*) end random_churn and replay with
#             exit 1 and the failure named
#   limits    a trace over the size limit is refused (exit 2, one line)
#   defects   retained_graph, fragmentation_churn and alloc_latency on sizes that leave
#             nothing to measure
#   plots     file and folder names holding quotes, spaces and gnuplot code plot and
#             run nothing (skipped, exit 77, without gnuplot)
# usage: run.sh BIN_DIR SECTION      exit 0 passed, 1 failed, 77 skipped
set -u
bin=$(cd "${1:?usage: run.sh BIN_DIR SECTION}" && pwd)
section=${2:?usage: run.sh BIN_DIR SECTION}
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$repo/tests/support/checks.sh"
trace=$repo/tests/bad_input/traces/valid.vramlab
# Every run is on the simulated device; no program sees a GPU either, as in CI.
export CUDA_VISIBLE_DEVICES=

one_line() { # description: $tmp/out holds exactly one line
    [ "$(wc -l <"$tmp/out")" -eq 1 ] || { echo "FAIL: $1: not one line:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1)); }
}

outputs() {
    cp "$trace" "$tmp/t.vramlab"
    sum=$(cksum <"$tmp/t.vramlab")
    ln "$tmp/t.vramlab" "$tmp/hard.csv"
    ln -s t.vramlab "$tmp/sym.csv"
    for o in "$tmp/t.vramlab" "$tmp/./t.vramlab" "$tmp/hard.csv" "$tmp/sym.csv"; do
        check "replay -o $o onto its input" 2 "$bin/replay" --device sim --quick --trace "$tmp/t.vramlab" -o "$o"
        expect "-o onto the input: why" "names the input"
        one_line "-o onto the input"
    done
    [ "$(cksum <"$tmp/t.vramlab")" = "$sum" ] || { echo "FAIL: the input changed"; failures=$((failures + 1)); }
    check "-o onto the program itself" 2 "$bin/random_churn" --device sim --alloc caching --quick -o "$bin/random_churn"
    expect "-o onto the program: why" "names this program"
    check "a plain -o still works" 0 "$bin/replay" --device sim --quick --trace "$tmp/t.vramlab" -o "$tmp/r.csv"
    grep -q '^pass,' "$tmp/r.csv" || { echo "FAIL: no result in r.csv"; failures=$((failures + 1)); }
    ls -A "$tmp" | grep -q '^\.' && { echo "FAIL: a temporary file is left: $(ls -A "$tmp")"; failures=$((failures + 1)); }
    check "-o into a missing folder" 1 "$bin/replay" --device sim --quick --trace "$tmp/t.vramlab" -o "$tmp/no/r.csv"
    one_line "-o into a missing folder"
}

# Starts a long replay on sim writing $tmp/k/r.csv, waits until it has begun writing
# (its temporary file exists), sends the signal, waits for it to end. A background job
# of a script starts with SIGINT ignored: env gives the program the default back.
kill_mid_run() {
    local sig=$1
    rm -rf "$tmp/k"; mkdir "$tmp/k"
    env --default-signal=INT "$bin/replay" --device sim --passes 1000 --trace "$tmp/long.vramlab" -o "$tmp/k/r.csv" 2>/dev/null &
    local pid=$! i
    for i in $(seq 200); do
        [ -n "$(ls -A "$tmp/k")" ] && break
        sleep 0.05
    done
    sleep 0.2
    kill "-$sig" "$pid"
    wait "$pid" 2>/dev/null
}

killed() {
    { echo "vramlab-trace 1"; for i in $(seq 20000); do echo "a $i 4096"; done; for i in $(seq 20000); do echo "f $i"; done; } >"$tmp/long.vramlab"
    for sig in TERM INT; do
        kill_mid_run $sig
        [ -z "$(ls -A "$tmp/k")" ] || { echo "FAIL: SIG$sig left: $(ls -A "$tmp/k")"; failures=$((failures + 1)); }
    done
    kill_mid_run KILL
    left=$(ls -A "$tmp/k")
    [ ! -e "$tmp/k/r.csv" ] || { echo "FAIL: kill -9 left a CSV under its final name"; failures=$((failures + 1)); }
    case $left in
    .r.csv.*) ;;
    *) echo "FAIL: kill -9 left '$left', not one hidden temporary name"; failures=$((failures + 1)) ;;
    esac
    (shopt -s nullglob; f=("$tmp"/k/*.csv); [ ${#f[@]} -eq 0 ]) || { echo "FAIL: *.csv matches the temporary file"; failures=$((failures + 1)); }
    # The converter of a pickle trace dies with replay, whatever kills replay.
    printf '#!/bin/sh\necho $$ >"%s"\nexec sleep 60\n' "$tmp/conv.pid" >"$tmp/slow-converter"
    chmod +x "$tmp/slow-converter"
    printf '\x80\x02}q\x00.' >"$tmp/t.pickle"
    for sig in TERM KILL; do
        rm -f "$tmp/conv.pid"
        VRAMLAB_TORCH_CONVERTER=$tmp/slow-converter "$bin/replay" --device sim --trace "$tmp/t.pickle" -o "$tmp/k/p.csv" 2>/dev/null &
        pid=$!
        for i in $(seq 100); do [ -s "$tmp/conv.pid" ] && break; sleep 0.05; done
        kill "-$sig" "$pid"; wait "$pid" 2>/dev/null
        conv=$(cat "$tmp/conv.pid" 2>/dev/null)
        for i in $(seq 40); do [ -n "$conv" ] && kill -0 "$conv" 2>/dev/null || break; sleep 0.05; done
        if [ -z "$conv" ] || kill -0 "$conv" 2>/dev/null; then
            echo "FAIL: SIG$sig to replay left its converter (pid '${conv:-?}') running"; failures=$((failures + 1))
            [ -n "$conv" ] && kill "$conv"
        fi
    done
    # Signals at random moments (seeded), from before the CSV is opened to mid-run: never
    # a CSV under its final name; TERM/INT leave nothing, KILL at most the hidden name.
    RANDOM=${VL_FUZZ_SEED:-7}
    local sigs=(TERM INT KILL) n
    for n in $(seq "${VL_FUZZ_KILLS:-8}"); do
        sig=${sigs[RANDOM % 3]} delay=0.$((RANDOM % 40))
        rm -rf "$tmp/k"; mkdir "$tmp/k"
        env --default-signal=INT "$bin/replay" --device sim --passes 1000 --trace "$tmp/long.vramlab" -o "$tmp/k/r.csv" 2>/dev/null &
        pid=$!
        sleep "$delay"
        kill "-$sig" "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        left=$(ls -A "$tmp/k")
        case $sig:$left in
        *:r.csv*) echo "FAIL: SIG$sig after ${delay}s left a CSV under its final name"; failures=$((failures + 1)) ;;
        KILL: | KILL:.r.csv.??????) ;;
        *:) ;;
        *) echo "FAIL: SIG$sig after ${delay}s left '$left'"; failures=$((failures + 1)) ;;
        esac
    done
}

faults() {
    for f in fail_free=1 fail_sync=1 fail_alloc=1; do
        check "random_churn sim:$f" 1 "$bin/random_churn" --device "sim:$f" --alloc caching --quick -o "$tmp/c.csv"
        expect "random_churn sim:$f: why" "injected failure.*results are not valid"
        check "replay sim:$f" 1 "$bin/replay" --device "sim:$f" --quick --trace "$trace" -o "$tmp/r.csv"
        expect "replay sim:$f: why" "injected failure.*results are not valid"
    done
}

limits() {
    check "a trace over VRAMLAB_TRACE_MAX_BYTES" 2 env VRAMLAB_TRACE_MAX_BYTES=16 "$bin/replay" --device sim --quick --trace "$trace" -o "$tmp/r.csv"
    expect "size limit: why" "larger than 16 bytes"
    one_line "size limit"
    check "the same from standard input" 2 env VRAMLAB_TRACE_MAX_BYTES=16 sh -c "\"$bin/replay\" --device sim --quick --trace - -o \"$tmp/r.csv\" <\"$trace\""
    expect "size limit, stdin: why" "larger than 16 bytes"
}

plots() {
    command -v gnuplot >/dev/null || { echo "SKIP: gnuplot is not installed"; exit 77; }
    # Fixed hostile names, and random ones from the characters that quote, substitute or
    # pipe in gnuplot and the shell (seeded).
    local names=("it's" 'a "b"' "sp ace" "x';system('touch $tmp/PWNED');'" 'x`touch PWNED2`' '<touch PWNED3' '$(touch PWNED4)')
    local chars=("'" '"' ' ' '`' '$' '(' ')' ';' '|' '<' '>' '&' '\\' '@' '#' '*' '?' 'a' 'Z' '-' '.')
    RANDOM=${VL_FUZZ_SEED:-7}
    for n in $(seq "${VL_FUZZ_NAMES:-4}"); do
        nm=r
        for k in $(seq 8); do nm+=${chars[RANDOM % ${#chars[@]}]}; done
        names+=("$nm")
    done
    for name in "${names[@]}"; do
        run="$tmp/runs/$name"
        mkdir -p "$run"
        for a in caching "caching:segments=expandable"; do
            "$bin/replay" --device sim --alloc "$a" --quick --trace "$trace" -o "$run/replay.$a.sim.csv" 2>/dev/null
        done
        (cd "$tmp" && "$repo/scripts/plots.sh" "$run") >"$tmp/out" 2>&1
        rc=$?
        [ $rc -eq 0 ] && [ -s "$run/plots/replay.png" ] || { echo "FAIL: plots.sh on '$name': exit $rc, no replay.png"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1)); }
        for m in "$tmp/PWNED" "$tmp/PWNED2" "$tmp/PWNED3" "$tmp/PWNED4" PWNED PWNED2 PWNED3 PWNED4; do
            [ ! -e "$m" ] || { echo "FAIL: plots.sh on '$name' ran a command ($m)"; failures=$((failures + 1)); rm -f "$m"; }
        done
    done
    # Every script, the ones that hand a name to a shell (awk, grep) included, on a CSV
    # whose name is shell and gnuplot code: whether it draws (it is the wrong program's
    # CSV) does not matter here, only that nothing runs.
    evil=$tmp/"x';system('touch \$PWN');'\$(touch \$PWN)\`touch \$PWN\`.csv"
    cp "$tmp/runs/it's/replay.caching.sim.csv" "$evil" || { echo "FAIL: cannot make $evil"; failures=$((failures + 1)); }
    for gp in "$repo"/plots/*.gp; do
        case $(basename "$gp") in common.gp | matrix.gp) continue ;; esac
        (cd "$repo" && PWN=$tmp/PWNED gnuplot -c "$gp" "$tmp/o.png" "$evil" "l';system('touch \$PWN')'") >/dev/null 2>&1
        [ ! -e "$tmp/PWNED" ] || { echo "FAIL: $(basename "$gp") ran a command from a name"; failures=$((failures + 1)); rm -f "$tmp/PWNED"; }
    done
    # scripts/matrix's heat map: file, output and title are arguments too.
    printf '%s\n' 'p,0,0,m1,c,0,baseline,=' 'p,0,1,m1,c,0.5,faster,+' >"$evil"
    (cd "$repo" && PWN=$tmp/PWNED gnuplot -c plots/matrix.gp "$evil" "$tmp/m'x.png" 1 2 1 "t';system('touch \$PWN')'" 8) >"$tmp/out" 2>&1
    [ -s "$tmp/m'x.png" ] && [ ! -e "$tmp/PWNED" ] || { echo "FAIL: matrix.gp with hostile names"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1)); }
}

defects() {
    # A working set that cannot hold one iteration says nothing about leaks.
    check "retained_graph --memory 1" 0 "$bin/retained_graph" --device sim --alloc caching --quick --memory 1 -o "$tmp/g.csv"
    grep -q '^summary,.*,fixed,.*,leak,' "$tmp/g.csv" && { echo "FAIL: retained_graph --memory 1 calls a fixed variant a leak"; failures=$((failures + 1)); }
    grep -q '^summary,.*,oom_in_warmup,' "$tmp/g.csv" || { echo "FAIL: retained_graph --memory 1: no oom_in_warmup verdict"; failures=$((failures + 1)); }
    check "retained_graph with room" 0 "$bin/retained_graph" --device sim:capacity=8GiB --alloc caching --quick -o "$tmp/g.csv"
    grep -q '^summary,.*,bad,.*,leak,' "$tmp/g.csv" || { echo "FAIL: retained_graph with room finds no leak"; failures=$((failures + 1)); }
    check "fragmentation_churn --memory 1" 2 "$bin/fragmentation_churn" --device sim --alloc caching --quick --memory 1 -o "$tmp/f.csv"
    expect "fragmentation_churn --memory 1: why" "too small"
    one_line "fragmentation_churn --memory 1"
    [ ! -e "$tmp/f.csv" ] || { echo "FAIL: fragmentation_churn left a CSV without rows"; failures=$((failures + 1)); }
    check "alloc_latency --min-size above --max-size" 2 "$bin/alloc_latency" --device sim --alloc caching --min-size 4GiB --max-size 1KiB -o "$tmp/a.csv"
    one_line "alloc_latency --min-size above --max-size"
    [ ! -e "$tmp/a.csv" ] || { echo "FAIL: alloc_latency left a CSV"; failures=$((failures + 1)); }
}

case $section in
outputs | killed | faults | limits | plots | defects) $section ;;
*) echo "run.sh: unknown section '$section'" >&2; exit 2 ;;
esac
[ "$failures" -eq 0 ] && echo "passed: $section" || echo "FAILED: $section ($failures)"
[ "$failures" -eq 0 ]
