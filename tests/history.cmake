# The history of runs (core/src/history, cli/history_cmd.c): the step
# detector on seeded synthetic series, imports, concurrency, migration and
# bad database files through the API, and the commands through the binary.
kbench_test(test_history SOURCES test_history.c LIBRARIES PkgConfig::SQLITE3)
add_dependencies(test_history kbench toy)

# The penalty's calibration table of docs/history.md (not a test).
add_executable(stepfit_calibrate stepfit_calibrate.c)
target_link_libraries(stepfit_calibrate PRIVATE kbench_history)
