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

set(KBENCH_FUZZ_SECONDS 20 CACHE STRING "Seconds each fuzz test fuzzes")

# kbench_fuzz(NAME MAX_LEN CORPUS SOURCES ...): builds the harness NAME from
# its sources with clang (libFuzzer, ASan, UBSan) against the source tree's
# core/src folders, and adds the CTest entry NAME, which fuzzes for
# KBENCH_FUZZ_SECONDS from tests/fuzz/CORPUS.  New inputs go to a folder of
# the build (found-NAME), never into the source tree; a failing input is
# written as fuzz/NAME-crash-... (or -leak-, -timeout-).
function(kbench_fuzz name max_len corpus)
  set(bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz/${name})
  set(src ${PROJECT_SOURCE_DIR}/core/src)
  add_custom_command(OUTPUT ${bin}
    COMMAND ${KBENCH_FUZZ_CC} -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined
            -fno-sanitize-recover=undefined
            -I${src}/config -I${src}/data -I${src}/base -I${src}/history -I${src}/tune
            -I${PROJECT_SOURCE_DIR}/core/include
            ${ARGN} ${INIH_LINK_LIBRARIES} ${JANSSON_LINK_LIBRARIES} ${SQLITE3_LINK_LIBRARIES}
            -lm -o ${bin}
    DEPENDS ${ARGN}
    COMMENT "Building the fuzzing harness ${name} with ${KBENCH_FUZZ_CC}")
  add_custom_target(${name} ALL DEPENDS ${bin})
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz/found-${name})
  add_test(NAME ${name}
    COMMAND ${bin} -max_total_time=${KBENCH_FUZZ_SECONDS} -timeout=10 -max_len=${max_len}
            -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/fuzz/${name}-
            ${CMAKE_CURRENT_BINARY_DIR}/fuzz/found-${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${corpus})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120)
endfunction()

set(_src ${PROJECT_SOURCE_DIR}/core/src)
set(_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
set(_base ${_src}/base/util.c ${_src}/base/text.c ${_src}/base/input.c)
set(_results_reader ${_src}/data/results_read.c ${_src}/data/record.c ${_base}
    ${_src}/base/stats.c)

# The INI reader and the value and sweep parsers.
kbench_fuzz(fuzz_ini 4096 corpus ${_fuzz}/fuzz_ini.c ${_src}/config/ini.c
            ${_src}/config/value.c ${_src}/config/sweep.c ${_base})
# The reader of results.json (compare, merge, plot, report, history and
# --baseline take these files from users).
kbench_fuzz(fuzz_results 16384 corpus-results ${_fuzz}/fuzz_results.c ${_results_reader})
# The journal's reader (`kbench run --resume`): the input is written as a
# scratch folder's journal.jsonl and resumed; it found the refusal that kept
# what it had read (fixed: a refused resume leaves the journal empty).
kbench_fuzz(fuzz_journal 16384 corpus-journal ${_fuzz}/fuzz_journal.c ${_src}/data/journal.c
            ${_results_reader})
# The history database file itself (a file that is shared, copied and kept
# for years): arbitrary bytes as the database, opened for reading and
# queried, opened for writing (identified, upgraded), a run added, queried
# again.  Its corpus: histories kbench wrote (layouts 1 and 2, empty, with
# runs) and a few headers that are not (another program's, a negative
# layout version).
kbench_fuzz(fuzz_history 65536 corpus-history ${_fuzz}/fuzz_history.c
            ${_src}/history/history.c ${_src}/history/import.c ${_src}/history/query.c
            ${_src}/history/stepfit.c ${_src}/history/commit.c ${_results_reader}
            ${_src}/base/sha256.c ${_src}/base/child.c)
# The constraint of kbench tune: parsed against a plugin's names, evaluated
# at the edges of 64-bit integers.  Its corpus: the constraints of the docs
# and tests, and a few at the bounds.
kbench_fuzz(fuzz_expr 8192 corpus-expr ${_fuzz}/fuzz_expr.c ${_src}/tune/expr.c ${_base})
