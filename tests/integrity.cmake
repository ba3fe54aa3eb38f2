# kbench's integrity checks (docs/integrity.md) against plugins that cheat
# on purpose: cheats (CPU; tests/fixtures/integrity/cheats.c) for
# test_integrity here, and gpucheats (CUDA; gpucheats.cu beside it) for
# tests/gpu/integrity.sh on a GPU machine.  Both are built into
# ${KBENCH_FIXTURE_DIR}/integrity.
set(KBENCH_INTEGRITY_FIXTURES ${KBENCH_FIXTURE_DIR}/integrity)
kbench_add_plugin(cheats SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/integrity/cheats.c
  OUTPUT_DIRECTORY ${KBENCH_INTEGRITY_FIXTURES} NO_INSTALL)
target_link_libraries(cheats PRIVATE Threads::Threads)
target_compile_options(cheats PRIVATE ${KBENCH_C_WARNINGS})
kbench_add_plugin(gpucheats SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/integrity/gpucheats.cu
  OUTPUT_DIRECTORY ${KBENCH_INTEGRITY_FIXTURES} NO_INSTALL)
target_link_libraries(gpucheats PRIVATE Threads::Threads)
target_compile_options(gpucheats PRIVATE -Xcompiler=-Wall -Xcompiler=-Wextra)

kbench_test(test_integrity SOURCES test_integrity.c)
add_dependencies(test_integrity kbench cheats gpucheats)
