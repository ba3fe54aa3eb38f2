# The GPUs NVML lists (kbc_nvml_list) and PCI bus ids compared, against the
# fake libnvidia-ml that tests/noise.cmake builds (FAKE_NVML_GPUS devices).
kbench_test(test_nvml_list SOURCES test_nvml_list.c)
target_compile_definitions(test_nvml_list PRIVATE
  KBENCH_FAKE_NVML="${KBENCH_FIXTURE_DIR}/nvml/libfake_nvml.so")
add_dependencies(test_nvml_list fake_nvml)
