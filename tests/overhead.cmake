# The bare yardstick for kbench's timing overhead (run by tests/gpu/overhead.sh
# on the GPU machine; it is a benchmark, not a test).
add_executable(kbench-bare-cub ${CMAKE_CURRENT_SOURCE_DIR}/overhead/bare_cub.cu)
set_target_properties(kbench-bare-cub PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
  CUDA_RUNTIME_LIBRARY Shared)
