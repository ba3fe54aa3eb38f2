# Every results.json the tests write agrees with docs/results.schema.json.
#
# Each test runs with KBENCH_KEEP_RESULTS naming one folder, where kbench
# keeps a copy of every results.json it writes (kbc_results_keep, called by
# results_write.c for a run's and a merge's); the folder is emptied before the tests
# (schema_setup) and checked after all of them (schema), as a ctest fixture
# that every test requires, so that `ctest -R NAME` checks what NAME wrote.
# The test schema also makes one run of its own, so that it never passes on
# an empty folder.
set(KBENCH_KEPT_RESULTS ${CMAKE_BINARY_DIR}/tests/results-kept)
add_test(NAME schema_setup COMMAND ${CMAKE_COMMAND} -E rm -rf ${KBENCH_KEPT_RESULTS})
add_test(NAME schema
  COMMAND sh -c "\"$0\" run \"$1\" --plugin-path \"$2\" -q -o \"$3/own-run\" --force >/dev/null && python3 \"$4\" \"$5\" \"$3\""
          $<TARGET_FILE:kbench> ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/crash/good.ini
          ${KBENCH_FIXTURE_DIR}/crash ${KBENCH_KEPT_RESULTS}
          ${CMAKE_CURRENT_SOURCE_DIR}/schema/validate.py ${PROJECT_SOURCE_DIR}/docs/results.schema.json)
set_tests_properties(schema_setup PROPERTIES FIXTURES_SETUP kbench_results)
set_tests_properties(schema PROPERTIES FIXTURES_CLEANUP kbench_results SKIP_RETURN_CODE 77
  ENVIRONMENT "KBENCH_KEEP_RESULTS=${KBENCH_KEPT_RESULTS};KBENCH_PLUGIN_PATH=")

# Called at the end of tests/CMakeLists.txt, once every test is defined.
function(kbench_keep_results)
  get_property(all DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS all)
    if(t STREQUAL "schema" OR t STREQUAL "schema_setup")
      continue()
    endif()
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "KBENCH_KEEP_RESULTS=${KBENCH_KEPT_RESULTS}")
    set_property(TEST ${t} APPEND PROPERTY FIXTURES_REQUIRED kbench_results)
  endforeach()
endfunction()
