# The suite's lines (scripts/suite.d/*.tsv), read one way by scripts/bench.sh and
# scripts/compare.d/hyperfine.sh. Sourced; defines the allocator sets and functions only.
# A line (tab-separated): program  devices  allocs  args  quick_args  [label]; bench.sh's
# opening lines say what each column holds.

SUITE_ALL_ALLOCS="raw async caching caching:segments=expandable"
# pool: RMM's default first size, half the free memory, would be what it measures
SUITE_PEER_ALLOCS="torch torch:expandable_segments=1 rmm:pool,initial=256MiB rmm:async rmm:arena rmm:binning"

# suite_lines FILE...: one line per suite line, tab-separated: FILE:LINE, then its six
# columns (args and quick_args - where empty, the label empty where there is none).
# Comments and blank lines are left out. Tabs are IFS white space: a run of them is one
# separator, which is why an empty column is written -.
suite_lines() {
    local f n prog devices allocs args qargs label
    for f in "$@"; do
        n=0
        while IFS=$'\t' read -r prog devices allocs args qargs label || [ -n "$prog" ]; do
            n=$((n + 1))
            case $prog in ''|'#'*) continue ;; esac
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$f:$n" "$prog" "$devices" "$allocs" "${args:--}" "${qargs:--}" "$label"
        done <"$f"
    done
}

# suite_programs FILE...: the programs the suite names, sorted, one a line.
suite_programs() {
    suite_lines "$@" | cut -f2 | sort -u
}

# suite_check_only WHO ONLY FILE...: every program of ONLY (PROG[,PROG...]) is one of the
# suite's; else one line naming them all, and status 2.
suite_check_only() {
    local who=$1 only=$2 known p wanted
    shift 2
    known=$(suite_programs "$@")
    IFS=, read -ra wanted <<<"$only"
    [ ${#wanted[@]} -gt 0 ] || { echo "$who: --only: no program named (the suite's programs: $(echo $known | tr ' ' ','))" >&2; return 2; }
    for p in "${wanted[@]}"; do
        grep -qxF -- "$p" <<<"$known" ||
            { echo "$who: --only: unknown program '$p' (the suite's programs: $(echo $known | tr ' ' ','))" >&2; return 2; }
    done
}

# suite_fixtures: where the caller's args or qargs name a --trace FILE that is not here
# (the full traces that `make torch-traces` records), its shipped fixture
# (tests/fixtures/traces/NAME.tiny.csv) stands in, and the caller's label gets -fixture.
# The traces replaced go into the caller's array line_missing.
suite_fixtures() {
    local which t fixture
    line_missing=()
    for which in args qargs; do
        for t in $(grep -oE -- '--trace [^ ]+' <<<"${!which}" | cut -d' ' -f2); do
            [ -e "$t" ] && continue
            fixture=tests/fixtures/traces/$(basename "$t" .csv).tiny.csv
            [ -e "$fixture" ] || continue
            printf -v "$which" '%s' "${!which//$t/$fixture}"
            [[ $label == *-fixture ]] || label=${label:-trace}-fixture
            [[ " ${line_missing[*]} " == *" $t "* ]] || line_missing+=("$t")
        done
    done
}
