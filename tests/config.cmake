# Config layer tests: the INI reader, values and sweeps, and plan building.
# They use hand-made plugin descriptors registered in memory, so they build
# no fixture plugins and need no GPU.
kbench_test(test_ini SOURCES test_ini.c)
kbench_test(test_sweep SOURCES test_sweep.c)
kbench_test(test_config SOURCES test_config.c)
