#!/bin/sh
# slurm.sh BUILD_DIR [FIXTURE_DIR [CASE...]] -- sharded kbench runs launched
# by a real Slurm.
#
# Starts a one-node Slurm cluster on this machine, all of it under one
# temporary folder: munged with its own key and socket, slurmctld and slurmd
# (-D, in the background) with a slurm.conf written here (SLURM_CONF), on
# ports that were free.  Then the cases (all when none are named):
#   array0: sbatch --array=0-2 --wait; each array task runs
#      `kbench run INI --shard auto -o part-$SLURM_ARRAY_TASK_ID`;
#   array1: the same with --array=1-3 (--shard auto counts from
#      SLURM_ARRAY_TASK_MIN, so the parts are still shards 0..2), into
#      part-$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN));
#   srun: srun -n 3, three tasks of one job step, by SLURM_PROCID;
#   mpirun: sbatch -n 3 of a script that starts 3 ranks with mpirun, by
#      OMPI_COMM_WORLD_RANK (each rank also sees the batch step's
#      SLURM_PROCID and SLURM_NTASKS);
#   array-mpirun: sbatch --array=0-1 -n 2 of a script that starts 2 ranks
#      with mpirun: 4 shards, task t's rank r being shard 2t + r;
# and after each, `kbench merge` of the parts must hold the same rows (keys
# and statuses, each key once) as a one-process run of the same INI, and a
# merge without one part must fail naming it.  kbench links no Slurm
# library: Slurm only starts the processes.  On exit every daemon started
# here is stopped and the folder removed.
#
# Exit 0 pass, 1 fail, 77 skip: Slurm or munge is not installed, this is not
# root, or the daemons cannot run on this machine (the message says why and
# shows the daemon's log).
set -eu
name=slurm
# shellcheck source=tests/cluster/common.sh
. "$(dirname "$0")/common.sh"
cl_init "${1:-}" "${2:-}"

missing=""
for c in munged munge unmunge slurmctld slurmd sbatch srun sinfo squeue scontrol scancel timeout; do
    command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
done
[ -z "$missing" ] ||
    cl_skip "not installed:$missing (tools/setup.sh installs munge, slurmctld, slurmd and slurm-client when it can)"
[ "$(id -u)" = 0 ] ||
    cl_skip "not root: slurmd must run as root to start jobs, and this test starts its own slurmd"

# Paths under $tmp must stay short: a UNIX socket path has at most 107 bytes.
# munged checks that every folder above its socket can be entered by all and
# that none can be written by others.
chmod 755 "$tmp"
mkdir -p "$tmp/munge" "$tmp/run" "$tmp/state" "$tmp/spool" "$tmp/log"
chmod 700 "$tmp/munge"
chmod 755 "$tmp/run"
sock=$tmp/run/munge.sock

munged_pid=""
ctld_pid=""
slurmd_pid=""

# Waits up to $2 seconds for process $1 to end; then kills it.
stop_pid() {
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null || return 0
    t=0
    while kill -0 "$1" 2>/dev/null && [ "$t" -lt "$2" ]; do
        sleep 1
        t=$((t + 1))
    done
    kill -9 "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

stop_cluster() {
    if [ -n "$ctld_pid" ] && kill -0 "$ctld_pid" 2>/dev/null; then
        timeout 10 scancel --quiet --user="$(id -un)" 2>/dev/null || true
    fi
    stop_pid "$slurmd_pid" 10
    stop_pid "$ctld_pid" 10
    stop_pid "$munged_pid" 5
    unset SLURM_CONF
    # A job step that outlived its slurmd runs as a slurmstepd whose
    # environment names our slurm.conf; stop those too (by their pid).
    for d in /proc/[0-9]*; do
        p=${d#/proc/}
        [ "$p" != $$ ] || continue
        if { tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$tmp/slurm.conf"; then
            kill -9 "$p" 2>/dev/null || true
        fi
    done
}
cl_stop=stop_cluster

# Shows the tail of a daemon's log (for a skip or a failure).
show_log() {
    for f in "$@"; do
        [ -s "$f" ] || continue
        echo "--- $f (last 30 lines)" >&2
        tail -n 30 "$f" >&2
    done
}

# why FILE...: the line of the daemons' logs that most likely says why one
# stopped: the last fatal one, else the last line.
why() {
    w=$(cat "$@" 2>/dev/null | grep -i 'fatal' | tail -n 1)
    [ -n "$w" ] || w=$(cat "$@" 2>/dev/null | tail -n 1)
    echo "${w:-no log}"
}

# 1. munge: its own key, socket, log, pid and seed files.
if command -v mungekey >/dev/null 2>&1; then
    mungekey --create --keyfile="$tmp/munge/munge.key" >/dev/null 2>&1 || true
fi
[ -s "$tmp/munge/munge.key" ] ||
    dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$tmp/munge/munge.key"
munged --foreground --socket="$sock" --key-file="$tmp/munge/munge.key" \
    --log-file="$tmp/log/munged.log" --pid-file="$tmp/run/munged.pid" \
    --seed-file="$tmp/munge/munged.seed" </dev/null >"$tmp/log/munged.out" 2>&1 &
munged_pid=$!
t=0
until munge --socket="$sock" --no-input 2>/dev/null | unmunge --socket="$sock" >/dev/null 2>&1; do
    t=$((t + 1))
    if ! kill -0 "$munged_pid" 2>/dev/null || [ "$t" -ge 20 ]; then
        show_log "$tmp/log/munged.out" "$tmp/log/munged.log"
        cl_skip "munged did not start or does not answer on $sock: $(why "$tmp/log/munged.out" "$tmp/log/munged.log")"
    fi
    sleep 1
done

# 2. slurm.conf: this machine as the one node, with its CPUs and memory.
host=$(uname -n)
host=${host%%.*}
[ -n "$host" ] || cl_skip "this machine has no host name, which Slurm needs for its node and controller"
cpus=$(nproc)
# A little under the total: a node that claims more than slurmd finds is
# drained as invalid.
mem=$(free -m | awk '/^Mem:/ { print int($2 * 0.95) }')
[ -n "$mem" ] && [ "$mem" -gt 0 ] 2>/dev/null || mem=1
ports=$(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
ctld_port=${ports% *}
slurmd_port=${ports#* }
cat >"$tmp/slurm.conf" <<EOF
# Written by kbench's tests/cluster/slurm.sh for one test run.
ClusterName=kbtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
SLURM_CONF=$tmp/slurm.conf
export SLURM_CONF

# 3. The daemons, in the foreground of their own background processes.
slurmctld -D </dev/null >"$tmp/log/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D </dev/null >"$tmp/log/slurmd.out" 2>&1 &
slurmd_pid=$!
t=0
state=""
while :; do
    state=$(timeout 10 sinfo --noheader --nodes="$host" --format=%T 2>/dev/null | head -n 1) || state=""
    [ "$state" != idle ] || break
    t=$((t + 1))
    if ! kill -0 "$ctld_pid" 2>/dev/null; then
        show_log "$tmp/log/slurmctld.out" "$tmp/log/slurmctld.log"
        cl_skip "slurmctld exited at start on this machine: $(why "$tmp/log/slurmctld.out" "$tmp/log/slurmctld.log")"
    fi
    if ! kill -0 "$slurmd_pid" 2>/dev/null; then
        show_log "$tmp/log/slurmd.out" "$tmp/log/slurmd.log"
        cl_skip "slurmd exited at start on this machine: $(why "$tmp/log/slurmd.out" "$tmp/log/slurmd.log")"
    fi
    if [ "$t" -ge 60 ]; then
        show_log "$tmp/log/slurmctld.log" "$tmp/log/slurmd.log"
        cl_skip "the node $host did not become idle in 60 s (state '${state:-none}'; slurmd's log ends: $(why "$tmp/log/slurmd.log"))"
    fi
    sleep 1
done
cl_say "$(slurmctld -V): one node $host, $cpus CPUs, $mem MB, idle after $t s"

cl_write_ini

# One probe job first: a cluster that cannot run `true` is this machine's
# problem, not kbench's.
rc=0
cl_bounded 60 "$tmp/probe.log" srun --quiet -n 1 true || rc=$?
if [ "$rc" != 0 ]; then
    cat "$tmp/probe.log" >&2
    show_log "$tmp/log/slurmd.log"
    cl_skip "this Slurm cannot run a job here (srun true exited $rc: $(tail -n 1 "$tmp/probe.log"); slurmd's log is above)"
fi

# submit WHAT LOG SBATCH-ARGS...: sbatch --wait; fails showing the job's output.
submit() {
    what=$1
    log=$2
    shift 2
    start=$(date +%s)
    rc=0
    cl_bounded 120 "$log" sbatch --parsable --wait "$@" || rc=$?
    if [ "$rc" != 0 ]; then
        sed 's/^/sbatch: /' "$log" >&2
        # --parsable puts the job's id first in sbatch's output.
        id=$(head -n 1 "$log" | cut -d';' -f1)
        show_log "$tmp/log/job-$id.out" "$tmp/log/job-${id}_"*.out
        cl_fail "$what exited $rc (sbatch's output and the job's are above)"
    fi
    cl_say "$what: took $(($(date +%s) - start)) s"
}

# Case array0 / array1: sbatch --array=FIRST-(FIRST+2) --wait, one shard a
# task, into part-<task id> (array0) or part-<task id - the array's first>
# (array1), as docs/scale.md says.
case_array() {
    first=$1
    last=$((first + 2))
    if [ "$first" = 0 ]; then
        # shellcheck disable=SC2016 # expanded by the job's shell
        folder='$SLURM_ARRAY_TASK_ID'
    else
        # shellcheck disable=SC2016
        folder='$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN))'
    fi
    cat >"$tmp/array.sh" <<EOF
#!/bin/sh
set -eu
exec "$kbench" run "$ini" -q --shard auto -o "$tmp/part-$folder" --plugin-path "$fixtures"
EOF
    submit "sbatch --array=$first-$last --wait" "$tmp/sbatch.log" --array="$first-$last" \
        --ntasks=1 --job-name=kbench-array --output="$tmp/log/job-%A_%a.out" "$tmp/array.sh"
    cl_check_parts 3
}

# Case srun: three tasks of one job step, into part-<SLURM_PROCID>.
case_srun() {
    start=$(date +%s)
    rc=0
    # shellcheck disable=SC2016 # expanded by each task's sh, not here
    cl_bounded 120 "$tmp/srun.log" srun --quiet --overcommit -n 3 \
        sh -c 'exec "$1" run "$2" -q --shard auto -o "$3/part-$SLURM_PROCID" --plugin-path "$4"' \
        sh "$kbench" "$ini" "$tmp" "$fixtures" || rc=$?
    if [ "$rc" != 0 ]; then
        cat "$tmp/srun.log" >&2
        cl_fail "srun -n 3 kbench run --shard auto exited $rc (output above)"
    fi
    cl_say "srun -n 3: took $(($(date +%s) - start)) s"
    cl_check_parts 3
}

# Case mpirun: a batch job of 3 tasks whose script starts 3 ranks with
# mpirun, into part-<OMPI_COMM_WORLD_RANK>.  Every rank also sees the batch
# step's SLURM_PROCID (0) and SLURM_NTASKS (3); its rank must win.
case_mpirun() {
    command -v mpirun >/dev/null 2>&1 || cl_skip "case mpirun: mpirun is not installed"
    cat >"$tmp/mpirun.sh" <<EOF
#!/bin/sh
set -eu
exec mpirun --allow-run-as-root --oversubscribe -np 3 \\
    sh -c 'exec "\$0" run "\$1" -q --shard auto -o "\$2/part-\$OMPI_COMM_WORLD_RANK" --plugin-path "\$3"' \\
    "$kbench" "$ini" "$tmp" "$fixtures"
EOF
    submit "sbatch -n 3 --wait of mpirun -np 3" "$tmp/sbatch.log" --ntasks=3 --overcommit \
        --job-name=kbench-mpirun --output="$tmp/log/job-%j.out" "$tmp/mpirun.sh"
    cl_check_parts 3
}

# Case array-mpirun: an array of 2 batch jobs of 2 tasks, each starting 2
# ranks with mpirun: 4 shards, array task t's rank r being shard 2t + r,
# into part-<2t + r>.
case_array_mpirun() {
    command -v mpirun >/dev/null 2>&1 || cl_skip "case array-mpirun: mpirun is not installed"
    cat >"$tmp/array-mpirun.sh" <<EOF
#!/bin/sh
set -eu
exec mpirun --allow-run-as-root --oversubscribe -np 2 \\
    sh -c 'exec "\$0" run "\$1" -q --shard auto -o "\$2/part-\$((SLURM_ARRAY_TASK_ID * 2 + OMPI_COMM_WORLD_RANK))" --plugin-path "\$3"' \\
    "$kbench" "$ini" "$tmp" "$fixtures"
EOF
    submit "sbatch --array=0-1 -n 2 --wait of mpirun -np 2" "$tmp/sbatch.log" --array=0-1 \
        --ntasks=2 --overcommit --job-name=kbench-array-mpirun \
        --output="$tmp/log/job-%A_%a.out" "$tmp/array-mpirun.sh"
    cl_check_parts 4
}

# The cases: those named after FIXTURE_DIR, else all.
if [ "$#" -gt 2 ]; then shift 2; else set -- array0 array1 srun mpirun array-mpirun; fi
for c in "$@"; do
    case $c in
        array0) case_array 0 ;;
        array1) case_array 1 ;;
        srun) case_srun ;;
        mpirun) case_mpirun ;;
        array-mpirun) case_array_mpirun ;;
        *) cl_fail "unknown case '$c' (the cases are array0, array1, srun, mpirun, array-mpirun)" ;;
    esac
    cl_clear_parts "done-$c"
done

cl_say "passed: $*"
