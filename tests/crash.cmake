# Plugins that misbehave on purpose, for the tests of kbench's worker
# processes (a crash, an exit, a hang or garbage on the worker's channel is
# recorded and the sweep goes on): crash (CPU) and gpucrash (CUDA), built
# into ${KBENCH_FIXTURE_DIR}/crash.  The INI files beside their sources
# (tests/fixtures/crash/*.ini) are the sweeps those tests run.
set(KBENCH_CRASH_FIXTURES ${KBENCH_FIXTURE_DIR}/crash)
kbench_add_plugin(crash SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/crash/crash.c
  OUTPUT_DIRECTORY ${KBENCH_CRASH_FIXTURES} NO_INSTALL)
target_compile_options(crash PRIVATE ${KBENCH_C_WARNINGS})
kbench_add_plugin(gpucrash SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/crash/gpucrash.cu
  OUTPUT_DIRECTORY ${KBENCH_CRASH_FIXTURES} NO_INSTALL)
# nvcc passes one host-compiler flag per -Xcompiler (it splits at commas).
target_compile_options(gpucrash PRIVATE -Xcompiler=-Wall -Xcompiler=-Wextra -Xcompiler=-Wshadow
  -Xcompiler=-Wno-unused-parameter)

# Both load: describe shows crash's parameters, list names both plugins.
# Neither runs a bad variant.
add_test(NAME crash_describe
  COMMAND kbench describe crash --plugin-path ${KBENCH_CRASH_FIXTURES})
set_tests_properties(crash_describe PROPERTIES ENVIRONMENT "KBENCH_PLUGIN_PATH="
  PASS_REGULAR_EXPRESSION "bad_n" TIMEOUT 60)
# One pattern that needs both names at the start of a line, in either order
# (several patterns would pass on any one of them).
add_test(NAME crash_list
  COMMAND kbench list --plugin-path ${KBENCH_CRASH_FIXTURES})
set_tests_properties(crash_list PROPERTIES ENVIRONMENT "KBENCH_PLUGIN_PATH="
  PASS_REGULAR_EXPRESSION "(^|\n)crash  .*\ngpucrash  |(^|\n)gpucrash  .*\ncrash  " TIMEOUT 60)
# The good variants alone pass, whether or not points run in workers.
add_test(NAME crash_good_run
  COMMAND kbench run ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/crash/good.ini -q
          --plugin-path ${KBENCH_CRASH_FIXTURES})
set_tests_properties(crash_good_run PROPERTIES ENVIRONMENT "KBENCH_PLUGIN_PATH=" TIMEOUT 60)
