# The fan-out to the outputs (views/fanout.c): the failure policy of a sink
# that cannot write, and the suspect rows found once for every sink.
kbench_test(test_fanout SOURCES test_fanout.c)
