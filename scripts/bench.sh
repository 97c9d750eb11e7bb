#!/usr/bin/env bash
# `make bench`: runs every program of the suite (scripts/suite.d/*.tsv) against every
# allocator it applies to, writes results/<run-id>/*.csv, a manifest and logs, renders
# the plots where gnuplot is installed, and ends with a summary table.
# Without a CUDA device it says so and runs the simulated-device part of the suite.
#
# One process is one sample: with --repeat N (make bench REPEAT=N) the whole suite runs
# N times as separate processes into results/<run-id>/rep-<k>/, each a complete results
# folder, and summary.csv gives every metric over the repetitions. Each repetition runs
# the jobs in another order (rotated, and reversed every other time), so a slow drift of
# the machine spreads over all programs instead of landing on the last ones.
#
# Suite lines (tab-separated): program  devices  allocs  args  quick_args  [label]
#   devices: cuda | sim | "cuda sim" | multi (cuda, using every GPU; skips itself with 77 on one);
#   a device written DEV:full (cuda:full) runs in the default and full tiers, not in --quick
#   allocs: SPECs, @all, @peers, - (no --alloc) or -peer (no --alloc, a program that
#   loads a peer: left out as @peers is);  args: - for none
#   (@all: vramlab's own and the CUDA allocators; @peers: PyTorch's and RMM's, each skipped
#   where its shim is not built)
#   label: names the line's CSVs (<program>.<label>.<alloc>...) when a program has several lines
# Tiers: the default suite is scripts/suite.d/*.tsv but *.full.tsv (about 5 minutes on
# an H100); --full adds *.full.tsv (everything, peers included); --quick runs each job's short
# configuration (a minute at most) under vramlab's and CUDA's allocators: the peers
# (@peers: PyTorch's and RMM's; -peer: torch_alloc_compare) only with --peers (make
# bench QUICK=1 PEERS=1), as each of their 37 jobs costs a CUDA context and a peer
# library's start. --quick --full: every line of the suite, each in its short
# configuration (the peers table of the README: a minute a repetition on an H100).
# A job whose --trace FILE is not here (the full traces of results/traces/, which
# `make torch-traces` records) replays the shipped fixture of that trace instead
# (tests/fixtures/traces/NAME.tiny.csv; its CSVs are labelled -fixture), and is left out
# where the suite replays that fixture already. A job whose program exits 77 (no GPU, a
# peer not built) is skipped; manifest.csv's note says why (the first line of its log).
# The time left is estimated from the seconds of the same jobs in earlier runs'
# manifest.csv under results/ (jobs never run before are counted apart).
# Folders (scripts/bench.d/run-folder.sh): a run id is letters, digits and . _ - (not
# starting with a dot), never `reference`; nothing is written inside results/reference/.
# An existing, non-empty --run-id/--out folder is refused unless --force, which clears it
# first (so that results never mix with an older run's), and only where bench.sh made it
# (its .vramlab-run says so; an older folder without one is for you to delete). A run
# holds a lock on its folder: a second run into it is refused, naming the first's pid.
# The default run id gets -2, -3, ... when another run started in the same second.
# Each results folder (the run, each rep-<k>/, each gpu<N>/) gets a file COMPLETE,
# written last ("complete <UTC ISO date> jobs=<N>"), once every job of that folder has
# run; an interrupted run (SIGINT, SIGTERM) has none and says so.
# Usage: scripts/bench.sh [--quick [--peers]] [--full] [--repeat N] [--run-id ID | --out DIR] [--force]
#                         [--only PROG[,PROG...]] [--alloc SPEC] [--bin DIR] [--no-plots]
#   --alloc SPEC  every line that takes an allocator runs with SPEC alone (sim lines only
#                 for caching SPECs); lines without --alloc run unchanged
#   --bin DIR     the programs of another build (scripts/ab compares two builds)
#   --out DIR     write into DIR instead of results/<run-id>
#   --device-info CSV  what device_info wrote earlier in this session (scripts/ab runs it
#                 once, not once per pass: a CUDA context costs each pass time)
#   --device SPEC every cuda line runs with --device SPEC (cuda:N: on GPU N); lines whose
#                 devices column is `multi` (programs that use several GPUs) are left out
#   --gpus all|N[,N...]  (make bench GPUS=...) the single-GPU suite once per GPU into
#                 <out>/gpu<N>/ (each a complete results folder, for scripts/compare
#                 <out>/gpu0 <out>/gpu1), then the `multi` lines once into <out>/multigpu/
# Environment (for the tests): VL_RESULTS, the results root (default results);
# VL_SUITE_DIR, the suite's folder (default scripts/suite.d).
set -u
cd "$(dirname "$0")/.."
. scripts/bench.d/suite.sh
. scripts/bench.d/run-folder.sh
results=${VL_RESULTS:-results} suite_dir=${VL_SUITE_DIR:-scripts/suite.d}
quick=0 peers=0 full=0 force=0 run_id= named=0 only= repeat=1 out= alloc_override= bin=build/bin plots=1 known_info= device_override= gpus= multi_only=0
args_in=("$@")
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --peers) peers=1 ;;
    --full) full=1 ;;
    --force) force=1 ;;
    --run-id) [ $# -ge 2 ] || { echo "bench.sh: --run-id needs a value" >&2; exit 2; }; run_id=$2 named=1; shift ;;
    --out) [ -n "${2:-}" ] || { echo "bench.sh: --out needs a folder" >&2; exit 2; }; out=$2; shift ;;
    --only) only=${2:?--only needs a program}; shift ;;
    --repeat) repeat=${2:?--repeat needs a count}; shift ;;
    --alloc) alloc_override=${2:?--alloc needs a SPEC}; shift ;;
    --bin) bin=${2:?--bin needs a folder}; shift ;;
    --no-plots) plots=0 ;;
    --device-info) known_info=${2:?--device-info needs a file}; shift ;;
    --device) device_override=${2:?--device needs a SPEC}; shift ;;
    --gpus) gpus=${2:?--gpus needs all or a list of ordinals}; shift ;;
    --multi-only) multi_only=1 ;; # internal: the `multi` lines alone (the last step of --gpus)
    *) echo "bench.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: --repeat needs a positive count, not '$repeat'" >&2; exit 2; }
[ -x "$bin/device_info" ] || { echo "bench.sh: no programs in '$bin' (build them with make)" >&2; exit 2; }
[ -z "$gpus" ] || [[ $gpus =~ ^(all|[0-9]+(,[0-9]+)*)$ ]] || { echo "bench.sh: --gpus needs all or N[,N...], not '$gpus'" >&2; exit 2; }
[ -z "$gpus" ] || [ -z "$device_override" ] || { echo "bench.sh: --gpus and --device exclude each other" >&2; exit 2; }
[ "$named" = 0 ] || run_id_ok "$run_id" ||
    { echo "bench.sh: --run-id '$run_id': a run id is one folder name of letters, digits and . _ - (not starting with a dot)" >&2; exit 2; }
[ -z "$out" ] && [ "$named" = 1 ] && out=$results/$run_id # --out, where given, wins
if [ -n "$out" ] && run_in_reference "$out" "$results"; then
    echo "bench.sh: $out is in $results/reference/, the stored runs the docs cite: give another run id" >&2; exit 2
fi
ALL_ALLOCS=$SUITE_ALL_ALLOCS
[ "$peers" = 1 ] && { [ "$quick" = 0 ] || [ "$full" = 1 ]; } &&
    { echo "bench.sh: --peers goes with --quick alone (the other tiers run the peers anyway)" >&2; exit 2; }

# The suite files of this tier: *.full.tsv only with --full.
suites=()
for suite in "$suite_dir"/*.tsv; do
    [ -f "$suite" ] || continue
    [[ $suite == *.full.tsv ]] && [ "$full" = 0 ] && continue
    suites+=("$suite")
done
# --only names programs of the suite; --alloc an allocator the programs know.
[ -z "$only" ] || suite_check_only bench.sh "$only" "$suite_dir"/*.tsv || exit 2
if [ -n "$alloc_override" ]; then
    known_allocs=$("$bin/random_churn" --alloc help 2>/dev/null | sed -n 's/^  \([a-z_]*\)  .*/\1/p')
    [ -z "$known_allocs" ] || grep -qxF -- "${alloc_override%%:*}" <<<"$known_allocs" ||
        { echo "bench.sh: --alloc: unknown allocator '${alloc_override%%:*}' (allocators: $(echo $known_allocs | tr ' ' ','))" >&2; exit 2; }
fi
PEER_ALLOCS=$SUITE_PEER_ALLOCS
peers_left_out=0
[ "$quick" = 1 ] && [ "$full" = 0 ] && [ "$peers" = 0 ] && PEER_ALLOCS= peers_left_out=1

# Is there a GPU? device_info exits 77 with one line when there is none.
info=$(mktemp) why_file=$(mktemp) probe=$(mktemp); trap 'rm -f "$info" "$why_file" "$probe"' EXIT
if [ -n "$known_info" ]; then
    cp "$known_info" "$info" 2>"$why_file" && grep -q '^# gpu: ' "$info"
    [ $? = 0 ] && di_status=0 || { di_status=77; echo "device_info: $known_info names no GPU" >"$why_file"; }
else
    $bin/device_info ${device_override:+--device "$device_override"} -o "$info" 2>"$why_file"
    di_status=$?
fi
case $di_status in
0) have_gpu=1; gpu=$(sed -n 's/^# gpu: //p' "$info" | tr -c 'A-Za-z0-9\n' '-' | sed 's/--*/-/g; s/-$//') ;;
77) have_gpu=0; gpu=sim
    echo "bench: no GPU found (no CUDA driver / device), so only the simulated-device part of the suite runs ($(head -1 "$why_file" |
        sed 's/^device_info: //; s/^no GPU found (no CUDA driver \/ device): //; s/ (skipped)$//'))" ;;
*) echo "bench: device_info failed: $(cat "$why_file")" >&2; exit 1 ;;
esac
rev=${VL_GIT_REV:-$(git rev-parse --short=8 HEAD 2>/dev/null || echo norev)}
# lock DIR: the run folder DIR (it exists) is this run's, locked; else one line and exit 2.
lock() {
    run_lock "$1" && return 0
    [ "$?" = 1 ] && echo "bench.sh: $1 is being written by another run (pid $run_holder): wait for it to end, or give another run id" >&2
    exit 2
}
if [ -n "$out" ]; then # a folder the caller named: never mixed with an older run
    if [ -d "$out" ] && [ -n "$(ls -A "$out")" ]; then
        # Cleared only where bench.sh made it: anything else may be another tool's or an
        # older run's (made before runs were marked), which only its owner may delete.
        [ -e "$out/$RUN_MARK" ] ||
            { echo "bench.sh: $out exists already and bench.sh did not make it (no $RUN_MARK$([ "$force" = 1 ] && echo "; --force clears only folders bench.sh made")): give another run id, or delete it yourself" >&2; exit 2; }
        lock "$out"
        if [ -n "$(ls -A "$out" | grep -vxF "$RUN_MARK")" ]; then
            [ "$force" = 1 ] ||
                { echo "bench.sh: $out exists already: give another run id, or FORCE=1 (--force) to clear it first" >&2; exit 2; }
            echo "bench: --force: clearing $out"
            # The mark stays: it holds the lock.
            find "$out" -mindepth 1 -maxdepth 1 ! -name "$RUN_MARK" -exec rm -rf -- {} + || exit 1
        fi
    else
        mkdir -p "$out" || exit 1
        lock "$out"
    fi
else # the default id; a second run started in the same second gets -2, -3, ...
    base=$results/$(date -u +%Y%m%dT%H%M%SZ)-$(hostname -s)-$gpu-$rev
    mkdir -p "$results"
    out=$base
    for ((k = 2; ; k++)); do
        mkdir "$out" 2>/dev/null && break
        [ -d "$out" ] || { echo "bench.sh: cannot create $out" >&2; exit 1; }
        out=$base-$k
    done
    lock "$out"
fi
run_mark "$out"
run_id=$(basename "$out")

# mark_complete DIR JOBS: DIR is a complete results folder (the shared convention).
mark_complete() {
    echo "complete $(date -u +%Y-%m-%dT%H:%M:%SZ) jobs=$2" >"$1/COMPLETE.tmp" && mv "$1/COMPLETE.tmp" "$1/COMPLETE"
}
# Interrupted: the folder has no COMPLETE; stop the running job and say so.
job_pid=
interrupted() {
    # The running job (also one started a moment ago, before job_pid was set).
    local running
    running=$(jobs -p)
    [ -n "$job_pid$running" ] && kill -TERM $job_pid $running 2>/dev/null
    echo >&2
    echo "bench: interrupted ($1): the run in $out is incomplete (no COMPLETE file); do not compare it" >&2
    exit "$2"
}
trap 'interrupted SIGINT 130' INT
trap 'interrupted SIGTERM 143' TERM

# --gpus: this script again, once per GPU (with --device cuda:N, into gpu<N>/), then the
# lines that use several GPUs once. device_info answers 77 for an ordinal that is not there.
if [ -n "$gpus" ] && [ "$have_gpu" = 1 ]; then
    if [ "$gpus" = all ]; then
        list=()
        for ((g = 0; g < 64; g++)); do
            $bin/device_info --device "cuda:$g" -o "$probe" 2>/dev/null || break
            list+=("$g")
        done
    else
        IFS=, read -ra list <<<"$gpus"
    fi
    [ ${#list[@]} -gt 0 ] || { echo "bench: --gpus $gpus: no such GPU" >&2; exit 2; }
    pass=() skip_next=0
    for a in "${args_in[@]}"; do # the caller's options without --gpus/--out/--run-id
        if [ "$skip_next" = 1 ]; then skip_next=0; continue; fi
        case $a in --gpus|--out|--run-id) skip_next=1; continue ;; esac
        pass+=("$a")
    done
    status=0 sub_jobs=0
    for g in "${list[@]}"; do
        echo "== bench: GPU $g -> $out/gpu$g"
        "$0" "${pass[@]}" --device "cuda:$g" --out "$out/gpu$g" || status=1
    done
    # The lines that use several GPUs, where the suite (and --only) has any.
    if awk -F'\t' -v only=",$only," '$1 !~ /^#/ && $2 ~ /multi/ && (only == ",," || index(only, "," $1 ",")) { f = 1 }
                                      END { exit !f }' "$suite_dir"/*.tsv; then
        echo "== bench: the multi-GPU lines -> $out/multigpu"
        "$0" "${pass[@]}" --multi-only --out "$out/multigpu" || status=1
    fi
    echo "bench: per-GPU results in $out/gpu{$(IFS=,; echo "${list[*]}")}; compare two with: scripts/compare $out/gpu${list[0]} $out/gpu${list[-1]}"
    # The whole is complete when each part is.
    for part in "$out"/gpu* "$out"/multigpu; do
        [ -d "$part" ] || continue
        [ -f "$part/COMPLETE" ] || { status=1; continue; }
        sub_jobs=$((sub_jobs + $(sed -n 's/.* jobs=\([0-9]*\)$/\1/p' "$part/COMPLETE")))
    done
    [ "$status" = 0 ] && mark_complete "$out" "$sub_jobs"
    exit $status
fi

# Expand the suite into one job per (program, device, allocator).
jobs=()
missing_traces=()
while IFS=$'\t' read -r _ prog devices allocs args qargs label; do
    if [ -n "$only" ] && [[ ",$only," != *",$prog,"* ]]; then continue; fi
    allocs=${allocs//@all/$ALL_ALLOCS} # @all and @peers may stand with other SPECs
    allocs=${allocs//@peers/$PEER_ALLOCS}
    [ "$allocs" = -peer ] && { [ "$peers_left_out" = 1 ] && continue; allocs=-; }
    [ -z "${allocs// /}" ] && continue # a line of peers alone, left out of --quick
    [ -n "$alloc_override" ] && [ "$allocs" != - ] && allocs=$alloc_override
    suite_fixtures # a full trace not recorded here: its shipped fixture, labelled so
    for dev in $devices; do
        if [[ $dev == *:full ]]; then # not in the quick tier alone
            [ "$quick" = 1 ] && [ "$full" = 0 ] && continue
            dev=${dev%:full}
        fi
        [ "$multi_only" = 1 ] && [ "$dev" != multi ] && continue
        [ "$dev" = multi ] && [ -n "$device_override" ] && continue
        [ "$dev" != sim ] && [ "$have_gpu" = 0 ] && continue
        [ "$dev" = sim ] && [ -n "$device_override" ] && continue
        [ "$dev" = sim ] && [ -n "$alloc_override" ] && [[ $alloc_override != caching* ]] && continue
        for alloc in $allocs; do
            for t in "${line_missing[@]}"; do
                [[ " ${missing_traces[*]} " == *" $t "* ]] || missing_traces+=("$t")
            done
            jobs+=("$prog"$'\t'"$dev"$'\t'"$alloc"$'\t'"$args"$'\t'"$qargs"$'\t'"$label")
        done
    done
done < <(suite_lines "${suites[@]}")
# The same (program, device, SPEC, args) twice is one job, whatever its label: an
# --alloc override maps several SPECs of one line to one, and a fixture standing in for
# a full trace may be in the suite already.
[ ${#jobs[@]} -gt 0 ] && mapfile -t jobs < <(printf '%s\n' "${jobs[@]}" | awk -F'\t' '
    { line[NR] = $0; key[NR] = $1 FS $2 FS $3 FS $4 FS $5; fixture[NR] = ($6 ~ /-fixture$/); if (!fixture[NR]) have[key[NR]] = 1 }
    END { for (i = 1; i <= NR; i++) if (!seen[line[i]]++ && !(fixture[i] && have[key[i]]) && !(fixture[i] && seenfix[key[i]]++)) print line[i] }')
total=${#jobs[@]}
if [ "$total" = 0 ]; then
    why=
    [ "$have_gpu" = 0 ] && why=" (no GPU here: only the simulated-device lines run, and only with caching SPECs)"
    echo "bench: no job to run${only:+ for --only $only}${alloc_override:+ with --alloc $alloc_override}$why" >&2
    exit 2
fi
if [ "$peers_left_out" = 1 ] && [ "$have_gpu" = 1 ] && [ -z "$alloc_override" ] && grep -qE '@peers|-peer' "${suites[@]}"; then
    echo "bench: quick tier: PyTorch's and RMM's allocators are left out (make bench QUICK=1 PEERS=1 adds them)"
fi
if [ ${#missing_traces[@]} -gt 0 ]; then
    echo "bench: not recorded here (make torch-traces): ${missing_traces[*]}; their jobs replay the shipped fixtures (tests/fixtures/traces/*.tiny.csv, CSVs labelled -fixture) where the suite does not already"
fi

declare -A count_ok count_skipped count_failed # per program, for the summary
failed=0

# job_tag PROG DEV ALLOC LABEL: what names the job's CSV (<prog>.<tag>.csv) and log.
job_tag() {
    local tag
    tag=$(printf '%s' "$3" | tr ':,=/' '____')
    [ "$3" = - ] && tag=default
    [ "$2" = sim ] && tag="$tag.sim"
    [ -n "$4" ] && tag="$4.$tag"
    echo "$tag"
}

# The estimate: each job's median seconds in earlier runs of this kind (quick or not).
declare -A est_of
while read -r name secs; do est_of[$name]=$secs; done < <(python3 scripts/vl history --quick "$quick" --exclude "$out" "$results" 2>/dev/null)
est_pass=0 untimed=0
for job in "${jobs[@]}"; do
    IFS=$'\t' read -r prog dev alloc _ _ label <<<"$job"
    name=$prog.$(job_tag "$prog" "$dev" "$alloc" "$label").csv
    if [ -n "${est_of[$name]:-}" ]; then est_pass=$(awk -v a="$est_pass" -v b="${est_of[$name]}" 'BEGIN { print a + b }')
    else untimed=$((untimed + 1)); fi
done
est_left=$(awk -v a="$est_pass" -v r="$repeat" 'BEGIN { print a * r }')
fmt_secs() { awk -v s="$1" 'BEGIN { s = int(s + 0.5); if (s >= 60) printf "%dm%02ds", s / 60, s % 60; else printf "%ds", s }'; }
if [ "$untimed" = "$total" ]; then
    printf 'bench: %d jobs%s; no estimate of the time: none of them ran in an earlier run under %s/\n' \
        "$total" "$([ "$repeat" -gt 1 ] && echo " x $repeat repetitions")" "$results"
else
    printf 'bench: %d jobs%s; about %s by earlier runs%s\n' "$total" "$([ "$repeat" -gt 1 ] && echo " x $repeat repetitions")" \
        "$(fmt_secs "$est_left")" "$([ "$untimed" -gt 0 ] && echo " (and $untimed job(s) never timed before)")"
fi

# run_pass DIR ROTATE REVERSE VERBOSE MARK: every job once, into DIR (a complete results
# folder; MARK=1: its COMPLETE written at the end, else the caller writes it).
run_pass() {
    local dir=$1 rotate=$2 reverse=$3 verbose=$4 mark=$5
    local order=() i job prog dev alloc args qargs label tag csv cmd extra rc status secs t0 trace note n=0 pass_failed=0
    mkdir -p "$dir/logs"
    [ "$have_gpu" = 1 ] && cp "$info" "$dir/device_info.csv"
    {
        echo "run_id: $run_id"; echo "git: ${VL_GIT_REV:-$(git describe --always --dirty 2>/dev/null)}"; echo "quick: $quick"
        echo "machine state (clocks, temperature, load, other GPU processes): machine.txt"
    } >"$dir/env.txt" 2>&1
    scripts/machine-state >"$dir/machine.txt"
    for ((i = 0; i < total; i++)); do order+=("${jobs[$(((i + rotate) % total))]}"); done
    if [ "$reverse" = 1 ]; then
        local rev_order=()
        for ((i = total - 1; i >= 0; i--)); do rev_order+=("${order[$i]}"); done
        order=("${rev_order[@]}")
    fi
    local manifest=$dir/manifest.csv
    echo "program,device,alloc,status,exit_code,seconds,csv,note" >"$manifest"
    for job in "${order[@]}"; do
        IFS=$'\t' read -r prog dev alloc args qargs label <<<"$job"
        [ -n "$prog" ] || continue
        n=$((n + 1))
        tag=$(job_tag "$prog" "$dev" "$alloc" "$label")
        csv=$dir/$prog.$tag.csv
        cmd=("$bin/$prog" -o "$csv")
        [ "$alloc" != - ] && cmd+=(--alloc "$alloc")
        [ "$dev" = sim ] && cmd+=(--device sim)
        [ "$dev" = cuda ] && [ -n "$device_override" ] && cmd+=(--device "$device_override")
        if [ "$quick" = 1 ]; then
            cmd+=(--quick)
            [ "$qargs" != - ] && [ -n "$qargs" ] && read -ra extra <<<"$qargs" && cmd+=("${extra[@]}")
        else
            [ "$args" != - ] && [ -n "$args" ] && read -ra extra <<<"$args" && cmd+=("${extra[@]}")
        fi
        [ "$verbose" = 1 ] && printf '[%d/%d] %-34s %-30s %-4s ' "$n" "$total" "$prog${label:+ ($label)}" "$alloc" "$dev"
        t0=$(date +%s.%N)
        if [ -x "$bin/$prog" ]; then
            # In the background, so that SIGINT/SIGTERM reach the trap at once.
            "${cmd[@]}" 2>"$dir/logs/$prog.$tag.log" &
            job_pid=$!
            wait "$job_pid"
            rc=$?
            job_pid=
        else
            echo "not built: $bin/$prog" >"$dir/logs/$prog.$tag.log"; rc=127
        fi
        secs=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
        case $rc in 0) status=ok ;; 77) status=skipped ;; *) status=failed; pass_failed=$((pass_failed + 1)) ;; esac
        : "${count_ok[$prog]:=0}" "${count_skipped[$prog]:=0}" "${count_failed[$prog]:=0}"
        case $status in
        ok) count_ok[$prog]=$((count_ok[$prog] + 1)) ;;
        skipped) count_skipped[$prog]=$((count_skipped[$prog] + 1)) ;;
        failed) count_failed[$prog]=$((count_failed[$prog] + 1)) ;;
        esac
        est_left=$(awk -v a="$est_left" -v b="${est_of[$prog.$tag.csv]:-0}" 'BEGIN { a -= b; print (a > 0 ? a : 0) }')
        [ "$verbose" = 1 ] && printf '%-7s %6.1fs%s\n' "$status" "$secs" "$([ "$untimed" != "$total" ] && echo "  ~$(fmt_secs "$est_left") left")"
        if [ "$status" = failed ]; then
            [ "$verbose" = 1 ] || echo "        failed: $prog $alloc $dev (exit $rc)"
            sed 's/^/        /' "$dir/logs/$prog.$tag.log" | tail -3
        fi
        note=
        [ "$status" = ok ] || note=$(head -1 "$dir/logs/$prog.$tag.log" | tr '"' "'")
        echo "$prog,$dev,\"$alloc\",$status,$rc,$secs,$(basename "$csv"),\"$note\"" >>"$manifest"
    done
    scripts/machine-state --end >>"$dir/machine.txt"
    failed=$((failed + pass_failed))
    [ "$mark" = 1 ] && mark_complete "$dir" "$n"
}

start_all=$(date +%s.%N)
if [ "$repeat" = 1 ]; then
    run_pass "$out" 0 0 1 0
else
    echo "bench: $total jobs, $repeat repetitions into $out/rep-1 .. rep-$repeat"
    for ((k = 1; k <= repeat; k++)); do
        t_rep=$(date +%s.%N)
        run_pass "$out/rep-$k" $(((k - 1) * total / repeat)) $(((k + 1) % 2)) 0 1
        printf 'bench: repetition %d/%d done in %.0f s (%d failed so far)%s\n' "$k" "$repeat" \
            "$(awk -v a="$(date +%s.%N)" -v b="$t_rep" 'BEGIN { print a - b }')" "$failed" \
            "$([ "$untimed" != "$total" ] && echo ", ~$(fmt_secs "$est_left") left")"
    done
    python3 scripts/vl compare.summarize "$out" || echo "bench: the summary over repetitions failed" >&2
fi
elapsed=$(awk -v a="$(date +%s.%N)" -v b="$start_all" 'BEGIN { printf "%.2f", a - b }')

# Every job of every pass has run: the run is complete (plots are made from it after).
mark_complete "$out" $((total * repeat))
plots_later=
if [ "$plots" = 0 ]; then
    :
elif command -v gnuplot >/dev/null; then
    scripts/plots.sh "$out" || echo "bench: some plots failed (see above)"
else
    plots_later="plots: gnuplot is not installed here; make them later with: make plots RUN=$run_id"
fi

echo
echo "== summary: $out ($(printf '%.0f' "$elapsed") s, $repeat repetition(s)) =="
printf '%-24s %4s %8s %7s\n' program ok skipped failed
for prog in $(printf '%s\n' "${!count_ok[@]}" | sort); do
    printf '%-24s %4d %8d %7d\n' "$prog" "${count_ok[$prog]}" "${count_skipped[$prog]}" "${count_failed[$prog]}"
done
if [ "$repeat" = 1 ]; then
    echo "results: $out   manifest: $out/manifest.csv"
else
    echo "results: $out/rep-1 .. rep-$repeat   summary over repetitions: $out/summary.csv"
fi
[ -z "$plots_later" ] || echo "$plots_later"
# The report (report.md, report.html; scripts/report): a failure of it is one line, and
# neither hides the results above nor changes this script's status.
scripts/report "$out" 2>"$out/report.log" && rm -f "$out/report.log" ||
    echo "bench: the report failed ($(tail -1 "$out/report.log")); the results stand; again: scripts/report $out"
[ "$failed" -eq 0 ]
