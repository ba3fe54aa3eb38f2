/* ini.c: being written. */
