/*
 * main.c -- the kbench executable: a worker of a run, or a user's command
 * dispatched by the table of commands (commands.c, cli.h).
 *
 * The command line is read in one pass (options.c), then checked against
 * the row of its command: the options it takes and the number of its
 * arguments.  Every mistake gets one sentence and an exit code from
 * util.h; docs/cli.md documents both.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "version.h"
#include "worker.h"

/* A worker of a run (worker.h): started by the supervisor, not a user's
   command. */
static int worker_entry(int argc, char **argv)
{
    return kbc_worker_main(argc - 1, argv + 1);
}

/* Runs the command c names, once its options and arguments fit its row.
   Returns the exit code. */
static int dispatch(const kbc_cli *c)
{
    const kbc_command *cmd = c->command ? kbc_command_find(c->command) : NULL;
    if (c->help) {
        if (c->command && !cmd)
            return kbc_help_unknown(c->command, 0);
        if (cmd)
            kbc_help_command(cmd, stdout);
        else
            kbc_help_all(stdout);
        return KBC_EXIT_OK;
    }
    if (c->version) {
        printf("kbench %s (git %s), plugin ABI %d.%d\n", KBENCH_VERSION, kbc_git_rev,
               KB_ABI_MAJOR, KB_ABI_MINOR);
        return KBC_EXIT_OK;
    }
    if (!c->command) {
        char all[256];
        kbc_command_names(all, sizeof all);
        kbc_say(1, "no command given (one of %s)", all);
        return KBC_EXIT_USAGE;
    }
    if (!cmd)
        return kbc_help_unknown(c->command, 0);
    int code = kbc_command_check_options(cmd, c);
    if (code == 0)
        code = kbc_cli_arity(c, cmd, cmd->min_args, cmd->max_args);
    return code ? code : cmd->run(c);
}

/* Flushes and closes stdout.  A write that failed earlier (the error flag
   stays set even when a later flush empties the buffer) or now means the
   output is incomplete: say so, and exit 3.  Returns the exit code. */
static int finish_stdout(int code)
{
    errno = 0;
    int failed = fflush(stdout) != 0;
    int err = failed ? errno : 0;
    failed |= ferror(stdout) != 0;
    if (fclose(stdout) != 0) {
        if (!err)
            err = errno;
        failed = 1;
    }
    if (!failed)
        return code;
    if (err)
        kbc_say(0, "cannot write to standard output (%s), so what it shows is incomplete",
                strerror(err));
    else
        kbc_say(0, "cannot write to standard output, so what it shows is incomplete");
    return KBC_EXIT_SYSTEM;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], KBC_WORKER_COMMAND) == 0)
        return worker_entry(argc, argv);
    /* The tables as data, for the man page and the completions (help.c). */
    if (argc == 2 && strcmp(argv[1], "__options") == 0)
        return finish_stdout(kbc_help_dump(stdout));
    kbc_cli c;
    int code = kbc_cli_parse(argc, argv, &c);
    if (code == 0)
        code = dispatch(&c);
    kbc_cli_free(&c);
    return finish_stdout(code);
}
