# Sharded runs under the real launchers (tests/cluster): each starts the
# shards of the toy fixture's sweep through a launcher, joins them with
# `kbench merge` and compares with a one-process run.
#   cluster_openmpi       Open MPI's mpirun -n 3 (OMPI_COMM_WORLD_RANK), then
#                         again with --gpus all on the fake NVML's 2 GPUs
#   cluster_mpich         MPICH's mpiexec -n 3 (PMI_RANK), the same two runs
#   cluster_slurm         a one-node Slurm that the test starts and stops:
#                         sbatch --array=0-2, --array=1-3, srun -n 3
#   cluster_slurm_mpirun  the same Slurm: mpirun -n 3 inside sbatch -n 3, and
#                         mpirun -n 2 inside each task of sbatch --array=0-1
# They skip (exit 77, saying why) where the launcher is missing or cannot
# run; tools/setup.sh installs the launchers when it can.  They run the
# built kbench and fixtures, which `cmake --build` makes before `ctest`.
set(_cluster_dir ${CMAKE_CURRENT_SOURCE_DIR}/cluster)
set(_cluster_args ${CMAKE_BINARY_DIR} ${KBENCH_FIXTURE_DIR}/runner)
add_test(NAME cluster_openmpi COMMAND sh ${_cluster_dir}/mpi.sh ${_cluster_args} openmpi)
add_test(NAME cluster_mpich COMMAND sh ${_cluster_dir}/mpi.sh ${_cluster_args} mpich)
add_test(NAME cluster_slurm COMMAND sh ${_cluster_dir}/slurm.sh ${_cluster_args} array0 array1 srun)
add_test(NAME cluster_slurm_mpirun COMMAND sh ${_cluster_dir}/slurm.sh ${_cluster_args} mpirun array-mpirun)
set_tests_properties(cluster_openmpi cluster_mpich cluster_slurm cluster_slurm_mpirun PROPERTIES
  SKIP_RETURN_CODE 77
  TIMEOUT 300
  LABELS cluster)
set_tests_properties(cluster_openmpi cluster_mpich PROPERTIES
  ENVIRONMENT "KBENCH_PLUGIN_PATH=;KBENCH_FAKE_NVML=${KBENCH_FIXTURE_DIR}/nvml/libfake_nvml.so"
  REQUIRED_FILES "$<TARGET_FILE:kbench>;$<TARGET_FILE:toy>;$<TARGET_FILE:fake_nvml>")
set_tests_properties(cluster_slurm cluster_slurm_mpirun PROPERTIES
  ENVIRONMENT "KBENCH_PLUGIN_PATH="
  REQUIRED_FILES "$<TARGET_FILE:kbench>;$<TARGET_FILE:toy>")
