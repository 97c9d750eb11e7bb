# A throwaway single-node Slurm cluster for tests/fleet/run.sh: munged with a key of
# its own, slurmctld and slurmd on localhost, every file (config, key, state, spool,
# logs, sockets) in one temp folder, ports away from Slurm's defaults so a real
# cluster on the machine is not disturbed. Sourced; needs root (slurmd runs jobs as
# their user) and Debian's slurm-wlm and munge.
#   cluster_up DIR   starts it, exports SLURM_CONF; returns 1 with a line on failure
#   cluster_down     stops what cluster_up started (by pid), safe to call twice

cluster_pids=()

cluster_up() {
    local dir=$1 host port i
    host=$(hostname -s)
    # Two free-looking ports: per-process offset, so two test runs do not collide.
    port=$((20000 + ($$ % 2000) * 2))
    mkdir -p "$dir"/{state,spool,log,run}
    chmod 755 "$dir"
    # munge refuses a key readable by others, and checks its folders' owners.
    dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
    chmod 400 "$dir/munge.key"
    munged --force --key-file="$dir/munge.key" --socket="$dir/run/munge.socket" \
        --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/run/munged.seed" >"$dir/log/munged.out" 2>&1 ||
        { echo "munged did not start: $(tail -1 "$dir/log/munged.out")"; return 1; }
    cluster_pids+=("$(cat "$dir/run/munged.pid")")
    cat >"$dir/slurm.conf" <<CONF
ClusterName=vltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/run/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
PlugStackConfig=$dir/plugstack.conf
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=vltest Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
    : >"$dir/plugstack.conf"
    export SLURM_CONF=$dir/slurm.conf
    slurmctld -f "$SLURM_CONF" -i >"$dir/log/slurmctld.out" 2>&1 ||
        { echo "slurmctld did not start: $(tail -1 "$dir/log/slurmctld.log" 2>/dev/null)"; return 1; }
    slurmd -f "$SLURM_CONF" >"$dir/log/slurmd.out" 2>&1 ||
        { echo "slurmd did not start: $(tail -1 "$dir/log/slurmd.log" 2>/dev/null)"; return 1; }
    for i in $(seq 1 60); do # the daemons fork: wait for their pid files and the node
        [ -s "$dir/run/slurmctld.pid" ] && [ -s "$dir/run/slurmd.pid" ] &&
            sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && break
        sleep 0.5
    done
    for f in slurmctld slurmd; do
        [ -s "$dir/run/$f.pid" ] && cluster_pids+=("$(cat "$dir/run/$f.pid")")
    done
    sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' ||
        { echo "the node did not come up: $(sinfo -h -o '%t %E' 2>&1 | head -1); $(tail -1 "$dir/log/slurmd.log" 2>/dev/null)"; return 1; }
    cluster_dir=$dir
}

cluster_down() {
    local pid i
    # Newest first: slurmd, slurmctld, then munged, which both need while they stop.
    for ((i = ${#cluster_pids[@]} - 1; i >= 0; i--)); do
        pid=${cluster_pids[$i]}
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        kill -9 "$pid" 2>/dev/null
    done
    cluster_pids=()
}
