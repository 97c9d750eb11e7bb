# Shell helpers of the script tests (tests/compare/run.sh, tests/peer_tables/run.sh):
# run a command and check its exit code and output. Source it after setting $tmp (a
# scratch folder); each failed check prints why and counts in $failures.
failures=0
check() { # description, expected exit code, command... ; output in $tmp/out
    local what=$1 want=$2
    shift 2
    "$@" >"$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $what: exit $rc, expected $want"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1))
    fi
}
expect() { # description, pattern that must appear in $tmp/out
    grep -qE -- "$2" "$tmp/out" || { echo "FAIL: $1: no '$2' in:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1)); }
}
reject() { # description, pattern that must not appear
    ! grep -qE -- "$2" "$tmp/out" || { echo "FAIL: $1: unexpected '$2' in:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1)); }
}
