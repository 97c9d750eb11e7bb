# Shell helper of the scenario test scripts (tests/multigpu/run.sh, tests/failmodes/run.sh):
# the checks of a GPU program's frame that need no GPU. Source it after defining
# fail() (one failed check: prints why and counts it) and setting $tmp (a scratch
# folder).
#   frame_checks PROG BIN GPU   --help prints the usage and the program options (exit 0,
#                               nothing on stderr); a bad flag is one line and exit 2;
#                               with GPU=0, a --quick run prints one line naming the
#                               program and exits 77, writing nothing to stdout and no
#                               CSV.
frame_checks() {
    local prog=$1 bin=$2 gpu=$3 rc
    timeout 30 "$bin" --help >"$tmp/help" 2>"$tmp/err"
    rc=$?
    [ "$rc" = 0 ] || fail "$prog --help: exit $rc"
    grep -q "^usage: $prog " "$tmp/help" || fail "$prog --help: no usage line"
    grep -q "^program options:" "$tmp/help" || fail "$prog --help: no program options"
    [ -s "$tmp/err" ] && fail "$prog --help: wrote to stderr: $(head -1 "$tmp/err")"

    timeout 30 "$bin" --no-such-flag >/dev/null 2>"$tmp/err"
    rc=$?
    [ "$rc" = 2 ] || fail "$prog --no-such-flag: exit $rc, expected 2"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$prog --no-such-flag: $(wc -l <"$tmp/err") lines on stderr, expected 1"

    [ "$gpu" = 0 ] || return 0
    timeout 60 "$bin" --quick -o "$tmp/$prog.csv" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" = 77 ] || fail "$prog --quick without a GPU: exit $rc, expected 77"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$prog --quick without a GPU: $(wc -l <"$tmp/err") lines on stderr, expected 1: $(head -3 "$tmp/err" | tr '\n' '|')"
    grep -q "^$prog: " "$tmp/err" || fail "$prog: the skip line does not start with the program's name"
    [ -s "$tmp/out" ] && fail "$prog --quick -o FILE wrote to stdout"
    [ -e "$tmp/$prog.csv" ] && fail "$prog: a skipped run left a CSV"
    return 0
}
