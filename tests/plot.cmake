# kbench plot: scripts from a fixture results.json, and gnuplot's verdict
# on them where gnuplot is installed.
kbench_test(test_plot SOURCES test_plot.c)
add_dependencies(test_plot kbench)
