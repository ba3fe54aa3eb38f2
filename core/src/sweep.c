/* sweep.c: being written. */
