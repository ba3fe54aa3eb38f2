# kbench run as a supervisor of worker processes (tests/test_supervise.c):
# containment of crashes, exits, garbage and hangs, where each row ran,
# --resume after a kill -9, a cut journal or a Ctrl-C, and the refusals
# around -o, --resume, --force and --isolate.  The tests run the kbench
# binary on the crash fixture plugin (tests/crash.cmake) and the INI files
# of tests/fixtures/crash.
kbench_test(test_supervise SOURCES test_supervise.c LIBRARIES PkgConfig::JANSSON)
add_dependencies(test_supervise kbench crash)
