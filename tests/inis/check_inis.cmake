# cmake -DKBENCH=path/to/kbench -DROOT=source-dir -P check_inis.cmake
# Runs `kbench run FILE --dry-run` on every shipped experiment file and fails
# naming each file that kbench refused, with kbench's own sentence.
file(GLOB _inis
  ${ROOT}/conf/*.ini
  ${ROOT}/plugins/*/*.ini
  ${ROOT}/tests/gpu/*.ini
  ${ROOT}/tests/gpu/*/*.ini
  ${ROOT}/tests/overhead/*.ini)
list(LENGTH _inis _count)
if(_count LESS 20)
  message(FATAL_ERROR "check_inis: only ${_count} experiment files found under ${ROOT}")
endif()
set(_bad "")
foreach(_ini IN LISTS _inis)
  execute_process(COMMAND ${KBENCH} run ${_ini} --dry-run
    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    string(STRIP "${_err}" _err)
    string(APPEND _bad "  ${_ini} (exit ${_rc}): ${_err}\n")
  endif()
endforeach()
if(_bad)
  message(FATAL_ERROR "check_inis: kbench refused shipped experiment files:\n${_bad}")
endif()
message(STATUS "check_inis: ${_count} experiment files plan without an error")
