/* The INI reader: layout, line numbers, long lines and every refusal. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ini.h"

#define assert_has(msg, sub) \
    cr_assert(strstr((msg), (sub)) != NULL, "expected \"%s\" in: %s", (sub), (msg))

static kbc_ini ini;
static kbc_diag d;

static void load_ok(const char *text)
{
    d.msg[0] = '\0';
    cr_assert_eq(kbc_ini_load_string("t.ini", text, &ini, &d), 0, "%s", d.msg);
}

/* Loading must fail, and the message must start with "t.ini:LINE: " and
   contain each of the given pieces. */
static void load_fails(const char *text, int line, const char *piece, const char *piece2)
{
    d.msg[0] = '\0';
    cr_assert_eq(kbc_ini_load_string("t.ini", text, &ini, &d), -1, "accepted: %s", text);
    char head[32];
    snprintf(head, sizeof head, "t.ini:%d: ", line);
    cr_assert_eq(strncmp(d.msg, head, strlen(head)), 0, "expected \"%s\" at the start of: %s",
                 head, d.msg);
    assert_has(d.msg, piece);
    if (piece2)
        assert_has(d.msg, piece2);
    cr_assert_eq(ini.n, 0, "a failed load leaves no sections behind");
}

static const kbc_entry *entry(const char *sec, const char *key)
{
    const kbc_section *s = kbc_ini_section(&ini, sec);
    cr_assert_not_null(s, "no section [%s]", sec);
    const kbc_entry *e = kbc_section_get(s, key);
    cr_assert_not_null(e, "no key '%s' in [%s]", key, sec);
    return e;
}

static void expect(const char *sec, const char *key, const char *value, int line)
{
    const kbc_entry *e = entry(sec, key);
    cr_assert_str_eq(e->value, value, "[%s] %s", sec, key);
    cr_assert_eq(e->line, line, "[%s] %s is on line %d, not %d", sec, key, e->line, line);
}

static void teardown(void)
{
    kbc_ini_free(&ini);
}

TestSuite(ini, .fini = teardown);

Test(ini, layout)
{
    load_ok("; a comment\n"                       /* 1 */
            "# another comment\n"                 /* 2 */
            "\n"                                  /* 3 */
            "[global]\n"                          /* 4 */
            "runs = 5\n"                          /* 5 */
            "   warmup=2   \n"                    /* 6: indented, no spaces */
            "\t\n"                                /* 7 */
            "[first exp]   ; why this one\n"      /* 8 */
            "n = 1K, 2K ; the sizes\n"            /* 9 */
            "dtype =   f32\t\n"                   /* 10 */
            "  indented = yes\n"                  /* 11: not a continuation */
            "ratio = a;b\n"                       /* 12: ';' without space stays */
            "sizes = 1M..64M:x4\n"                /* 13 */
            "empty =\n"                           /* 14 */
            "[empty]\n");                         /* 15 */
    cr_assert_eq(ini.n, 3);
    cr_assert_str_eq(ini.sections[0].name, "global");
    cr_assert_eq(ini.sections[0].line, 4);
    cr_assert_str_eq(ini.sections[1].name, "first exp");
    cr_assert_eq(ini.sections[1].line, 8);
    cr_assert_str_eq(ini.sections[2].name, "empty");
    cr_assert_eq(ini.sections[2].n, 0);
    expect("global", "runs", "5", 5);
    expect("global", "warmup", "2", 6);
    expect("first exp", "n", "1K, 2K", 9);
    expect("first exp", "dtype", "f32", 10);
    expect("first exp", "indented", "yes", 11);
    expect("first exp", "ratio", "a;b", 12);
    expect("first exp", "sizes", "1M..64M:x4", 13);
    expect("first exp", "empty", "", 14);
    cr_assert_eq(ini.sections[1].n, 6);
    cr_assert_null(kbc_ini_section(&ini, "nothere"));
    cr_assert_null(kbc_section_get(&ini.sections[0], "nothere"));
}

Test(ini, crlf_and_bom)
{
    load_ok("\xEF\xBB\xBF[a]\r\nx = 1\r\n\r\ny = two words \r\n[b]\r\nz=3");
    expect("a", "x", "1", 2);
    expect("a", "y", "two words", 4);
    expect("b", "z", "3", 6);
}

Test(ini, from_a_file)
{
    char path[] = "/tmp/kbench-test-ini-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char *text = "[a]\r\nkey = value ; note\r\n\r\n  other = 2\r\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    cr_assert_eq(kbc_ini_load(path, &ini, &d), 0, "%s", d.msg);
    cr_assert_str_eq(ini.path, path);
    expect("a", "key", "value", 2);
    expect("a", "other", "2", 4);
    kbc_ini_free(&ini);
    unlink(path);
    cr_assert_eq(kbc_ini_load(path, &ini, &d), -1);
    assert_has(d.msg, path);
    assert_has(d.msg, "cannot be opened");
}

/* One refusal per case: the text, the line named, and two pieces of the
   sentence (the second may be empty).  The strings are held in the struct:
   Criterion copies parameters into a new process, where pointers to the
   parent's data would not be valid. */
typedef struct refusal {
    char text[64];
    int line;
    char piece[64], piece2[32];
} refusal;

ParameterizedTestParameters(ini, refusals)
{
    static refusal cases[] = {
        {"\nx = 1\n[a]\n", 2, "key 'x' comes before any section", ""},
        {"[a]\nx=1\n[b]\n[a]\n", 4, "section [a] appears twice", "lines 1 and 4"},
        {"[a]\nx = 1\ny = 2\n\nx = 3\n", 5, "key 'x' in [a] is set twice", "lines 2 and 5"},
        {"[a]\nx = 1\njust words\n", 3, "'just words' is not a 'key = value' line", ""},
        {"[a]\nx: 1\n", 2, "'x: 1' is not a 'key = value' line", ""},
        {"[a]\na:b = 1\n", 2, "'a:b' is not a valid key", ""},
        {"[a]\ntwo words = 1\n", 2, "'two words' is not a valid key", ""},
        {"[a]\n = 1\n", 2, "no key before '='", ""},
        {"[a]\n[b\nx = 1\n", 2, "'[b' has no closing ']'", ""},
        {"[a] extra\n", 1, "unexpected text 'extra' after the section header", ""},
        {"[a]\n[ ]\n", 2, "has no name", ""},
        {"[a]\n[x;y]\n", 2, "contains ';'", ""},
        {"[a]\nx = 1\x01\n", 2, "control character (byte 0x01", ""},
        /* Invisible characters, with the column counted in characters. */
        {"[a]\nx = 1\n  n = 4\xC2\xA0\n", 3, "column 8: an invisible U+00A0 (no-break space)",
         ""},
        {"[a]\nn\xE2\x80\x8B = 4\n", 2, "column 2: an invisible U+200B (zero-width space)", ""},
        {"[a]\nn = \xEF\xBB\xBF" "4\n", 2, "column 5: an invisible U+FEFF (byte order mark)",
         ""},
        {"\xEF\xBB\xBF[a]\n\xEF\xBB\xBFn = 4\n", 2, "column 1: an invisible U+FEFF", ""},
        {"[a\xC2\xA0]\n", 1, "column 3: an invisible U+00A0", ""},
        {"[a]\nk = \xC3\xA9\xC2\xA0\n", 2, "column 6: an invisible U+00A0", ""},
    };
    return cr_make_param_array(refusal, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(refusal *c, ini, refusals)
{
    load_fails(c->text, c->line, c->piece, c->piece2[0] ? c->piece2 : NULL);
}

Test(ini, invisible_characters_in_comment_lines_are_left_alone)
{
    load_ok("[a]\n; a\xC2\xA0note\n  # \xE2\x80\x8B\nn = 4\n");
    expect("a", "n", "4", 4);
}

Test(ini, other_utf8_in_values_is_kept)
{
    load_ok("[a]\ndescription = caf\xC3\xA9 \xE2\x86\x92 5\n");
    expect("a", "description", "caf\xC3\xA9 \xE2\x86\x92 5", 2);
}

/* Writes n bytes of text to a new temporary file; returns its path. */
static char *temp_file(const char *text, size_t n)
{
    char *path = strdup("/tmp/kbench-test-ini-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, n), (ssize_t)n);
    close(fd);
    return path;
}

Test(ini, a_nul_byte_is_refused_with_its_line_and_column)
{
    static const char text[] = "[a]\nx = 1\nab\0cd\n";
    char *path = temp_file(text, sizeof text - 1);
    cr_assert_eq(kbc_ini_load(path, &ini, &d), -1, "a NUL byte was accepted");
    char *head = NULL;
    cr_assert_gt(asprintf(&head, "%s:3: column 3: a NUL byte", path), 0);
    cr_assert_eq(strncmp(d.msg, head, strlen(head)), 0, "%s", d.msg);
    assert_has(d.msg, "not a text file");
    unlink(path);
    free(head);
    free(path);
}

Test(ini, an_endless_file_of_zeros_is_refused_at_once)
{
    /* Before the check, this read /dev/zero until memory ran out; it is
       now refused before a byte is read, as every file that is not a
       regular one. */
    cr_assert_eq(kbc_ini_load("/dev/zero", &ini, &d), -1);
    assert_has(d.msg, "/dev/zero: cannot be opened (it is a device, not a regular file).");
}

Test(ini, a_fifo_given_as_the_file_is_refused_without_waiting, .timeout = 10)
{
    char dir[] = "/tmp/kbench-test-ini-fifo-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/x.ini", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    int rc = kbc_ini_load(fifo, &ini, &d);
    unlink(fifo);
    rmdir(dir);
    cr_assert_eq(rc, -1);
    assert_has(d.msg, "x.ini: cannot be opened (it is a named pipe, not a regular file).");
}

Test(ini, a_line_over_the_limit_is_refused)
{
    size_t n = KBC_INI_MAX_LINE + 10;
    char *text = malloc(n + 16);
    strcpy(text, "[a]\nx = ");
    memset(text + 8, 'v', n);
    strcpy(text + 8 + n, "\n");
    load_fails(text, 2, "the line is longer than 1048576 bytes", NULL);
    free(text);
}

Test(ini, a_line_just_under_the_limit_loads)
{
    size_t n = KBC_INI_MAX_LINE - 8;
    char *text = malloc(n + 32);
    strcpy(text, "[a]\nx = ");
    memset(text + 8, 'v', n);
    strcpy(text + 8 + n, "\n");
    load_ok(text);
    cr_assert_eq(strlen(entry("a", "x")->value), n);
    free(text);
}

/* 100,000 sections, or 100,000 keys in one section: loading must stay
   linear (it took 28 and 20 seconds when the checks were quadratic).  No
   timing is asserted; the suite's timeout catches a regression. */
Test(ini, a_hundred_thousand_sections_load)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (int i = 0; i < 100000; i++)
        fprintf(f, "[s%d]\nplugin = reduce\n", i);
    fclose(f);
    char *path = temp_file(buf, len);
    cr_assert_eq(kbc_ini_load(path, &ini, &d), 0, "%s", d.msg);
    cr_assert_eq(ini.n, 100000);
    cr_assert_eq(kbc_ini_section(&ini, "s99999"), &ini.sections[99999]);
    cr_assert_eq(kbc_ini_section(&ini, "s0"), &ini.sections[0]);
    cr_assert_null(kbc_ini_section(&ini, "s100000"));
    unlink(path);
    free(path);
    free(buf);
}

Test(ini, a_hundred_thousand_keys_in_one_section_load)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fputs("[a]\n", f);
    for (int i = 0; i < 100000; i++)
        fprintf(f, "k%d = %d\n", i, i);
    fclose(f);
    char *path = temp_file(buf, len);
    cr_assert_eq(kbc_ini_load(path, &ini, &d), 0, "%s", d.msg);
    cr_assert_eq(ini.sections[0].n, 100000);
    expect("a", "k0", "0", 2);
    expect("a", "k99999", "99999", 100001);
    cr_assert_null(kbc_section_get(&ini.sections[0], "k100000"));
    unlink(path);
    free(path);
    free(buf);
}

Test(ini, a_duplicate_among_many_sections_is_still_found)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (int i = 0; i < 5000; i++)
        fprintf(f, "[s%d]\n", i);
    fputs("[s1234]\n", f);
    fclose(f);
    load_fails(buf, 5001, "section [s1234] appears twice", "lines 1235 and 5001");
    free(buf);
}

Test(ini, a_duplicate_among_many_keys_is_still_found)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fputs("[a]\n", f);
    for (int i = 0; i < 5000; i++)
        fprintf(f, "k%d = 1\n", i);
    fputs("k4321 = 2\n", f);
    fclose(f);
    load_fails(buf, 5002, "key 'k4321' in [a] is set twice", "lines 4323 and 5002");
    free(buf);
}

Test(ini, lookups_scan_a_structure_built_by_hand)
{
    /* A zeroed index is valid: the lookups fall back to a scan. */
    kbc_entry e = {.key = "x", .value = "1", .line = 2};
    kbc_section s = {.name = "a", .line = 1, .entries = &e, .n = 1, .cap = 1};
    kbc_ini hand = {.path = "hand.ini", .sections = &s, .n = 1, .cap = 1};
    cr_assert_eq(kbc_ini_section(&hand, "a"), &s);
    cr_assert_eq(kbc_section_get(&s, "x"), &e);
    cr_assert_null(kbc_section_get(&s, "y"));
}

/* A value of n characters: "v0123456789v0123..." with a recognisable end. */
static char *long_value(size_t n)
{
    char *v = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        v[i] = (char)('a' + i % 26);
    v[n - 1] = 'Z';
    v[n] = '\0';
    return v;
}

static void check_long(size_t n)
{
    char *v = long_value(n);
    char *text = NULL;
    cr_assert_gt(asprintf(&text,
                          "[a]\n"
                          "before = 1\n"
                          "long = %s ; a comment after it\n"
                          "  also = %s\n"
                          "after = 2\n"
                          "[b]\n"
                          "x = y\n",
                          v, v),
                 0);
    load_ok(text);
    expect("a", "before", "1", 2);
    expect("a", "long", v, 3);
    expect("a", "also", v, 4);
    expect("a", "after", "2", 5);
    expect("b", "x", "y", 7);
    cr_assert_eq(strlen(entry("a", "long")->value), n);
    free(text);
    free(v);
}

Test(ini, long_values_300)
{
    check_long(300);
}

Test(ini, long_values_5000)
{
    check_long(5000);
}

Test(ini, long_values_at_the_buffer_edge)
{
    /* Around inih's 200-byte buffer, every length must come through whole. */
    for (size_t n = 180; n <= 205; n++) {
        check_long(n);
        kbc_ini_free(&ini);
    }
}

Test(ini, long_comment_and_long_junk)
{
    char *v = long_value(5000);
    char *text = NULL;
    cr_assert_gt(asprintf(&text, "[a]\n; %s\nx = 1\n", v), 0);
    load_ok(text);
    expect("a", "x", "1", 3);
    kbc_ini_free(&ini);
    free(text);
    /* A long line with no '=' is an error on its own line, not a silent
       split into several lines. */
    cr_assert_gt(asprintf(&text, "[a]\nx = 1\n%s\ny = 2\n", v), 0);
    load_fails(text, 3, "is not a 'key = value' line", NULL);
    free(text);
    free(v);
}

Test(ini, long_names)
{
    char name49[50], name60[61], key64[65], key100[101];
    memset(name49, 's', 49);
    name49[49] = '\0';
    memset(name60, 's', 60);
    name60[60] = '\0';
    memset(key64, 'k', 64);
    key64[64] = '\0';
    memset(key100, 'k', 100);
    key100[100] = '\0';
    char text[512];
    snprintf(text, sizeof text, "[a]\n[%s]\n%s = 1\n", name49, key64);
    load_ok(text);
    expect(name49, key64, "1", 3);
    kbc_ini_free(&ini);

    snprintf(text, sizeof text, "[a]\nx = 1\n[%s]\n", name60);
    load_fails(text, 3, "is 60 characters long; the limit is 49", NULL);
    snprintf(text, sizeof text, "[a]\nx = 1\n\n%s = 2\n", key100);
    load_fails(text, 4, "is 100 characters long; the limit is 64", NULL);
}

Test(ini, sample_file)
{
    const char *path = KBENCH_SOURCE_DIR "/tests/data/sample.ini";
    cr_assert_eq(kbc_ini_load(path, &ini, &d), 0, "%s", d.msg);
    cr_assert_eq(ini.n, 3);
    expect("global", "runs", "10", 5);
    expect("small", "n", "2^10..2^20", 10);
    expect("small", "dtype", "f32, f64", 11);
    expect("large", "n", "64M", 15);
}

/* ---- ${NAME} and ${NAME:-default} in values ---- */

Test(ini, a_variable_is_replaced_by_its_value)
{
    setenv("KBENCH_T_SIZE", "4096", 1);
    load_ok("[a]\nn = ${KBENCH_T_SIZE}, 2x${KBENCH_T_SIZE}\n");
    expect("a", "n", "4096, 2x4096", 2);
    unsetenv("KBENCH_T_SIZE");
}

Test(ini, an_unset_variable_takes_its_default)
{
    unsetenv("KBENCH_T_UNSET");
    load_ok("[a]\nn = ${KBENCH_T_UNSET:-1K..4K}\n");
    expect("a", "n", "1K..4K", 2);
}

Test(ini, an_empty_variable_takes_its_default)
{
    setenv("KBENCH_T_EMPTY", "", 1);
    load_ok("[a]\nn = ${KBENCH_T_EMPTY:-7}\n");
    expect("a", "n", "7", 2);
    unsetenv("KBENCH_T_EMPTY");
}

Test(ini, a_set_variable_wins_over_its_default)
{
    setenv("KBENCH_T_SET", "9", 1);
    load_ok("[a]\nn = ${KBENCH_T_SET:-7}\n");
    expect("a", "n", "9", 2);
    unsetenv("KBENCH_T_SET");
}

Test(ini, a_double_dollar_is_one_dollar_and_a_lone_dollar_stays)
{
    load_ok("[a]\ndescription = costs $$5 and $x\n");
    expect("a", "description", "costs $5 and $x", 2);
}

Test(ini, an_unset_variable_without_a_default_is_named_with_its_line_and_key)
{
    unsetenv("KBENCH_T_NOPE");
    load_fails("[a]\nruns = 3\nn = ${KBENCH_T_NOPE}\n", 3, "key 'n' in [a]",
               "KBENCH_T_NOPE is not set; set it, or write ${KBENCH_T_NOPE:-default}");
}

Test(ini, an_unterminated_variable_is_refused)
{
    load_fails("[a]\nn = ${HOME\n", 2, "key 'n' in [a]", "'${' without its '}'");
}

Test(ini, a_variable_name_that_is_not_a_name_is_refused)
{
    load_fails("[a]\nn = ${A B}\n", 2, "key 'n' in [a]", "is not a variable");
}

Test(ini, a_control_character_from_the_environment_is_refused)
{
    setenv("KBENCH_T_CTRL", "a\nsystem(\"x\")", 1);
    load_fails("[a]\ndescription = ${KBENCH_T_CTRL}\n", 2, "key 'description' in [a]",
               "KBENCH_T_CTRL holds a control character");
    unsetenv("KBENCH_T_CTRL");
}

/* ---- include = FILE ---- */

/* A folder of its own for the include tests: DIR/main.ini and
   DIR/sub/... */
static char inc_dir[] = "/tmp/kbench-test-include-XXXXXX";

static void inc_write(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", inc_dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

static int inc_load(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", inc_dir, name);
    return kbc_ini_load(path, &ini, &d);
}

static void inc_setup(void)
{
    cr_assert_not_null(mkdtemp(inc_dir));
    char sub[600];
    snprintf(sub, sizeof sub, "%s/sub", inc_dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
}

static void inc_teardown(void)
{
    kbc_ini_free(&ini);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", inc_dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(include, .init = inc_setup, .fini = inc_teardown);

Test(include, an_included_files_keys_stand_where_the_include_is)
{
    inc_write("main.ini", "[global]\nruns = 3\ninclude = sub/common.ini\n[a]\nplugin = toy\n");
    inc_write("sub/common.ini", "; shared\nwarmup = 1\n[b]\nplugin = toy\n");
    cr_assert_eq(inc_load("main.ini"), 0, "%s", d.msg);
    const kbc_entry *w = kbc_section_get(kbc_ini_section(&ini, "global"), "warmup");
    cr_assert_not_null(w);
    cr_assert_str_eq(w->value, "1");
    cr_assert_eq(w->line, 2, "its line in its own file");
    cr_assert_not_null(strstr(w->file, "sub/common.ini"), "%s", w->file);
    cr_assert_not_null(kbc_ini_section(&ini, "b"));
    cr_assert_not_null(kbc_ini_section(&ini, "a"), "the including file goes on after it");
    const kbc_entry *r = kbc_section_get(kbc_ini_section(&ini, "global"), "runs");
    cr_assert_null(r->file, "a key of the file itself has no other file");
}

Test(include, an_error_in_an_included_file_names_that_file_and_line)
{
    inc_write("main.ini", "[global]\ninclude = sub/bad.ini\n");
    inc_write("sub/bad.ini", "runs = 3\nnot a key line\n");
    cr_assert_eq(inc_load("main.ini"), -1);
    assert_has(d.msg, "sub/bad.ini:2: ");
    assert_has(d.msg, "is not a 'key = value' line");
}

Test(include, a_missing_file_is_one_sentence_naming_the_include_line)
{
    inc_write("main.ini", "[global]\nruns = 3\ninclude = nothere.ini\n");
    cr_assert_eq(inc_load("main.ini"), -1);
    assert_has(d.msg, "main.ini:3: include = nothere.ini: ");
    assert_has(d.msg, "cannot be opened (No such file or directory).");
}

/* A FIFO that nobody writes would make open() wait for ever: the include
   line is refused at once instead (the timeout fails a hang). */
Test(include, a_fifo_is_refused_at_the_include_line_without_waiting, .timeout = 10)
{
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/sub/pipe.ini", inc_dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    inc_write("main.ini", "[global]\nruns = 3\ninclude = sub/pipe.ini\n");
    cr_assert_eq(inc_load("main.ini"), -1);
    assert_has(d.msg, "main.ini:3: include = sub/pipe.ini: ");
    assert_has(d.msg, "cannot be opened (it is a named pipe, not a regular file).");
}

/* fopen() opens a folder for reading, and the first read fails: the
   sentence then named the folder but not the line that included it. */
Test(include, a_folder_is_refused_at_the_include_line)
{
    inc_write("main.ini", "[global]\ninclude = sub\n");
    cr_assert_eq(inc_load("main.ini"), -1);
    assert_has(d.msg, "main.ini:2: include = sub: ");
    assert_has(d.msg, "cannot be opened (it is a folder, not a file).");
}

Test(include, a_file_that_includes_itself_is_refused)
{
    inc_write("main.ini", "[global]\ninclude = main.ini\n");
    cr_assert_eq(inc_load("main.ini"), -1);
    assert_has(d.msg, "main.ini:2: include = main.ini: ");
    assert_has(d.msg, "is already being read");
}

Test(include, a_cycle_through_another_file_is_refused_at_its_closing_line)
{
    inc_write("main.ini", "[global]\ninclude = sub/a.ini\n");
    inc_write("sub/a.ini", "runs = 3\ninclude = ../main.ini\n");
    cr_assert_eq(inc_load("main.ini"), -1);
    assert_has(d.msg, "sub/a.ini:2: include = ../main.ini: ");
    assert_has(d.msg, "is already being read");
}

Test(include, a_key_set_in_both_files_names_both_places)
{
    inc_write("main.ini", "[global]\nruns = 3\ninclude = sub/c.ini\n");
    inc_write("sub/c.ini", "runs = 4\n");
    cr_assert_eq(inc_load("main.ini"), -1);
    assert_has(d.msg, "sub/c.ini:1: key 'runs' in [global] is set twice (");
    assert_has(d.msg, "main.ini:2 and here)");
}

Test(include, an_include_with_no_file_is_refused)
{
    inc_write("main.ini", "[global]\ninclude =\n");
    cr_assert_eq(inc_load("main.ini"), -1);
    assert_has(d.msg, "main.ini:2: 'include =' names no file");
}
