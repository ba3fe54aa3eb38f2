# A core-only configure builds no tests unless asked, so it needs no
# Criterion (tests/corebuild/check_core_only.sh configures two throwaway
# build folders).
add_test(NAME core_only_configure
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/corebuild/check_core_only.sh
          ${PROJECT_SOURCE_DIR} ${CMAKE_COMMAND} ${CMAKE_GENERATOR})
set_tests_properties(core_only_configure PROPERTIES TIMEOUT 300)
