# Rows slower than a larger point of their variant: found once by the fan-out
# (views/fanout.c, analysis/suspect.c), named in the table, results.md and
# results.json, read back, and listed by the HTML report.
kbench_test(test_suspect SOURCES test_suspect.c LIBRARIES PkgConfig::JANSSON)
