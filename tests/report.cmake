# The reporters: table, CSV and JSON, fed hand-built rows.
kbench_test(test_report SOURCES test_report.c LIBRARIES PkgConfig::JANSSON)
