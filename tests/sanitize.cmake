# kbench run --sanitize TOOL without a GPU or a compute-sanitizer: a fake
# compute-sanitizer (tests/fixtures/sanitize/compute-sanitizer, put on PATH
# by the test) records the command line the supervisor builds and reports
# errors for the variant the test names; the sentence when none is found;
# the usage errors.  The split plugin of tests/fixtures/refuse runs.
# tests/gpu/sanitize.sh checks the real one on a GPU.
kbench_test(test_sanitize SOURCES test_sanitize.c LIBRARIES PkgConfig::JANSSON)
target_compile_definitions(test_sanitize PRIVATE
  KBENCH_FAKE_SANITIZER_DIR="${CMAKE_CURRENT_SOURCE_DIR}/fixtures/sanitize"
  KBENCH_CUDA_BIN_DIR="${CUDAToolkit_BIN_DIR}")
add_dependencies(test_sanitize kbench refuse)
