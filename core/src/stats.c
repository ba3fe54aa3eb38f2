/* stats.c: being written. */
