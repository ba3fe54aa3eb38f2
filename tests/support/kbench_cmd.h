/*
 * kbench_cmd.h -- running the built kbench binary from a Criterion test:
 * a fresh temporary folder per test (kc_tmp), files in it (kc_write,
 * kc_slurp), and one command with its exit code, standard output and
 * standard error (kc_run).  Plugins come only from the folders the test
 * names (KBENCH_PLUGIN_PATH is emptied).  Included once per test program.
 */
#ifndef KBENCH_TEST_KBENCH_CMD_H
#define KBENCH_TEST_KBENCH_CMD_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define KC_KBENCH KBENCH_BINARY_DIR "/kbench"

static char kc_dir[256];

typedef struct kc_result {
    int code;
    char *out, *err;
} kc_result;

static void kc_tmp(void)
{
    snprintf(kc_dir, sizeof kc_dir, "/tmp/kbench-test-XXXXXX");
    cr_assert_not_null(mkdtemp(kc_dir));
}

static void kc_tmp_remove(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", kc_dir);
    cr_assert_eq(system(cmd), 0);
}

/* kc_dir/name in a static buffer (one at a time). */
static const char *kc_path(const char *name)
{
    static char p[4][600];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", kc_dir, name);
    return p[k];
}

static void kc_write(const char *name, const char *text)
{
    FILE *f = fopen(kc_path(name), "w");
    cr_assert_not_null(f, "cannot write %s", name);
    fputs(text, f);
    fclose(f);
}

/* The whole file (malloc'd; "" when it cannot be read). */
static char *kc_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    cr_assert_not_null(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

/* Runs `kbench ARGS` in kc_dir. */
static kc_result kc_run(const char *args)
{
    char *cmd = NULL;
    cr_assert_gt(asprintf(&cmd, "cd '%s' && KBENCH_PLUGIN_PATH= '%s' %s >out.txt 2>err.txt",
                          kc_dir, KC_KBENCH, args),
                 0);
    int st = system(cmd);
    free(cmd);
    kc_result r;
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = kc_slurp(kc_path("out.txt"));
    r.err = kc_slurp(kc_path("err.txt"));
    return r;
}

static void kc_free(kc_result *r)
{
    free(r->out);
    free(r->err);
}

#define kc_assert_has(hay, needle)                                                            \
    cr_assert(strstr((hay), (needle)) != NULL, "expected \"%s\" in:\n%s", (needle), (hay))

#endif
