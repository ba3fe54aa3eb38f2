# The journal's reader (core/src/data/journal.c) called directly: what a
# refused resume leaves behind, and a cut last line.  The runs that write and
# resume journals through kbench are in supervise.cmake.
kbench_test(test_journal SOURCES test_journal.c LIBRARIES PkgConfig::JANSSON)
