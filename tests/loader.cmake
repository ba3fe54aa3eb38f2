# Loader, list and describe tests, with fixture plugins built here.
#
# fixtures/loader/         a good plugin, one of ABI 99, one without the
#                          entry symbol, one without run(), one declaring no
#                          plugin, one with three descriptors, a text file
#                          named bogus.so, and a second file named "good"
# fixtures/loader/second/  another "good", to check which folder wins
# fixtures/loader/abi/     ABI compatibility: an older minor with smaller
#                          structures, a newer minor with larger ones, the
#                          previous minors (minor1.c: kb_work before minor 2;
#                          minor2.c: kb_param before minor 3),
#                          counted enum choices, variant flags and uses, a
#                          "good" beside them, and one malformed descriptor
#                          per file (bad-*.so)
set(KBENCH_LOADER_FIXTURES ${KBENCH_FIXTURE_DIR}/loader)
set(_lfix ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/loader)

# kbfix_plugin(TARGET FILE_NAME DIR SOURCE [DEFINITIONS...])
function(kbfix_plugin target file dir source)
  kbench_add_plugin(${target} SOURCES ${_lfix}/${source} OUTPUT_DIRECTORY ${dir} NO_INSTALL)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${file})
  if(ARGN)
    target_compile_definitions(${target} PRIVATE ${ARGN})
  endif()
  target_link_libraries(${target} PRIVATE m)
endfunction()

kbfix_plugin(kbfix_good good ${KBENCH_LOADER_FIXTURES} good.c
  FIXTURE_NAME="good" FIXTURE_SUMMARY="Sums an array of doubles on the CPU")
kbfix_plugin(kbfix_good_again good_again ${KBENCH_LOADER_FIXTURES} good.c
  FIXTURE_NAME="good" FIXTURE_SUMMARY="A second plugin called good")
kbfix_plugin(kbfix_other other ${KBENCH_LOADER_FIXTURES}/second good.c
  FIXTURE_NAME="good" FIXTURE_SUMMARY="The good plugin of the second folder")
kbfix_plugin(kbfix_abi99 abi99 ${KBENCH_LOADER_FIXTURES} abi99.c)
kbfix_plugin(kbfix_noentry noentry ${KBENCH_LOADER_FIXTURES} noentry.c)
kbfix_plugin(kbfix_malformed malformed ${KBENCH_LOADER_FIXTURES} malformed.c)
kbfix_plugin(kbfix_empty empty ${KBENCH_LOADER_FIXTURES} empty.c)
kbfix_plugin(kbfix_twin twin ${KBENCH_LOADER_FIXTURES} twin.c)
# Not an ELF file at all, but named like a plugin.
file(WRITE ${KBENCH_LOADER_FIXTURES}/bogus.so "This is a text file, not a shared object.\n")

set(_abi ${KBENCH_LOADER_FIXTURES}/abi)
kbfix_plugin(kbfix_abi_good good ${_abi} good.c
  FIXTURE_NAME="good" FIXTURE_SUMMARY="The good plugin beside the ABI fixtures")
kbfix_plugin(kbfix_abi_older older ${_abi} abi/older.c)
kbfix_plugin(kbfix_abi_newer newer ${_abi} abi/newer.c)
kbfix_plugin(kbfix_abi_minor1 minor1 ${_abi} abi/minor1.c)
kbfix_plugin(kbfix_abi_minor2 minor2 ${_abi} abi/minor2.c)
kbfix_plugin(kbfix_abi_counted counted ${_abi} abi/counted.c)
kbfix_plugin(kbfix_abi_flagged flagged ${_abi} abi/flagged.c)
set(_abi_targets kbfix_abi_good kbfix_abi_older kbfix_abi_newer kbfix_abi_minor1 kbfix_abi_minor2
  kbfix_abi_counted kbfix_abi_flagged)
# One file per malformation: bad-no_choices.so declares plugin bad_no_choices.
foreach(bad no_choices null_choice flags uses param_size variant_size ops_size ops_null
    n_params multiple multiple_def)
  string(TOUPPER ${bad} _def)
  kbfix_plugin(kbfix_bad_${bad} bad-${bad} ${_abi} abi/bad.c BAD_${_def}
    BAD_NAME="bad_${bad}")
  list(APPEND _abi_targets kbfix_bad_${bad})
endforeach()

kbench_test(test_loader SOURCES test_loader.c)
add_dependencies(test_loader kbfix_good kbfix_good_again kbfix_other kbfix_abi99
  kbfix_noentry kbfix_malformed kbfix_empty kbfix_twin ${_abi_targets} kbench)
# A loader that hangs (a plugin whose entry never returns) must fail, not
# stall the suite.
set_tests_properties(test_loader PROPERTIES TIMEOUT 120)
