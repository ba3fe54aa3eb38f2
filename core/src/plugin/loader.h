/*
 * loader.h -- finding and loading plugins.
 *
 * Search order: the build's plugin folder (and the installed one beside the
 * executable), then each folder in $KBENCH_PLUGIN_PATH (colon-separated),
 * then paths given by an INI file (plugin_path) or on the command line
 * (--plugin-path); a path may name a folder (every *.so in it) or one file.
 * A plugin that cannot be used -- not a shared object, no kbench_plugin
 * symbol, another ABI major version, a malformed descriptor -- is refused
 * with one sentence naming the file, and the others load.  When two
 * plugins share a name the first found wins and the second is refused.
 */
#ifndef KBENCH_LOADER_H
#define KBENCH_LOADER_H

#include <stddef.h>
#include <stdio.h>

#include "util.h"

/* A loaded plugin.  desc is the host's own copy of the plugin's descriptor,
   laid out as this kbench's header says, with every field the plugin's
   ABI minor did not have set to its documented default: the rest of the
   core reads it without caring which minor built the plugin.  Strings and
   functions still point into the plugin, which stays loaded. */
typedef struct kbc_plugin {
    const kb_plugin *desc;
    const kb_plugin *raw; /* the plugin's own descriptor, as it declared it */
    void *copy;           /* owns desc, its ops and its arrays */
    char *path;           /* the file it came from */
    void *dl;             /* dlopen handle (shared by the descriptors of one file) */
} kbc_plugin;

typedef struct kbc_registry {
    kbc_plugin *items;
    size_t n, cap;
    void **handles; /* every dlopen handle, closed by kbc_registry_free */
    size_t n_handles, cap_handles;
    char **refused; /* one sentence per refused file, in order found */
    size_t n_refused, cap_refused;
} kbc_registry;

void kbc_registry_init(kbc_registry *r);
void kbc_registry_free(kbc_registry *r);

/* Adds the default places: the build/install plugin folder, then
   $KBENCH_PLUGIN_PATH.  Never fails; refusals are recorded. */
void kbc_registry_add_defaults(kbc_registry *r);

/* Adds a folder (every *.so in it, in name order) or one file.  Returns 0;
   KBC_PATH_EMPTY when the path is a folder that holds no plugin file (no
   regular *.so: the caller says so as a warning); or -1 with d set when the
   path does not exist or cannot be read. */
#define KBC_PATH_EMPTY 1
int kbc_registry_add_path(kbc_registry *r, const char *path, kbc_diag *d);

/* The plugin called name, or NULL. */
const kbc_plugin *kbc_registry_find(const kbc_registry *r, const char *name);

/* Reads a plugin's descriptor into the host's layout (see kbc_plugin) and
   checks it.  Returns the copy (free with free()), or NULL with why set to
   one clause ("plugin ABI 3.0, but this kbench speaks ABI 2.x; ...").
   Reads no field past the sizes the plugin declares. */
void *kbc_descriptor_read(const kb_plugin *raw, const kb_plugin **desc, char *why, size_t n);
/* The same check without keeping the copy: NULL when good, else why. */
const char *kbc_descriptor_check(const kb_plugin *raw, char *why, size_t n);

/* Prints refusals, one per line, "kbench: warning: ..." */
void kbc_registry_print_refused(const kbc_registry *r, FILE *out);

/* `kbench list` and `kbench describe NAME` (returns an exit code). */
void kbc_cmd_list(const kbc_registry *r, FILE *out);
int kbc_cmd_describe(const kbc_registry *r, const char *name, FILE *out, FILE *err);

/* The "used by" cell of parameter p in `kbench describe`: "all", "none", the
   variants that read it joined by ',', or (when that list is long) "all but
   ..." or "K of N variants".  Returns a malloc'ed string. */
char *kbc_used_by_text(const kb_plugin *d, uint32_t p);

#endif
