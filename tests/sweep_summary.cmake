# An experiment's sweep at a glance (analysis/sweep_summary.c): made once by
# the fan-out, shown by the table, --summary-only, results.md and the HTML
# report.
kbench_test(test_sweep_summary SOURCES test_sweep_summary.c)
