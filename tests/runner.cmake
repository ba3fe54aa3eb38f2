# Point, scheduler, statistics and command-line tests, with the toy CPU plugin of
# tests/fixtures/runner built into ${KBENCH_FIXTURE_DIR}/runner.
set(KBENCH_RUNNER_FIXTURES ${KBENCH_FIXTURE_DIR}/runner)
kbench_add_plugin(toy SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/runner/toy.c
  OUTPUT_DIRECTORY ${KBENCH_RUNNER_FIXTURES} NO_INSTALL)
target_include_directories(toy PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/runner)
target_link_libraries(toy PRIVATE m)

kbench_test(test_stats SOURCES test_stats.c)

# The point's suites (exec/point.c, cuda/measure.c, the derived values)
# run points in process as a worker does, and share
# support/runner_harness.c.
foreach(_suite point measure value)
  kbench_test(test_${_suite} SOURCES test_${_suite}.c support/runner_harness.c)
  target_include_directories(test_${_suite} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/runner)
  add_dependencies(test_${_suite} toy)
endforeach()

# The scheduler (exec/supervisor.c) driven in process, with the built
# kbench binary as its workers, as `kbench run` drives it.
kbench_test(test_schedule SOURCES test_schedule.c)
add_dependencies(test_schedule kbench toy)
# The worker's request (exec/request.c): its arguments and orders.
kbench_test(test_request SOURCES test_request.c)

# The command-line tests run the built kbench binary itself.
kbench_test(test_cli SOURCES test_cli.c)
add_dependencies(test_cli kbench toy kbcheckfix_chatty)

# A CUDA plugin that makes CUDA errors on purpose; the test that uses it
# runs only where a GPU is present.
kbench_add_plugin(fault SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/runner/fault.cu
  OUTPUT_DIRECTORY ${KBENCH_RUNNER_FIXTURES} NO_INSTALL)
add_dependencies(test_point fault)

# The next point's host half made beside the current one (exec/prefetch.c),
# with a CPU plugin whose setup() comes in two halves through the kit
# (tests/fixtures/prefetch).
kbench_add_plugin(pre SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/prefetch/pre.c
  OUTPUT_DIRECTORY ${KBENCH_FIXTURE_DIR}/prefetch NO_INSTALL KIT)
target_include_directories(pre PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/prefetch)
target_link_libraries(pre PRIVATE m)
kbench_test(test_prefetch SOURCES test_prefetch.c)
target_include_directories(test_prefetch PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/prefetch)
add_dependencies(test_prefetch pre toy kbench)
# The same, through the kbench binary: the prefetch key, --timeline, --costs.
kbench_test(test_busy SOURCES test_busy.c LIBRARIES PkgConfig::JANSSON)
add_dependencies(test_busy pre toy kbench)
