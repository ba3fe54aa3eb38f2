# Text from outside kbench (names, reasons, descriptions) in the table,
# markdown, CSV and JSON: nothing breaks out, nothing vanishes.
kbench_test(test_text SOURCES test_text.c LIBRARIES PkgConfig::JANSSON)
