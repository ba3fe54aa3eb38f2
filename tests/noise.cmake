# Measurement that knows when it is noisy (issue 11, section 3): the batch
# choice, the clock marks, and NVML loaded at run time, against the fake
# libnvidia-ml of tests/fixtures/nvml built into ${KBENCH_FIXTURE_DIR}/nvml.
add_library(fake_nvml SHARED ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/nvml/fake_nvml.c)
set_target_properties(fake_nvml PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${KBENCH_FIXTURE_DIR}/nvml
  C_VISIBILITY_PRESET hidden)
# The same without the energy counter and the power limit: a driver before
# them (tests/energy.cmake).
add_library(fake_nvml_old SHARED ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/nvml/fake_nvml.c)
target_compile_definitions(fake_nvml_old PRIVATE FAKE_NVML_NO_ENERGY)
set_target_properties(fake_nvml_old PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${KBENCH_FIXTURE_DIR}/nvml
  C_VISIBILITY_PRESET hidden)

kbench_test(test_noise SOURCES test_noise.c)
target_compile_definitions(test_noise PRIVATE
  KBENCH_FAKE_NVML="${KBENCH_FIXTURE_DIR}/nvml/libfake_nvml.so")
add_dependencies(test_noise fake_nvml)
