# Sharding and the GPUs of a run: a plan as jobs and their split into shards
# (core/src/plan/shard.c) on the conf/ studies and the toy plugin, the plan's
# identity hash, --shard i/N|auto, and `kbench run` with --shard and --gpus
# (the latter against the fake libnvidia-ml of tests/fixtures/nvml).  Needs
# the in-tree plugins, the toy and crash fixtures and the kbench binary.
kbench_test(test_shard SOURCES test_shard.c)
target_compile_options(test_shard PRIVATE ${KBENCH_C_WARNINGS})
target_compile_definitions(test_shard PRIVATE
  KBENCH_FAKE_NVML="${KBENCH_FIXTURE_DIR}/nvml/libfake_nvml.so")
add_dependencies(test_shard kbench toy crash fake_nvml)
foreach(_family matmul reduce sort transpose)
  if(TARGET kbench_${_family}_plugin)
    add_dependencies(test_shard kbench_${_family}_plugin)
  endif()
endforeach()
