# kbench compare: the bootstrap verdict, and the command on the fixture
# pairs of tests/data/compare/.
kbench_test(test_compare SOURCES test_compare.c LIBRARIES PkgConfig::JANSSON)
add_dependencies(test_compare kbench)

# The table of docs/energy.md, "Comparing energy" (not a test): compare's
# rule on seeded energy windows.
add_executable(energy_compare_calibrate energy_compare_calibrate.c)
target_link_libraries(energy_compare_calibrate PRIVATE kbench_analysis)
