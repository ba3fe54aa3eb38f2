/*
 * test_help.c -- what kbench says about its commands, checked against the
 * table of commands it is printed from (core/src/cli/commands.c): each
 * command's help (`kbench CMD --help`, `kbench help CMD`) shows its
 * synopsis, exactly its options and its two examples on at most 70 lines
 * of at most 80 columns; `kbench help` lists every command; arguments are
 * counted as the rows say; an unknown command or help topic exits 2 with
 * the nearest command.  Each test runs the built binary.
 */
#include "kbench_cmd.h"

#include "cli.h"

TestSuite(help, .init = kc_tmp, .fini = kc_tmp_remove);

/* `kbench CMD --help` (malloc'd, with its exit code checked). */
static char *command_help(const kbc_command *cmd)
{
    char args[64];
    snprintf(args, sizeof args, "%s --help", cmd->name);
    kc_result r = kc_run(args);
    cr_assert_eq(r.code, 0, "%s: exit %d: %s", args, r.code, r.err);
    cr_assert_str_eq(r.err, "", "%s", args);
    free(r.err);
    return r.out;
}

/* Whether text has a line whose option column names o: "  -o, --output
   DIR  ..." or "      --wide  ...". */
static int lists_option(const char *text, const kbc_option *o)
{
    char want[80];
    snprintf(want, sizeof want, "\n      %s", o->name);
    if (o->short_name)
        snprintf(want, sizeof want, "\n  -%c, %s", o->short_name, o->name);
    size_t n = strlen(want);
    for (const char *p = strstr(text, want); p; p = strstr(p + 1, want))
        if (p[n] == ' ' || p[n] == '[' || p[n] == '\n')
            return 1;
    return 0;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(help, every_command_has_a_help_that_starts_with_its_synopsis)
{
    for (size_t i = 0; i < kbc_n_commands; i++) {
        char *h = command_help(&kbc_commands[i]);
        char want[64];
        snprintf(want, sizeof want, "usage: kbench %s", kbc_commands[i].name);
        cr_assert_eq(strncmp(h, want, strlen(want)), 0, "%s:\n%s", kbc_commands[i].name, h);
        free(h);
    }
}

/* A row's options end at a NULL name inside the row: a command given
   KBC_CMD_MAX_OPTIONS options (or more: C drops the excess with a warning
   only) would have the readers of the row walk past its end. */
Test(help, every_commands_options_end_inside_its_row)
{
    for (size_t i = 0; i < kbc_n_commands; i++)
        cr_assert_null(kbc_commands[i].options[KBC_CMD_MAX_OPTIONS - 1].name,
                       "kbench %s fills all %d option slots: raise KBC_CMD_MAX_OPTIONS in cli.h",
                       kbc_commands[i].name, (int)KBC_CMD_MAX_OPTIONS);
}

Test(help, help_of_a_command_is_that_commands_dash_dash_help)
{
    for (size_t i = 0; i < kbc_n_commands; i++) {
        char *h = command_help(&kbc_commands[i]);
        char args[64];
        snprintf(args, sizeof args, "help %s", kbc_commands[i].name);
        kc_result r = kc_run(args);
        cr_assert_eq(r.code, 0, "%s: %s", args, r.err);
        cr_assert_str_eq(r.out, h, "%s", args);
        kc_free(&r);
        free(h);
    }
}

Test(help, a_commands_help_lists_every_option_it_takes)
{
    for (size_t i = 0; i < kbc_n_commands; i++) {
        char *h = command_help(&kbc_commands[i]);
        for (size_t k = 0; k < kbc_n_options; k++)
            if (kbc_command_takes(&kbc_commands[i], &kbc_options[k], NULL))
                cr_assert(lists_option(h, &kbc_options[k]), "kbench %s --help lacks %s:\n%s",
                          kbc_commands[i].name, kbc_options[k].name, h);
        free(h);
    }
}

Test(help, a_commands_help_lists_no_option_of_other_commands)
{
    for (size_t i = 0; i < kbc_n_commands; i++) {
        char *h = command_help(&kbc_commands[i]);
        for (size_t k = 0; k < kbc_n_options; k++)
            if (!kbc_command_takes(&kbc_commands[i], &kbc_options[k], NULL))
                cr_assert(!lists_option(h, &kbc_options[k]), "kbench %s --help lists %s:\n%s",
                          kbc_commands[i].name, kbc_options[k].name, h);
        free(h);
    }
}

/* kbench run has the most options; its help once printed all 122 lines
   of every command's. */
Test(help, a_commands_help_is_at_most_70_lines)
{
    for (size_t i = 0; i < kbc_n_commands; i++) {
        char *h = command_help(&kbc_commands[i]);
        cr_assert_leq(count_lines(h), 70, "kbench %s --help has %d lines", kbc_commands[i].name,
                      count_lines(h));
        free(h);
    }
}

Test(help, every_help_fits_80_columns)
{
    for (size_t i = 0; i <= kbc_n_commands; i++) {
        char *h;
        if (i < kbc_n_commands) {
            h = command_help(&kbc_commands[i]);
        } else {
            kc_result r = kc_run("help");
            free(r.err);
            h = r.out;
        }
        for (const char *l = h; *l; l += strcspn(l, "\n") + 1)
            cr_assert_leq(strcspn(l, "\n"), 80, "a line of %s's help is too wide: %.*s",
                          i < kbc_n_commands ? kbc_commands[i].name : "kbench",
                          (int)strcspn(l, "\n"), l);
        free(h);
    }
}

Test(help, a_commands_help_shows_its_two_examples)
{
    for (size_t i = 0; i < kbc_n_commands; i++) {
        const kbc_command *cmd = &kbc_commands[i];
        char *h = command_help(cmd);
        char want[200];
        snprintf(want, sizeof want, "\nExamples:\n  %s\n  %s\n", cmd->examples[0],
                 cmd->examples[1]);
        kc_assert_has(h, want);
        for (int e = 0; e < 2; e++)
            cr_assert(strncmp(cmd->examples[e], "kbench ", 7) == 0 &&
                          strstr(cmd->examples[e], cmd->name),
                      "example of %s: %s", cmd->name, cmd->examples[e]);
        free(h);
    }
}

Test(help, help_alone_lists_every_command_with_its_summary)
{
    kc_result r = kc_run("help");
    cr_assert_eq(r.code, 0, "%s", r.err);
    for (size_t i = 0; i < kbc_n_commands; i++) {
        char want[200];
        snprintf(want, sizeof want, "  %-8s  %s\n", kbc_commands[i].name,
                 kbc_commands[i].summary);
        kc_assert_has(r.out, want);
    }
    kc_result d = kc_run("--help");
    cr_assert_str_eq(d.out, r.out);
    kc_free(&d);
    kc_free(&r);
}

/* ---- arguments, as each row counts them ---- */

Test(help, a_command_without_its_arguments_exits_two_naming_them)
{
    for (size_t i = 0; i < kbc_n_commands; i++) {
        const kbc_command *cmd = &kbc_commands[i];
        if (cmd->min_args == 0)
            continue;
        kc_result r = kc_run(cmd->name);
        cr_assert_eq(r.code, 2, "kbench %s: exit %d", cmd->name, r.code);
        char want[200];
        snprintf(want, sizeof want, "kbench: kbench %s needs %s; see kbench --help.\n",
                 cmd->name, cmd->args_what);
        cr_assert_str_eq(r.err, want);
        kc_free(&r);
    }
}

Test(help, a_command_given_one_argument_too_many_exits_two)
{
    for (size_t i = 0; i < kbc_n_commands; i++) {
        const kbc_command *cmd = &kbc_commands[i];
        if (cmd->max_args < 0)
            continue;
        char args[200] = "";
        snprintf(args, sizeof args, "%s", cmd->name);
        for (int k = 0; k <= cmd->max_args; k++)
            strcat(args, " ab");
        kc_result r = kc_run(args);
        cr_assert_eq(r.code, 2, "kbench %s: exit %d", args, r.code);
        kc_assert_has(r.err, "'ab' is one too many");
        cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
        kc_free(&r);
    }
}

/* ---- what does not exist ---- */

Test(help, an_unknown_command_suggests_the_nearest)
{
    kc_result r = kc_run("rnu x.ini");
    cr_assert_eq(r.code, 2);
    cr_assert_str_eq(r.err,
                     "kbench: unknown command 'rnu' (did you mean 'kbench run'?); see kbench "
                     "--help.\n");
    cr_assert_str_eq(r.out, "");
    kc_free(&r);
}

Test(help, an_ini_file_given_as_the_command_suggests_kbench_run)
{
    kc_result r = kc_run("conf/reduce.ini -o out");
    cr_assert_eq(r.code, 2);
    cr_assert_str_eq(r.err,
                     "kbench: unknown command 'conf/reduce.ini' (did you mean 'kbench run "
                     "conf/reduce.ini'?); see kbench --help.\n");
    kc_free(&r);
}

Test(help, an_unknown_help_topic_exits_two_with_the_nearest)
{
    kc_result r = kc_run("help nosuch");
    cr_assert_eq(r.code, 2, "%s", r.out);
    cr_assert_str_eq(r.out, "");
    kc_result n = kc_run("help comapre");
    cr_assert_eq(n.code, 2);
    cr_assert_str_eq(n.err,
                     "kbench: no help on 'comapre' (did you mean 'kbench help compare'?); see "
                     "kbench --help.\n");
    kc_free(&n);
    kc_free(&r);
}

Test(help, a_topic_near_no_command_names_them_all)
{
    kc_result r = kc_run("help zzzzzzzz");
    cr_assert_eq(r.code, 2);
    kc_assert_has(r.err, "no help on 'zzzzzzzz' (the commands are list, describe, run, check");
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
    kc_free(&r);
}

Test(help, an_unknown_command_with_help_exits_two)
{
    kc_result r = kc_run("nosuch --help");
    cr_assert_eq(r.code, 2);
    cr_assert_str_eq(r.out, "");
    kc_assert_has(r.err, "unknown command 'nosuch'");
    kc_free(&r);
}

Test(help, help_takes_one_topic)
{
    kc_result r = kc_run("help run plot");
    cr_assert_eq(r.code, 2);
    cr_assert_str_eq(r.err, "kbench: kbench help takes one command name, and 'plot' is one "
                            "too many; see kbench --help.\n");
    kc_free(&r);
}

/* A name shown back is made visible: a control character cannot reach the
   terminal. */
Test(help, an_unknown_command_is_shown_safely)
{
    kc_result r = kc_run("\"$(printf 'x\\033[2Jy')\"");
    cr_assert_eq(r.code, 2);
    cr_assert_null(strchr(r.err, '\033'), "%s", r.err);
    kc_free(&r);
}
