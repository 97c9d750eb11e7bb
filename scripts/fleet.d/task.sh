#!/usr/bin/env bash
# One task of a fleet job array (scripts/fleet submits it with sbatch --chdir=<repo>):
# names this machine <host>-<gpu>-<driver> from device_info's CSV metadata (or
# nvidia-smi; `sim`/`nodriver` without a GPU), runs scripts/bench.sh into
# FLEET_DIR/<name>/ (with -t<task> added when another task of the fleet already took
# the name, e.g. several tasks on one node), and leaves FLEET_DIR/tasks/<task>.status
# for scripts/fleet --collect. A task killed by Slurm leaves no status: that is a failure.
# Usage (by sbatch): task.sh FLEET_DIR BIN|--build [bench.sh options...]
set -u
fleet_dir=$1 bin=$2
shift 2
task=${SLURM_ARRAY_TASK_ID:-0}
host=$(hostname -s)
status=$fleet_dir/tasks/$task.status
finish() { # finish RC DIR WHY
    printf 'task=%s rc=%s dir=%s host=%s job=%s why=%s\n' "$task" "$1" "$2" "$host" \
        "${SLURM_ARRAY_JOB_ID:-?}_$task" "$3" >"$status"
    exit "$1"
}
echo "fleet task $task on $host (job ${SLURM_ARRAY_JOB_ID:-?}_$task), $(date -u +%FT%TZ)"
if [ "$bin" = --build ]; then
    # A build of this node's own (another CUDA, another compiler), kept apart per host.
    build=build-fleet/$host
    echo "building into $build"
    make -j"$(nproc)" BUILD="$build" programs >"$fleet_dir/logs/build-$task.log" 2>&1 ||
        { tail -20 "$fleet_dir/logs/build-$task.log"; finish 1 - "the build failed"; }
    bin=$build/bin
fi

slug() { tr -c 'A-Za-z0-9.\n' '-' | sed 's/--*/-/g; s/^-//; s/-$//'; }
info=$(mktemp)
trap 'rm -f "$info"' EXIT
known=()
if "$bin/device_info" -o "$info" 2>/dev/null; then
    gpu=$(sed -n 's/^# gpu: //p' "$info" | head -1)
    driver=$(sed -n 's/^# driver: //p' "$info" | head -1 | cut -d' ' -f1)
    known=(--device-info "$info") # bench.sh then needs no CUDA context of its own for it
elif command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
else
    gpu=sim driver=nodriver
fi
name=$(printf '%s-%s-%s' "$host" "${gpu:-gpu}" "${driver:-nodriver}" | slug)
# mkdir is atomic on the shared folder: the first task on a machine gets the plain name.
mkdir "$fleet_dir/$name" 2>/dev/null || { name=$name-t$task && mkdir "$fleet_dir/$name"; } ||
    finish 1 - "cannot create $fleet_dir/$name"
echo "results: $fleet_dir/$name"
scripts/bench.sh --out "$fleet_dir/$name" --bin "$bin" "${known[@]}" "$@"
rc=$?
[ "$rc" = 0 ] && finish 0 "$name" ok
finish "$rc" "$name" "bench.sh exited $rc"
