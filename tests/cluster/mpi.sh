#!/bin/sh
# mpi.sh BUILD_DIR [FIXTURE_DIR] -- a sharded kbench run launched by mpirun.
#
# mpirun starts 3 ranks of `kbench run INI --shard auto`, each writing into
# part-<rank> (the rank is OMPI_COMM_WORLD_RANK, which --shard auto reads);
# `kbench merge` joins the parts, and the result must hold the same rows
# (keys and statuses, each key once) as a one-process run of the same INI.
# A merge without one part must fail and name it.  kbench links no MPI
# library: mpirun only starts the processes.
#
# Exit 0 pass, 1 fail, 77 skip (no mpirun, or one that cannot start
# processes here; the message says which).
set -eu
name=mpi
# shellcheck source=tests/cluster/common.sh
. "$(dirname "$0")/common.sh"
cl_init "${1:-}" "${2:-}"

ranks=3
command -v mpirun >/dev/null 2>&1 ||
    cl_skip "mpirun is not installed (tools/setup.sh installs openmpi-bin when it can)"
# As root Open MPI wants --allow-run-as-root; more ranks than cores want
# --oversubscribe.  Both are harmless otherwise.
mpirun_flags="--allow-run-as-root --oversubscribe"
version=$(mpirun --version 2>&1 | head -n 1) || true
case $version in
    *"Open MPI"*|*OpenRTE*) ;;
    *) cl_skip "mpirun is not Open MPI's ($version); this test gives its flags and reads OMPI_COMM_WORLD_RANK" ;;
esac

# Can mpirun start processes here at all?  If not, that is this machine, not kbench.
rc=0
# shellcheck disable=SC2016,SC2086 # expanded by each rank's sh; flags split on purpose
cl_bounded 60 "$tmp/probe.log" mpirun $mpirun_flags -np "$ranks" \
    sh -c 'echo "$OMPI_COMM_WORLD_RANK/$OMPI_COMM_WORLD_SIZE"' || rc=$?
if [ "$rc" != 0 ] || [ "$(grep -c "/$ranks\$" "$tmp/probe.log")" != "$ranks" ]; then
    cat "$tmp/probe.log" >&2
    cl_skip "mpirun cannot start $ranks ranks of sh on this machine (exit $rc; its output is above)"
fi

cl_write_ini
cl_say "$version: mpirun -np $ranks kbench run --shard auto"
start=$(date +%s)
rc=0
# Each rank writes into its own folder, named by its rank.
# shellcheck disable=SC2016,SC2086
cl_bounded 120 "$tmp/mpirun.log" mpirun $mpirun_flags -np "$ranks" \
    sh -c 'exec "$1" run "$2" -q --shard auto -o "$3/part-$OMPI_COMM_WORLD_RANK" --plugin-path "$4"' \
    sh "$kbench" "$ini" "$tmp" "$fixtures" || rc=$?
if [ "$rc" != 0 ]; then
    cat "$tmp/mpirun.log" >&2
    cl_fail "mpirun -np $ranks kbench run --shard auto exited $rc (output above)"
fi
cl_say "the $ranks ranks took $(($(date +%s) - start)) s"

cl_check_parts "$ranks"
cl_say "passed"
