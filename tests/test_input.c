/* test_input.c -- kbc_input_open, the one door of every file a user hands
   kbench: a regular file within the reader's limit opens; a FIFO nobody
   writes, a folder, a device and a file over the limit are one clause
   each, at once (a test that hangs is stopped by its timeout). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"

static char dir[] = "/tmp/kbench-test-input-XXXXXX";

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(input, .init = setup, .fini = teardown, .timeout = 10);

static const char *at(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(at(name), "w");
    cr_assert_not_null(f);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

Test(input, a_regular_file_opens_and_reads_blocking)
{
    write_file("a.txt", "hello\n");
    char why[200] = "";
    int fd = kbc_input_open(at("a.txt"), 100, why, sizeof why);
    cr_assert_geq(fd, 0, "%s", why);
    cr_assert_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    cr_assert_neq(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
    char buf[16];
    cr_assert_eq(read(fd, buf, sizeof buf), 6);
    close(fd);
}

Test(input, a_fifo_nobody_writes_is_refused_at_once)
{
    cr_assert_eq(mkfifo(at("pipe"), 0600), 0);
    char why[200] = "";
    cr_assert_eq(kbc_input_open(at("pipe"), 100, why, sizeof why), -1);
    cr_assert_str_eq(why, "it is a named pipe, not a regular file");
}

Test(input, a_folder_is_refused)
{
    char why[200] = "";
    cr_assert_eq(kbc_input_open(dir, 100, why, sizeof why), -1);
    cr_assert_str_eq(why, "it is a folder, not a file");
}

Test(input, a_device_is_refused)
{
    char why[200] = "";
    cr_assert_eq(kbc_input_open("/dev/zero", KBC_INPUT_DATA_MAX, why, sizeof why), -1);
    cr_assert_str_eq(why, "it is a device, not a regular file");
}

Test(input, a_file_over_the_limit_is_refused_naming_both_sizes)
{
    /* A sparse file: its size, not its blocks, is what a reader would
       read. */
    int fd = open(at("big"), O_WRONLY | O_CREAT, 0600);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, (off_t)3 << 30), 0);
    close(fd);
    char why[200] = "";
    cr_assert_eq(kbc_input_open(at("big"), KBC_INPUT_DATA_MAX, why, sizeof why), -1);
    cr_assert_str_eq(why, "it is 3.0 GiB, over the 1.0 GiB that kbench reads from such a file");
}

Test(input, a_file_at_the_limit_opens)
{
    write_file("ten", "0123456789");
    char why[200] = "";
    int fd = kbc_input_open(at("ten"), 10, why, sizeof why);
    cr_assert_geq(fd, 0, "%s", why);
    close(fd);
    cr_assert_eq(kbc_input_open(at("ten"), 9, why, sizeof why), -1);
}

Test(input, a_missing_file_says_what_the_system_says)
{
    char why[200] = "";
    cr_assert_eq(kbc_input_open(at("none"), 100, why, sizeof why), -1);
    cr_assert_str_eq(why, strerror(ENOENT));
}

Test(input, the_stream_reads_the_file)
{
    write_file("b.txt", "x = 1\n");
    char why[200] = "";
    FILE *f = kbc_input_fopen(at("b.txt"), 100, why, sizeof why);
    cr_assert_not_null(f, "%s", why);
    char line[32];
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_assert_str_eq(line, "x = 1\n");
    fclose(f);
}
