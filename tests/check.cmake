# `kbench check`: fixture plugins that each break one rule (built from one
# source, tests/fixtures/check/checkfix.c, with one macro each), the tests
# that run the check on them, and one CTest entry check_<plugin> per plugin
# of the tree.
set(KBENCH_CHECK_FIXTURES ${KBENCH_FIXTURE_DIR}/check)
set(_kbcheck_fixtures)
# name -> macro; "good" defines none.
foreach(pair good: verify_always:CHECKFIX_VERIFY_ALWAYS no_poison:CHECKFIX_NO_POISON
        impure_plan:CHECKFIX_IMPURE_PLAN contradict:CHECKFIX_CONTRADICT
        wrong_run:CHECKFIX_WRONG_RUN plan_leak:CHECKFIX_PLAN_LEAK
        silent_einval:CHECKFIX_SILENT_EINVAL chatty:CHECKFIX_CHATTY
        plan_crash:CHECKFIX_PLAN_CRASH)
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 fname)
  list(LENGTH pair plen)
  set(target kbcheckfix_${fname})
  kbench_add_plugin(${target} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/check/checkfix.c
    OUTPUT_DIRECTORY ${KBENCH_CHECK_FIXTURES} NO_INSTALL LIBRARIES m)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME checkfix_${fname})
  target_compile_definitions(${target} PRIVATE CHECKFIX_NAME="checkfix_${fname}")
  if(plen GREATER 1)
    list(GET pair 1 macro)
    if(macro)
      target_compile_definitions(${target} PRIVATE ${macro}=1)
    endif()
  endif()
  list(APPEND _kbcheck_fixtures ${target})
endforeach()

kbench_test(test_check SOURCES test_check.c)
# The crash plugin (tests/crash.cmake) crashes, exits and hangs under check.
add_dependencies(test_check ${_kbcheck_fixtures} crash kbench)

# check_<plugin> for every plugin kbench_add_plugin() made in the tree (the
# list is kept by cmake/KbenchPlugin.cmake), so that a new family gets its
# conformance test without editing anything here.  The test is named after
# the file (kbench-NAME.so -> NAME), which the tree's families name after
# the plugin.  CUDA variants are checked where there is a GPU, skipped
# elsewhere.
get_property(_kbcheck_plugins GLOBAL PROPERTY KBENCH_PLUGIN_TARGETS)
foreach(target IN LISTS _kbcheck_plugins)
  get_target_property(pname ${target} OUTPUT_NAME)
  if(NOT pname)
    set(pname ${target})
  endif()
  add_test(NAME check_${pname} COMMAND kbench check ${pname})
  set_tests_properties(check_${pname} PROPERTIES ENVIRONMENT "KBENCH_PLUGIN_PATH=")
endforeach()
