# Joules per run (cuda/energy.h) without a GPU: the energy windows over a
# fake variant and the fake libnvidia-ml's scripted counter (tests/noise.cmake
# builds it, and libfake_nvml_old.so without the counter).
kbench_test(test_energy SOURCES test_energy.c)
target_compile_definitions(test_energy PRIVATE
  KBENCH_FAKE_NVML="${KBENCH_FIXTURE_DIR}/nvml/libfake_nvml.so"
  KBENCH_FAKE_NVML_OLD="${KBENCH_FIXTURE_DIR}/nvml/libfake_nvml_old.so")
add_dependencies(test_energy fake_nvml fake_nvml_old)

# idlespin: a CUDA kernel that keeps the GPU all but idle, the low end of
# tests/gpu/energy.sh.  Here it only has to load.
kbench_add_plugin(idlespin SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/energy/idlespin.cu
  OUTPUT_DIRECTORY ${KBENCH_FIXTURE_DIR}/energy NO_INSTALL)
target_compile_options(idlespin PRIVATE -Xcompiler=-Wall -Xcompiler=-Wextra -Xcompiler=-Wshadow)
add_test(NAME energy_idlespin_loads
  COMMAND kbench describe idlespin --plugin-path ${KBENCH_FIXTURE_DIR}/energy)
set_tests_properties(energy_idlespin_loads PROPERTIES ENVIRONMENT "KBENCH_PLUGIN_PATH="
  PASS_REGULAR_EXPRESSION "microseconds a run waits" TIMEOUT 60)
