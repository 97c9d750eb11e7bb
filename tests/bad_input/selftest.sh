#!/usr/bin/env bash
# Checks that run.sh catches what it is there to catch, with a fake program that
# misbehaves on purpose: a crash (signal), a hang, a sanitizer report, two lines on
# stderr, a wrong exit status; and that a well-behaved case passes. Run by
# `make bad-input` before the real table, so a broken runner cannot pass silently.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/build/bin"
cat >"$tmp/build/bin/fake" <<'FAKE'
#!/usr/bin/env bash
case "$1" in
--help) printf 'usage: fake [options]\n\nprogram options:\n  --size SIZE         a size (default 1)\n\n' ;;
--ok-usage) echo "fake: bad value (try --help)" >&2; exit 2 ;;
--crash) kill -SEGV $$ ;;
--hang) sleep 30 ;;
--asan) echo "==1==ERROR: AddressSanitizer: heap-use-after-free" >&2; exit 2 ;;
--two-lines) printf 'fake: one\nfake: two\n' >&2; exit 2 ;;
--size) echo "fake: --size $2 is fine" >&2; exit 1 ;;
*) exit 0 ;;
esac
FAKE
chmod +x "$tmp/build/bin/fake"
printf '%s\n' '# programs	no_gpu	gpu	args' \
    'fake	2	2	--ok-usage' \
    'fake	2	2	--crash' \
    'fake	2	2	--hang' \
    'fake	2	2	--asan' \
    'fake	2	2	--two-lines' \
    '*	2	2	--{SIZE} -1' >"$tmp/table.tsv"
BAD_INPUT_GPU=0 BAD_INPUT_TIMEOUT=2 "$here/run.sh" "$tmp/build" "$tmp/table.tsv" >"$tmp/out" 2>&1
status=$?
expect() {
    grep -qF -- "$1" "$tmp/out" || { echo "bad-input selftest: the runner missed: $1" >&2; cat "$tmp/out" >&2; exit 1; }
}
expect "crash: killed by signal 11"
expect "hang: no exit within 2s"
expect "sanitizer report"
expect "2 lines on stderr"
expect "exit status 1, expected 2"
expect "6 cases over 1 programs"
expect "5 failed"
[ $status -eq 1 ] || { echo "bad-input selftest: the runner exited $status with failures, not 1" >&2; exit 1; }
echo "bad-input selftest: the runner catches crashes, hangs, sanitizer reports, extra lines and wrong statuses"
