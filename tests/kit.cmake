# The plugin kit (kbench/kit.h) on its CPU paths: no GPU, no stream.
kbench_test(test_kit SOURCES test_kit.c LIBRARIES kbench::kit m)

# kbench/kit_family.h on a tiny family whose rows are fixtures/kit/tiny_variants.def.
kbench_test(test_kit_family SOURCES test_kit_family.c)
target_include_directories(test_kit_family PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/kit)
