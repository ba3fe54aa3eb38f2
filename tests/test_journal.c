/*
 * test_journal.c -- kbc_journal_resume on journals written by hand: a line
 * in the middle that is not JSON is refused with the file and line, and the
 * journal is left empty (nothing read before the refusal is kept, nothing
 * to close: the leak fuzz_journal found); a cut last line is dropped with a
 * warning and the entries before it are kept; a journal that is a FIFO is
 * refused without waiting.
 */
#include "kbench_cmd.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "journal.h"

TestSuite(journal, .init = kc_tmp, .fini = kc_tmp_remove);

#define HEADER "{\"kbench_journal\": 1, \"plan_hash\": \"abc\", \"shard\": null}\n"
#define ENTRY                                                                                  \
    "{\"exp\": \"a\", \"exp_index\": 0, \"point\": 0, \"plugin_sha256\": \"00\", "            \
    "\"gpu_model\": \"none\", \"rows\": []}\n"

Test(journal, damaged_middle_line_refused_and_left_empty)
{
    kc_write("journal.jsonl", HEADER ENTRY "{not json\n" ENTRY);
    kbc_journal j;
    kbc_diag d = {0};
    FILE *err = fopen("/dev/null", "w");
    int r = kbc_journal_resume(&j, kc_dir, "abc", 0, 0, 0, err, &d);
    fclose(err);
    cr_assert_eq(r, -1);
    cr_assert_not_null(strstr(d.msg, "journal.jsonl:3: is not a journal line"), "%s", d.msg);
    cr_assert_null(j.path);
    cr_assert_null(j.entries);
    cr_assert_eq(j.n_entries, 0);
    cr_assert_eq(j.fd, -1);
    kbc_journal_close(&j); /* harmless on an empty journal */
}

Test(journal, cut_last_line_dropped_with_a_warning)
{
    kc_write("journal.jsonl", HEADER ENTRY "{\"exp\": \"a\", \"exp_in");
    kbc_journal j;
    kbc_diag d = {0};
    char buf[512] = "";
    FILE *err = fmemopen(buf, sizeof buf, "w");
    int r = kbc_journal_resume(&j, kc_dir, "abc", 0, 0, 0, err, &d);
    fclose(err);
    cr_assert_eq(r, 0, "%s", d.msg);
    cr_assert_eq(j.n_entries, 1);
    cr_assert_str_eq(j.entries[0].exp, "a");
    cr_assert_not_null(strstr(buf, "its last line (line 3) was cut off"), "%s", buf);
    kbc_journal_close(&j);
}

/* What a crash mid-write leaves on the last line is dropped with the
   warning, whatever it holds: a whole line that is not JSON, and one that
   is JSON but no entry (once refused as damage). */
static void last_line_dropped(const char *last)
{
    char text[1024];
    snprintf(text, sizeof text, HEADER ENTRY "%s", last);
    kc_write("journal.jsonl", text);
    kbc_journal j;
    kbc_diag d = {0};
    char buf[512] = "";
    FILE *err = fmemopen(buf, sizeof buf, "w");
    int r = kbc_journal_resume(&j, kc_dir, "abc", 0, 0, 0, err, &d);
    fclose(err);
    cr_assert_eq(r, 0, "%s: %s", last, d.msg);
    cr_assert_eq(j.n_entries, 1);
    cr_assert_not_null(strstr(buf, "its last line (line 3) was cut off"), "%s", buf);
    kbc_journal_close(&j);
}

Test(journal, a_last_line_that_is_not_json_is_dropped_with_a_warning)
{
    last_line_dropped("not json at all\n");
}

Test(journal, a_last_line_that_is_json_but_no_entry_is_dropped_with_a_warning)
{
    last_line_dropped("{\"exp\": \"a\"}\n");
}

/* A journal that is a FIFO (nobody writing) was opened with fopen(), which
   waits for a writer for ever; the timeout fails a hang. */
Test(journal, a_fifo_as_the_journal_is_refused_at_once, .timeout = 10)
{
    char path[600];
    snprintf(path, sizeof path, "%s/journal.jsonl", kc_dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    kbc_journal j;
    kbc_diag d = {0};
    int r = kbc_journal_resume(&j, kc_dir, "abc", 0, 0, 0, stderr, &d);
    cr_assert_eq(r, -1);
    cr_assert_not_null(strstr(d.msg, "journal.jsonl: it is a named pipe, not a regular file; "
                                     "move it away"),
                       "%s", d.msg);
}
