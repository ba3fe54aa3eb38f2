/* describe.c: being written. */
