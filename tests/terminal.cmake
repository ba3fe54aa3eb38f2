# The terminal: the progress line's width, colour on a terminal (NO_COLOR
# honoured), the noisy note once, no repeated "vs cpu", the machine line.
kbench_test(test_terminal SOURCES test_terminal.c)
