# Sharded runs under the real launchers: tests/cluster/mpi.sh starts the
# shards with mpirun, tests/cluster/slurm.sh with a one-node Slurm it starts
# and stops itself; both merge the shards with `kbench merge` and compare
# with a one-process run of the toy fixture (tests/fixtures/runner).  They
# skip (exit 77, saying why) where Open MPI or Slurm and munge are missing
# or cannot run; tools/setup.sh installs them when it can.  They run the
# built kbench and toy plugin, which `cmake --build` makes before `ctest`.
foreach(_launcher mpi slurm)
  add_test(NAME cluster_${_launcher}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cluster/${_launcher}.sh
            ${CMAKE_BINARY_DIR} ${KBENCH_FIXTURE_DIR}/runner)
  set_tests_properties(cluster_${_launcher} PROPERTIES
    ENVIRONMENT "KBENCH_PLUGIN_PATH="
    SKIP_RETURN_CODE 77
    TIMEOUT 300
    LABELS cluster
    REQUIRED_FILES "$<TARGET_FILE:kbench>;$<TARGET_FILE:toy>")
endforeach()
