/* test_util.c -- kbc_make_dirs (mkdir -p), kbc_word_in (a word of a
   space-separated list), and kbc_human_seconds, the one duration formatter of the
   table, compare, history and the suspect rows: the unit that puts the
   number in [1, 1000), 4 significant digits, "-" for no value. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "util.h"

static const char *secs(double s)
{
    static char buf[32];
    return kbc_human_seconds(s, buf, sizeof buf);
}

Test(human_seconds, picks_the_unit_that_keeps_the_number_under_1000)
{
    cr_assert_str_eq(secs(12e-9), "12 ns");
    cr_assert_str_eq(secs(123.44e-6), "123.4 us");
    cr_assert_str_eq(secs(62e-6), "62 us");
    cr_assert_str_eq(secs(2.5e-3), "2.5 ms");
    cr_assert_str_eq(secs(3.0), "3 s");
}

Test(human_seconds, seconds_are_the_largest_unit)
{
    cr_assert_str_eq(secs(4321.0), "4321 s");
}

Test(human_seconds, a_value_that_rounds_to_1000_takes_the_next_unit)
{
    cr_assert_str_eq(secs(999.96e-9), "1 us");
    cr_assert_str_eq(secs(999.94e-9), "999.9 ns");
}

Test(human_seconds, no_value_is_a_dash)
{
    cr_assert_str_eq(secs(NAN), "-");
    cr_assert_str_eq(secs(INFINITY), "-");
    cr_assert_str_eq(secs(-1e-6), "-");
}

Test(word_in, finds_a_whole_word_of_a_list)
{
    cr_assert_eq(kbc_word_in("run plot merge", "run"), 1);
    cr_assert_eq(kbc_word_in("run plot merge", "plot"), 1);
    cr_assert_eq(kbc_word_in("run plot merge", "merge"), 1);
}

Test(word_in, a_part_of_a_word_is_not_a_word)
{
    cr_assert_eq(kbc_word_in("run plot merge", "me"), 0);
    cr_assert_eq(kbc_word_in("run plot merge", "runs"), 0);
    cr_assert_eq(kbc_word_in("run plot merge", ""), 0);
    cr_assert_eq(kbc_word_in("", "run"), 0);
}

Test(make_dirs, creates_the_folder_and_its_missing_parents)
{
    char dir[] = "/tmp/kbench-util-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *deep = kbc_xasprintf("%s/a/b/c/", dir);
    cr_assert_eq(kbc_make_dirs(deep), 0);
    struct stat st;
    cr_assert_eq(stat(deep, &st), 0);
    cr_assert(S_ISDIR(st.st_mode));
    cr_assert_eq(kbc_make_dirs(deep), 0, "an existing folder is no error");
    free(deep);
    cr_assert_eq(system(kbc_xasprintf("rm -rf '%s'", dir)), 0);
}

Test(make_dirs, a_file_in_the_way_is_not_a_directory)
{
    char dir[] = "/tmp/kbench-util-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *file = kbc_xasprintf("%s/f", dir);
    fclose(fopen(file, "w"));
    errno = 0;
    cr_assert_eq(kbc_make_dirs(file), -1);
    cr_assert_eq(errno, ENOTDIR);
    char *below = kbc_xasprintf("%s/f/g", dir);
    cr_assert_eq(kbc_make_dirs(below), -1);
    cr_assert_eq(errno, ENOTDIR);
    free(file);
    free(below);
    cr_assert_eq(system(kbc_xasprintf("rm -rf '%s'", dir)), 0);
}

Test(make_dirs, an_empty_name_is_refused)
{
    errno = 0;
    cr_assert_eq(kbc_make_dirs(""), -1);
    cr_assert_eq(errno, ENOENT);
}
