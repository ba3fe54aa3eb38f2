/* gpu.c: being written. */
