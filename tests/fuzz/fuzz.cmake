# The libFuzzer harness of the INI and value layers, and a test that fuzzes
# for a bounded time.  libFuzzer comes with clang only; the harness is built
# with clang through a custom command, so the rest of the build keeps its
# own compiler (and the default build never needs clang).
if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(KBENCH_FUZZ_CC ${CMAKE_C_COMPILER})
else()
  find_program(KBENCH_FUZZ_CC NAMES clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14)
endif()
if(NOT KBENCH_FUZZ_CC)
  message(FATAL_ERROR
    "KBENCH_FUZZ=ON needs clang, which has libFuzzer, and no clang was found: install it "
    "(apt-get install clang) or configure without -DKBENCH_FUZZ=ON.")
endif()
message(STATUS "kbench: fuzzing harness built with ${KBENCH_FUZZ_CC}")

set(KBENCH_FUZZ_SECONDS 20 CACHE STRING "Seconds the fuzz_ini test fuzzes")
set(fuzz_bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz/fuzz_ini)
set(fuzz_sources
  ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_ini.c
  ${PROJECT_SOURCE_DIR}/core/src/config/ini.c
  ${PROJECT_SOURCE_DIR}/core/src/config/value.c
  ${PROJECT_SOURCE_DIR}/core/src/config/sweep.c
  ${PROJECT_SOURCE_DIR}/core/src/base/util.c)
add_custom_command(OUTPUT ${fuzz_bin}
  COMMAND ${KBENCH_FUZZ_CC} -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined
          -fno-sanitize-recover=undefined
          -I${PROJECT_SOURCE_DIR}/core/src/config -I${PROJECT_SOURCE_DIR}/core/src/base
          -I${PROJECT_SOURCE_DIR}/core/include
          ${fuzz_sources} ${INIH_LINK_LIBRARIES} -lm -o ${fuzz_bin}
  DEPENDS ${fuzz_sources}
  COMMENT "Building the fuzzing harness fuzz_ini with ${KBENCH_FUZZ_CC}")
add_custom_target(fuzz_ini ALL DEPENDS ${fuzz_bin})

# New inputs go to a folder of the build, never into the source tree.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz/found)
add_test(NAME fuzz_ini
  COMMAND ${fuzz_bin} -max_total_time=${KBENCH_FUZZ_SECONDS} -timeout=10 -max_len=4096
          -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/fuzz/
          ${CMAKE_CURRENT_BINARY_DIR}/fuzz/found ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus)
set_tests_properties(fuzz_ini PROPERTIES TIMEOUT 120)

# The reader of results.json (compare, merge, plot, report, history and
# --baseline take these files from users): the same bounded test.
set(fuzz_results_bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz/fuzz_results)
set(fuzz_results_sources
  ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_results.c
  ${PROJECT_SOURCE_DIR}/core/src/records/results_read.c
  ${PROJECT_SOURCE_DIR}/core/src/records/record.c
  ${PROJECT_SOURCE_DIR}/core/src/base/util.c
  ${PROJECT_SOURCE_DIR}/core/src/base/text.c
  ${PROJECT_SOURCE_DIR}/core/src/base/stats.c)
add_custom_command(OUTPUT ${fuzz_results_bin}
  COMMAND ${KBENCH_FUZZ_CC} -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined
          -fno-sanitize-recover=undefined
          -I${PROJECT_SOURCE_DIR}/core/src/records -I${PROJECT_SOURCE_DIR}/core/src/base
          -I${PROJECT_SOURCE_DIR}/core/include
          ${fuzz_results_sources} ${JANSSON_LINK_LIBRARIES} -lm -o ${fuzz_results_bin}
  DEPENDS ${fuzz_results_sources}
  COMMENT "Building the fuzzing harness fuzz_results with ${KBENCH_FUZZ_CC}")
add_custom_target(fuzz_results ALL DEPENDS ${fuzz_results_bin})
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz/found-results)
add_test(NAME fuzz_results
  COMMAND ${fuzz_results_bin} -max_total_time=${KBENCH_FUZZ_SECONDS} -timeout=10 -max_len=16384
          -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/fuzz/results-
          ${CMAKE_CURRENT_BINARY_DIR}/fuzz/found-results ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus-results)
set_tests_properties(fuzz_results PROPERTIES TIMEOUT 120)

# The journal's reader (`kbench run --resume`): the input is written as a
# scratch folder's journal.jsonl and resumed; found the refusal that kept
# what it had read (fixed: a refused resume leaves the journal empty).
set(fuzz_journal_bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz/fuzz_journal)
set(fuzz_journal_sources
  ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_journal.c
  ${PROJECT_SOURCE_DIR}/core/src/exec/journal.c
  ${fuzz_results_sources})
list(REMOVE_ITEM fuzz_journal_sources ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_results.c)
add_custom_command(OUTPUT ${fuzz_journal_bin}
  COMMAND ${KBENCH_FUZZ_CC} -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined
          -fno-sanitize-recover=undefined
          -I${PROJECT_SOURCE_DIR}/core/src/exec -I${PROJECT_SOURCE_DIR}/core/src/records
          -I${PROJECT_SOURCE_DIR}/core/src/base -I${PROJECT_SOURCE_DIR}/core/include
          ${fuzz_journal_sources} ${JANSSON_LINK_LIBRARIES} -lm -o ${fuzz_journal_bin}
  DEPENDS ${fuzz_journal_sources}
  COMMENT "Building the fuzzing harness fuzz_journal with ${KBENCH_FUZZ_CC}")
add_custom_target(fuzz_journal ALL DEPENDS ${fuzz_journal_bin})
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz/found-journal)
add_test(NAME fuzz_journal
  COMMAND ${fuzz_journal_bin} -max_total_time=${KBENCH_FUZZ_SECONDS} -timeout=10 -max_len=16384
          -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/fuzz/journal-
          ${CMAKE_CURRENT_BINARY_DIR}/fuzz/found-journal ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus-journal)
set_tests_properties(fuzz_journal PROPERTIES TIMEOUT 120)
