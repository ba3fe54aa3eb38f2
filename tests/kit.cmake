# The plugin kit (kbench/kit.h) on its CPU paths: no GPU, no stream.
kbench_test(test_kit SOURCES test_kit.c LIBRARIES kbench::kit m)
