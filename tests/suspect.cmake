# Rows slower than a larger point of their variant: found, and named in the
# table, results.md and results.json (records/suspect.c).
kbench_test(test_suspect SOURCES test_suspect.c LIBRARIES PkgConfig::JANSSON)
