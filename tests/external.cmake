# The install and out-of-tree plugin test: installs this build into a
# temporary prefix, builds tests/external against it with find_package(kbench)
# and runs the installed kbench on the result.  It needs the whole build
# (kbench and every plugin), which `cmake --build` makes before `ctest`.
add_test(NAME external_plugin
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/external/run_external.sh
          ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/external
          ${CMAKE_COMMAND} ${CMAKE_GENERATOR})
set_tests_properties(external_plugin PROPERTIES ENVIRONMENT "KBENCH_PLUGIN_PATH=" TIMEOUT 300)
