# The reporters: table, CSV and JSON, fed hand-built rows.
kbench_test(test_report SOURCES test_report.c LIBRARIES PkgConfig::JANSSON)

# The reporters and the results reader link without the configuration
# layer, the runner or CUDA: this test links kbench_views alone.
add_executable(test_records test_records.c)
target_include_directories(test_records PRIVATE ${CRITERION_INCLUDE})
target_link_libraries(test_records PRIVATE kbench_views ${CRITERION_LIB})
add_test(NAME test_records COMMAND test_records --jobs 2)
