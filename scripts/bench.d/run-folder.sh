# Run ids and run folders (results/<run-id>/), one set of rules for scripts/bench.sh and
# scripts/compare.d/hyperfine.sh. Sourced; defines functions only.
#  - A run id is one folder name: letters, digits and . _ -, not starting with a dot.
#  - results/reference/ (the stored runs the docs cite) never holds a run being written.
#  - A folder that bench.sh or hyperfine.sh made holds .vramlab-run (its run id, when it
#    was made, the pid writing it). --force clears only such a folder: anything else may
#    be another tool's or an older run's, and is for its owner to delete.
#  - The process writing a run folder holds a lock (flock) on its .vramlab-run, so that
#    two runs into one folder never interleave: the second is refused, with the pid.

RUN_MARK=.vramlab-run

# run_id_ok ID: ID names one folder (no /, no .., no hidden folder).
run_id_ok() {
    [[ $1 =~ ^[A-Za-z0-9_-][A-Za-z0-9._-]*$ ]]
}

# run_in_reference DIR RESULTS: DIR is RESULTS/reference (or the tree's results/reference)
# or lies inside it, links followed.
run_in_reference() {
    local d ref r
    d=$(realpath -m -- "$1")
    for ref in "$2/reference" results/reference; do
        r=$(realpath -m -- "$ref")
        [[ $d == "$r" || $d == "$r"/* ]] && return 0
    done
    return 1
}

# run_lock DIR: this process is to write the run folder DIR (it exists): locks its mark
# (made where missing) until it exits (run_lock_fd stays open; children share it).
# Status 1, with the other's pid in run_holder, when another process holds it.
run_lock() {
    local mark=$1/$RUN_MARK k
    exec {run_lock_fd}>>"$mark" || return 2
    flock -n "$run_lock_fd" && return 0
    exec {run_lock_fd}>&-
    # The holder writes its pid just after taking the lock.
    for ((k = 0; k < 20; k++)); do
        run_holder=$(sed -n 's/^pid: //p' "$mark" 2>/dev/null)
        [ -n "$run_holder" ] && break
        sleep 0.05
    done
    run_holder=${run_holder:-unknown}
    return 1
}

# run_mark DIR: the mark of a folder this process holds (run_lock): its run id, when it
# was first made, this process's pid.
run_mark() {
    local mark=$1/$RUN_MARK created
    created=$(sed -n 's/^created: //p' "$mark")
    printf 'run_id: %s\ncreated: %s\npid: %s\n' "$(basename "$1")" "${created:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}" "$$" >"$mark"
}
