# Every experiment file the repository ships plans without an error: conf/
# (installed as examples), the families' GPU files, tests/gpu and
# tests/overhead.  `kbench run FILE --dry-run` checks each key, value, sweep
# and plugin as a real run would, and runs nothing.  The files name all four
# families, so a build that leaves one out (KBENCH_FAMILIES) skips the test.
set(_kbench_inis_families TRUE)
foreach(_family matmul reduce sort transpose)
  if(NOT _family IN_LIST KBENCH_FAMILY_LIST)
    set(_kbench_inis_families FALSE)
  endif()
endforeach()
if(_kbench_inis_families)
  add_test(NAME shipped_inis
    COMMAND ${CMAKE_COMMAND} -DKBENCH=$<TARGET_FILE:kbench> -DROOT=${PROJECT_SOURCE_DIR}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/inis/check_inis.cmake)
  # The GPU scripts' files also name the test fixtures they run
  # (tests/gpu/energy: idlespin).
  set_tests_properties(shipped_inis PROPERTIES
    ENVIRONMENT "KBENCH_PLUGIN_PATH=${KBENCH_FIXTURE_DIR}/energy")
else()
  message(STATUS "shipped_inis is left out: the shipped experiment files name every family, "
    "and KBENCH_FAMILIES leaves some out")
endif()
