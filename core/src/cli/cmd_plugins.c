/*
 * cmd_plugins.c -- the commands about the plugins themselves: list,
 * describe and check (check.c does the checking).  Each loads the plugins
 * from the default places and every --plugin-path, says which files it
 * refused, and hands the registry on.
 */
#include <stdio.h>

#include "check.h"
#include "cli.h"

int kbc_cli_list(const kbc_cli *c)
{
    kbc_registry reg;
    int code = kbc_cli_load_plugins(c, &reg);
    if (code == 0) {
        kbc_registry_print_refused(&reg, stderr);
        kbc_cmd_list(&reg, stdout);
    }
    kbc_registry_free(&reg);
    return code;
}

int kbc_cli_describe(const kbc_cli *c)
{
    kbc_registry reg;
    int code = kbc_cli_load_plugins(c, &reg);
    if (code == 0) {
        kbc_registry_print_refused(&reg, stderr);
        code = kbc_cmd_describe(&reg, c->args[0], stdout, stderr);
    }
    kbc_registry_free(&reg);
    return code;
}

int kbc_cli_check(const kbc_cli *c)
{
    kbc_registry reg;
    int code = kbc_cli_load_plugins(c, &reg);
    if (code == 0) {
        kbc_registry_print_refused(&reg, stderr);
        code = kbc_cmd_check(&reg, c->args[0], c->variants, stdout, stderr);
    }
    kbc_registry_free(&reg);
    return code;
}
