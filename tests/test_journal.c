/*
 * test_journal.c -- kbc_journal_resume on journals written by hand: a line
 * in the middle that is not JSON is refused with the file and line, and the
 * journal is left empty (nothing read before the refusal is kept, nothing
 * to close: the leak fuzz_journal found); a cut last line is dropped with a
 * warning and the entries before it are kept.
 */
#include "kbench_cmd.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

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
