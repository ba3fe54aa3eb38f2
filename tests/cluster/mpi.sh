#!/bin/sh
# mpi.sh BUILD_DIR [FIXTURE_DIR [ENGINE]] -- a sharded kbench run started by
# an MPI launcher.  ENGINE is openmpi (the default: mpirun, which gives each
# rank OMPI_COMM_WORLD_RANK and _SIZE) or mpich (MPICH's mpiexec, Hydra:
# PMI_RANK and PMI_SIZE).
#
# The launcher starts 3 ranks of `kbench run INI --shard auto`, each writing
# into part-<rank>; each part must be the shard of its rank; `kbench merge`
# joins the parts, and the result must hold the same rows (keys and
# statuses, each key once) as a one-process run of the same INI.  A merge
# without one part must fail and name it.  kbench links no MPI library: the
# launcher only starts the processes.
#
# Exit 0 pass, 1 fail, 77 skip (the engine is not installed, or cannot start
# processes here; the message says which).
set -eu
name=mpi
# shellcheck source=tests/cluster/common.sh
. "$(dirname "$0")/common.sh"
engine=${3:-openmpi}
name=mpi-$engine
cl_init "${1:-}" "${2:-}"
ranks=3

# The launcher's command, its flags and the variable that holds the rank.
# Debian installs each engine's launcher under its own name too, whichever
# one `mpirun` points to.
case $engine in
    openmpi)
        launcher=""
        for c in mpirun.openmpi mpirun orterun; do
            command -v "$c" >/dev/null 2>&1 || continue
            case $("$c" --version 2>&1 | head -n 1) in *"Open MPI"*|*OpenRTE*) launcher=$c; break ;; esac
        done
        [ -n "$launcher" ] || cl_skip "Open MPI's mpirun is not installed (tools/setup.sh installs openmpi-bin when it can)"
        # As root Open MPI wants --allow-run-as-root; more ranks than cores
        # want --oversubscribe.  Both are harmless otherwise.
        flags="--allow-run-as-root --oversubscribe"
        rank_var=OMPI_COMM_WORLD_RANK
        size_var=OMPI_COMM_WORLD_SIZE
        ;;
    mpich)
        launcher=""
        for c in mpiexec.hydra mpiexec.mpich mpiexec; do
            command -v "$c" >/dev/null 2>&1 || continue
            case $("$c" --version 2>&1 | head -n 3) in *HYDRA*|*Hydra*) launcher=$c; break ;; esac
        done
        [ -n "$launcher" ] || cl_skip "MPICH's mpiexec (Hydra) is not installed (tools/setup.sh installs mpich when it can)"
        flags=""
        rank_var=PMI_RANK
        size_var=PMI_SIZE
        ;;
    *) cl_fail "unknown engine '$engine' (openmpi or mpich)" ;;
esac
version=$("$launcher" --version 2>&1 | grep -m 1 -i -E 'open mpi|openrte|version' | tr -s ' ') || true

# Can the launcher start processes here at all?  If not, that is this
# machine, not kbench.
rc=0
# shellcheck disable=SC2086 # $flags are several words on purpose
cl_bounded 60 "$tmp/probe.log" "$launcher" $flags -n "$ranks" \
    sh -c "echo \"\$$rank_var/\$$size_var\"" || rc=$?
if [ "$rc" != 0 ] || [ "$(grep -c "^[0-9]*/$ranks\$" "$tmp/probe.log")" != "$ranks" ]; then
    cat "$tmp/probe.log" >&2
    cl_skip "$launcher cannot start $ranks processes with $rank_var on this machine (exit $rc; its output is above)"
fi

cl_write_ini
cl_say "$launcher ($version): -n $ranks kbench run --shard auto, part-\$$rank_var"
start=$(date +%s)
rc=0
# Each rank writes into its own folder, named by its rank.
# shellcheck disable=SC2086
cl_bounded 120 "$tmp/launch.log" "$launcher" $flags -n "$ranks" \
    sh -c "exec \"\$0\" run \"\$1\" -q --shard auto -o \"\$2/part-\$$rank_var\" --plugin-path \"\$3\"" \
    "$kbench" "$ini" "$tmp" "$fixtures" || rc=$?
if [ "$rc" != 0 ]; then
    cat "$tmp/launch.log" >&2
    cl_fail "$launcher -n $ranks kbench run --shard auto exited $rc (output above)"
fi
cl_say "the $ranks ranks took $(($(date +%s) - start)) s"

cl_check_parts "$ranks"

# The recipe for several hosts of several GPUs: one rank a host, each with
# --gpus all.  Here against the fake NVML of the tests (each rank with a GPU
# lock folder of its own, as if on a host of its own: on one host, ranks
# that name the same GPUs are refused without --allow-shared) (KBENCH_FAKE_NVML,
# which CMake passes), which shows 2 GPUs to each rank: every row of every
# part must have run on one of them.
if [ -n "${KBENCH_FAKE_NVML:-}" ]; then
    [ -f "$KBENCH_FAKE_NVML" ] || cl_fail "KBENCH_FAKE_NVML=$KBENCH_FAKE_NVML is not there; build the fake_nvml fixture"
    cl_clear_parts plain
    rc=0
    # shellcheck disable=SC2086
    cl_bounded 120 "$tmp/launch-gpus.log" \
        env KBENCH_NVML="$KBENCH_FAKE_NVML" FAKE_NVML_GPUS=2 "$launcher" $flags -n "$ranks" \
        sh -c "mkdir -p \"\$2/lock-\$$rank_var\" && KBENCH_LOCK_DIR=\"\$2/lock-\$$rank_var\" exec \"\$0\" run \"\$1\" -q --gpus all --shard auto -o \"\$2/part-\$$rank_var\" --plugin-path \"\$3\"" \
        "$kbench" "$ini" "$tmp" "$fixtures" || rc=$?
    if [ "$rc" != 0 ]; then
        cat "$tmp/launch-gpus.log" >&2
        cl_fail "$launcher -n $ranks kbench run --gpus all --shard auto exited $rc (output above)"
    fi
    cl_check_parts "$ranks"
    gpus=$(python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))["results"]
print(" ".join(sorted({str(r.get("gpu_uuid")) for r in rows})))' "$tmp/merged/results.json")
    [ -n "$gpus" ] || cl_fail "with --gpus all the merged rows name no GPU"
    for g in $gpus; do
        case $g in GPU-fake-0000-[01]) ;; *) cl_fail "with --gpus all a merged row ran on '$g', not on one of the 2 fake GPUs" ;; esac
    done
    cl_say "--gpus all --shard auto, 2 fake GPUs a rank: the rows ran on $gpus"
else
    cl_say "KBENCH_FAKE_NVML is not set: the --gpus all part was not run"
fi
cl_say "passed"
