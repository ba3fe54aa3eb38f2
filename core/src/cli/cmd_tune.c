/*
 * cmd_tune.c -- `kbench tune FILE -o DIR`: the GPUs and the output folder
 * checked, then the search of tune.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "supervisor.h"
#include "tune.h"

int kbc_cli_tune(const kbc_cli *c)
{
    if (!c->out_dir) {
        kbc_say(1, "kbench tune needs -o DIR, the folder of its cache and results");
        return KBC_EXIT_USAGE;
    }
    kbc_registry reg;
    int code = kbc_cli_load_plugins(c, &reg);
    kbc_gpu_pick *picks = NULL;
    size_t n_picks = 0;
    unsigned long long min_mem = 0;
    char self[4096], why[600];
    if (code == 0 && kbc_cli_self_path(self, sizeof self) != 0)
        code = KBC_EXIT_SYSTEM;
    if (code == 0 && c->gpus && !c->simulate &&
        kbc_gpus_pick(c->gpus, c->allow_mixed, c->allow_shared, &picks, &n_picks, &min_mem, why,
                      sizeof why) != 0) {
        kbc_say(1, "%s", why);
        code = KBC_EXIT_USAGE;
    }
    if (code == 0 && kbc_make_dirs(c->out_dir) != 0) {
        kbc_say(0, "cannot create the output folder '%s': %s", c->out_dir, strerror(errno));
        code = KBC_EXIT_SYSTEM;
    }
    if (code == 0) {
        char *cmdline = kbc_cli_command_line(c);
        kbc_run_set_quiet(c->quiet);
        kbc_tune_opts o = {.self = self, .ini_path = c->args[0],
                           .plugin_paths = c->plugin_paths, .n_plugin_paths = c->n_plugin_paths,
                           .experiment = c->experiment, .sets = c->sets, .n_sets = c->n_sets,
                           .out_dir = c->out_dir, .simulate = c->simulate, .quiet = c->quiet,
                           .gpus = picks, .n_gpus = n_picks, .allow_shared = c->allow_shared,
                           .device_mem = min_mem, .command_line = cmdline};
        code = kbc_tune(&o, &reg, stdout, stderr);
        free(cmdline);
    }
    free(picks);
    kbc_registry_free(&reg);
    return code;
}
