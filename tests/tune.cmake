# The tuner (kbench tune, core/src/tune) and points that plan() refuses
# (`invalid` rows), with the CPU plugin of known landscapes in
# tests/fixtures/tune built into ${KBENCH_FIXTURE_DIR}/tune.
set(KBENCH_TUNE_FIXTURES ${KBENCH_FIXTURE_DIR}/tune)
kbench_add_plugin(landscape SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/tune/landscape.c
  OUTPUT_DIRECTORY ${KBENCH_TUNE_FIXTURES} NO_INSTALL)
target_include_directories(landscape PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/tune)

# kbench run on a sweep with refused points: the rows, the outputs, the
# exit code, the dry run and kbench check.
kbench_test(test_invalid SOURCES test_invalid.c LIBRARIES PkgConfig::JANSSON)
add_dependencies(test_invalid kbench landscape)

# The strategies on known landscapes and the constraint expressions,
# without running anything.
kbench_test(test_tune_search SOURCES test_tune_search.c)
target_include_directories(test_tune_search PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/tune)
kbench_test(test_tune_expr SOURCES test_tune_expr.c)

# kbench tune end to end on the landscape plugin.
kbench_test(test_tune SOURCES test_tune.c LIBRARIES PkgConfig::JANSSON)
add_dependencies(test_tune kbench landscape crash)
