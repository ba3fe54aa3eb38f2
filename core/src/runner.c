/* runner.c: being written. */
