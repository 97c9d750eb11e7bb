# Shell helpers of the script tests (tests/compare/run.sh, tests/peer_tables/run.sh):
# run a command and check its exit code and output, in $tmp (a scratch folder it makes
# and removes on exit, unless the test set one); each failed check prints why and counts in $failures, each passed
# one counts in $passes; checks_report NAME [SKIPPED] prints the counts as
# scripts/run-tests.sh reads them ("NAME: P passed, F failed, S skipped").
if [ -z "${tmp:-}" ]; then # a scratch folder, removed on exit, unless the test made its own
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
fi
failures=0 passes=0
checks_report() { echo "$1: $passes passed, $failures failed, ${2:-0} skipped"; }
check() { # description, expected exit code, command... ; output in $tmp/out
    local what=$1 want=$2
    shift 2
    "$@" >"$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $what: exit $rc, expected $want"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1))
    else
        passes=$((passes + 1))
    fi
}
expect() { # description, pattern that must appear in $tmp/out
    if grep -qE -- "$2" "$tmp/out"; then passes=$((passes + 1)); else
        echo "FAIL: $1: no '$2' in:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1))
    fi
}
reject() { # description, pattern that must not appear
    if ! grep -qE -- "$2" "$tmp/out"; then passes=$((passes + 1)); else
        echo "FAIL: $1: unexpected '$2' in:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1))
    fi
}
