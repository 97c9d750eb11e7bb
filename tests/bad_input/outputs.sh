#!/usr/bin/env bash
# The output cases the bad-input table cannot set up (it runs every case on an empty
# standard input and a fresh empty folder): -o onto the file standard input reads,
# --growth-log and -o as one file spelt two ways, -o at a FIFO and at a character
# device (written in place, still what they were), -o at a socket (refused). Needs no
# GPU; never writes the real /dev/null as root (a node made with mknod stands in).
#   usage: outputs.sh BUILD
set -uo pipefail
build=${1:?usage: outputs.sh BUILD}
replay=$build/bin/replay
info=$build/bin/device_info
for bin in "$replay" "$info"; do
    [ -x "$bin" ] || { echo "outputs: no $bin (build the programs first)" >&2; exit 2; }
done
trace=$(pwd)/tests/bad_input/traces/valid.vramlab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 checks=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# expect CASE STATUS CMD...: the exit status, and one line on stderr when it is not 0.
expect() {
    local name=$1 want=$2 rc lines
    shift 2
    checks=$((checks + 1))
    timeout -k 5 60 "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    lines=$(grep -c '' "$tmp/stderr")
    if [ "$rc" != "$want" ]; then
        fail "$name: exit $rc, expected $want: $(head -3 "$tmp/stderr" | tr '\n' '|')"
    elif [ "$want" != 0 ] && [ "$lines" != 1 ]; then
        fail "$name: $lines lines on stderr, expected 1: $(head -3 "$tmp/stderr" | tr '\n' '|')"
    fi
}

# --- -o and --growth-log onto standard input (--trace -): refused, the trace unchanged ---
cp "$trace" "$tmp/t.vramlab"
expect "-o onto stdin" 2 "$replay" --device sim --trace - -o "$tmp/t.vramlab" <"$tmp/t.vramlab"
cmp -s "$trace" "$tmp/t.vramlab" || fail "-o onto stdin: the trace was changed"
ln -s t.vramlab "$tmp/link.vramlab"
expect "-o onto stdin through a link" 2 "$replay" --device sim --trace - -o "$tmp/link.vramlab" <"$tmp/t.vramlab"
cmp -s "$trace" "$tmp/t.vramlab" || fail "-o onto stdin through a link: the trace was changed"
expect "--growth-log onto stdin" 2 "$replay" --device sim --trace - --growth-log "$tmp/t.vramlab" \
    -o "$tmp/out.csv" <"$tmp/t.vramlab"
cmp -s "$trace" "$tmp/t.vramlab" || fail "--growth-log onto stdin: the trace was changed"
[ -e "$tmp/out.csv" ] && fail "--growth-log onto stdin: a refused run left its -o file"
expect "--trace - with another -o" 0 "$replay" --device sim --quick --trace - -o "$tmp/out.csv" <"$tmp/t.vramlab"
rm -f "$tmp/out.csv"

# --- two outputs, one file: names that do not exist yet, spelt differently ---
mkdir "$tmp/run" "$tmp/run/sub"
for spelt in ./x.csv sub/../x.csv "$tmp/run/x.csv" .//x.csv; do
    expect "--growth-log $spelt -o x.csv" 2 \
        bash -c 'cd "$1/run" && exec "$2" --device sim --trace "$3" --growth-log "$4" -o x.csv' \
        _ "$tmp" "$(realpath "$replay")" "$trace" "$spelt"
done
[ "$(ls -A "$tmp/run")" = sub ] && [ -z "$(ls -A "$tmp/run/sub")" ] ||
    fail "a refused run with two outputs on one file left a file: $(ls -AR "$tmp/run" | tr '\n' ' ')"
expect "--growth-log with no -o, onto standard output's file" 2 \
    bash -c 'exec "$1" --device sim --trace "$2" --growth-log "$3" >"$3"' _ "$replay" "$trace" "$tmp/stdout.csv"
expect "--growth-log and -o apart" 0 "$replay" --device sim --quick --trace "$trace" \
    --growth-log "$tmp/run/g.csv" -o "$tmp/run/x.csv"

# --- -o at a FIFO: written in place, its reader gets the CSV, it stays a FIFO ---
mkfifo "$tmp/fifo"
fifo_case() { # NAME FIRST-LINE-OF-THE-TABLE CMD...
    local name=$1 row=$2 reader
    shift 2
    timeout 60 cat "$tmp/fifo" >"$tmp/from_fifo" &
    reader=$!
    expect "$name" 0 "$@"
    wait "$reader" || fail "$name: the reader got no end of file"
    grep -q "$row" "$tmp/from_fifo" || fail "$name: the reader got no '$row' line"
    [ -p "$tmp/fifo" ] || fail "$name: it is no longer a FIFO"
}
fifo_case "-o FIFO (device_info)" '^# vramlab: ' "$info" --device sim -o "$tmp/fifo"
fifo_case "-o FIFO (replay)" '^pass,' "$replay" --device sim --quick --trace "$trace" -o "$tmp/fifo"
rm -f "$tmp/fifo"

# --- -o at a character device: written in place, still the device, also through a link ---
if [ "$(id -u)" = 0 ]; then
    mknod -m 666 "$tmp/null" c 1 3 || fail "mknod $tmp/null"
    dev=$tmp/null
else
    echo "outputs: not root, so no mknod: -o /dev/null itself (it cannot be replaced by this user)"
    dev=/dev/null
fi
before=$(stat -c '%F %i %t:%T' "$dev")
expect "-o character device" 0 "$info" --device sim -o "$dev"
[ "$(stat -c '%F %i %t:%T' "$dev")" = "$before" ] || fail "-o character device: $dev is now $(stat -c %F "$dev")"
ln -s "$dev" "$tmp/null_link"
expect "-o link to a character device" 0 "$replay" --device sim --quick --trace "$trace" -o "$tmp/null_link"
[ -L "$tmp/null_link" ] || fail "-o link to a character device: the link was replaced"
[ "$(stat -c '%F %i %t:%T' "$dev")" = "$before" ] || fail "-o link to a character device: $dev changed"
ls -A "$tmp" | grep -q '^\.' && fail "a temporary file was left: $(ls -A "$tmp" | grep '^\.')"

# --- -o at a socket: refused with one line, the socket left ---
if python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/sock" 2>/dev/null; then
    expect "-o socket" 1 "$info" --device sim -o "$tmp/sock"
    grep -q 'it is a socket' "$tmp/stderr" || fail "-o socket: no reason: $(head -1 "$tmp/stderr")"
    [ -S "$tmp/sock" ] || fail "-o socket: it is no longer a socket"
else
    echo "outputs: no python3 to make a socket: -o socket not checked"
fi

echo "outputs: $((checks > failures ? checks - failures : 0)) passed, $failures failed, 0 skipped"
[ "$failures" -eq 0 ]
