# The one refusal rule (kbc_plan_refused) in run, check, tune and the dry
# run, and a point planned once (a worker never calls plan()), with the
# CPU plugins of tests/fixtures/refuse built into ${KBENCH_FIXTURE_DIR}/refuse.
kbench_add_plugin(refuse SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/refuse/refuse.c
  OUTPUT_DIRECTORY ${KBENCH_FIXTURE_DIR}/refuse NO_INSTALL)
target_link_libraries(refuse PRIVATE m)
kbench_test(test_refuse SOURCES test_refuse.c LIBRARIES PkgConfig::JANSSON)
add_dependencies(test_refuse kbench refuse)
