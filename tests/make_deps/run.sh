#!/usr/bin/env bash
# Header dependencies (make test-make-deps, part of make test; no GPU): every object rule
# writes a .d and the Makefile reads every .d under BUILD, so a header-only change
# rebuilds each object that includes it, the broken-allocator's broken/*/core.o among
# them, and nothing else. A few objects are compiled into a scratch BUILD; make -n -W
# HEADER then pretends the header is new without touching it (no one else's rebuild).
set -u
cd "$(dirname "$0")/../.."
. tests/support/checks.sh # $tmp: a scratch folder, removed on exit
# Not the caller's make: its SAN, BUILD or jobserver would change what is built here.
unset MAKEFLAGS MAKELEVEL MFLAGS
b=$tmp/b
m=(make --no-print-directory BUILD="$b" CUDA_ARCH=sm_90)
caching=("$b/obj/lib/caching/core.o" "$b/obj/lib/caching/bins.o" "$b/broken/control/core.o" "$b/broken/split/core.o")
peer=$b/tests/peers/libvramlab_peer_torch.so # a .so compiled straight from its source
all=("${caching[@]}" "$peer")

# rebuilt DESCRIPTION WANT OUTPUT...: each OUTPUT's compile is (WANT=1) or is not (0) in $tmp/out.
rebuilt() {
    local what=$1 want=$2 o
    shift 2
    for o in "$@"; do
        if grep -qF -- "-o $o" "$tmp/out"; then
            [ "$want" = 1 ] && passes=$((passes + 1)) || { echo "FAIL: $what: $o rebuilt"; failures=$((failures + 1)); }
        else
            [ "$want" = 0 ] && passes=$((passes + 1)) || { echo "FAIL: $what: $o not rebuilt"; failures=$((failures + 1)); }
        fi
    done
}

check "scratch build" 0 "${m[@]}" "${all[@]}"
for o in "${caching[@]}"; do
    if grep -qF lib/caching/bins.h "${o%.o}.d" 2>/dev/null; then passes=$((passes + 1)); else
        echo "FAIL: ${o%.o}.d missing or without lib/caching/bins.h"; failures=$((failures + 1)); fi
done
if grep -qF lib/peers/peer_abi.h "$peer.d" 2>/dev/null; then passes=$((passes + 1)); else
    echo "FAIL: $peer.d missing or without lib/peers/peer_abi.h"; failures=$((failures + 1)); fi
check "up to date" 0 "${m[@]}" -n "${all[@]}"
rebuilt "nothing changed" 0 "${all[@]}"
check "bins.h changed" 0 "${m[@]}" -n -W lib/caching/bins.h "${all[@]}"
rebuilt "bins.h changed" 1 "${caching[@]}"
rebuilt "bins.h changed" 0 "$peer"
# A header none of them includes: no rebuild (the dependencies are the real ones).
check "trace.h changed" 0 "${m[@]}" -n -W lib/trace/trace.h "${all[@]}"
rebuilt "trace.h changed" 0 "${all[@]}"

checks_report test-make-deps
[ "$failures" = 0 ]
