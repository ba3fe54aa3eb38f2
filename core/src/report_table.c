/* report_table.c: being written. */
