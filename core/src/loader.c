/* loader.c: being written. */
