# What kbench run leaves when its outputs fail (a disk that fills up: a
# small tmpfs the tests mount as root, skipped where mount is refused; an
# output that is /dev/full), and how soon results.json follows the run
# (tests/test_output.c).  The runs use the crash fixture plugin.
kbench_test(test_output SOURCES test_output.c LIBRARIES PkgConfig::JANSSON)
add_dependencies(test_output kbench crash)
