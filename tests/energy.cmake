# Joules per run (cuda/energy.h) without a GPU: the energy windows over a
# fake variant and the fake libnvidia-ml's scripted counter (tests/noise.cmake
# builds it, and libfake_nvml_old.so without the counter).
kbench_test(test_energy SOURCES test_energy.c)
target_compile_definitions(test_energy PRIVATE
  KBENCH_FAKE_NVML="${KBENCH_FIXTURE_DIR}/nvml/libfake_nvml.so"
  KBENCH_FAKE_NVML_OLD="${KBENCH_FIXTURE_DIR}/nvml/libfake_nvml_old.so")
add_dependencies(test_energy fake_nvml fake_nvml_old)
