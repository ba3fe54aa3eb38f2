# kbench compare: the bootstrap verdict, and the command on the fixture
# pairs of tests/data/compare/.
kbench_test(test_compare SOURCES test_compare.c LIBRARIES PkgConfig::JANSSON)
add_dependencies(test_compare kbench)
