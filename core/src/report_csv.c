/* report_csv.c: being written. */
