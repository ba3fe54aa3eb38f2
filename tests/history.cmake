# The history of runs (core/src/history, cli/history_cmd.c): the step
# detector on seeded synthetic series, imports, concurrency, migration and
# bad database files through the API, and the commands through the binary.
kbench_test(test_history SOURCES test_history.c LIBRARIES PkgConfig::SQLITE3)
add_dependencies(test_history kbench toy)
