# kbench report: the HTML page of a fixture results.json (escaping, the
# tables, the plots, a baseline's verdicts, bad input), and the page opened
# in headless Chromium (skipped, saying why, where Chromium is missing).
kbench_test(test_html SOURCES test_html.c)
add_dependencies(test_html kbench)
