/* report_json.c: being written. */
