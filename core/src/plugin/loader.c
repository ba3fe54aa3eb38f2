/*
 * loader.c -- finding plugins, opening them and checking their descriptors.
 *
 * The loader never trusts a plugin: a file that is not a shared object, that
 * lacks the entry symbol, that speaks another ABI or that declares a
 * malformed descriptor is refused with one sentence naming the file, and
 * loading goes on with the next one.  Everything the rest of the core reads
 * from a descriptor is checked here once, so that config, runner and
 * describe may rely on it (names are usable as INI words, required ops are
 * present, parameter defaults exist, variant indices fit a 64-bit mask).
 *
 * Environment:
 *   KBENCH_PLUGIN_PATH         colon-separated folders or files, searched
 *                              after the default folders.
 *   KBENCH_NO_DEFAULT_PLUGINS  when "1", skip the build and installed plugin
 *                              folders (tests use it to see only fixtures).
 */
#define _GNU_SOURCE
#include "loader.h"
#include "core_keys.h"
#include "sweep.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* At most this many descriptors are read from one file, so that a plugin
   whose entry never returns NULL cannot make the loader spin forever. */
#define KBC_MAX_PER_FILE 64


void kbc_registry_init(kbc_registry *r)
{
    memset(r, 0, sizeof *r);
}

void kbc_registry_free(kbc_registry *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->items[i].path);
        free(r->items[i].copy);
    }
    free(r->items);
    /* Descriptors point into the plugins' memory, so the handles are closed
       only now, after nothing can read a descriptor any more. */
    for (size_t i = 0; i < r->n_handles; i++)
        dlclose(r->handles[i]);
    free(r->handles);
    for (size_t i = 0; i < r->n_refused; i++)
        free(r->refused[i]);
    free(r->refused);
    memset(r, 0, sizeof *r);
}

static void refuse(kbc_registry *r, const char *fmt, ...) KB_PRINTF(2, 3);

static void refuse(kbc_registry *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = kbc_xstrdup("a plugin was refused (and the message could not be formatted)");
    va_end(ap);
    if (r->n_refused == r->cap_refused) {
        r->cap_refused = r->cap_refused ? 2 * r->cap_refused : 8;
        r->refused = kbc_xrealloc(r->refused, r->cap_refused * sizeof *r->refused);
    }
    r->refused[r->n_refused++] = s;
}

static void add_handle(kbc_registry *r, void *h)
{
    if (r->n_handles == r->cap_handles) {
        r->cap_handles = r->cap_handles ? 2 * r->cap_handles : 8;
        r->handles = kbc_xrealloc(r->handles, r->cap_handles * sizeof *r->handles);
    }
    r->handles[r->n_handles++] = h;
}

static void add_item(kbc_registry *r, const kb_plugin *raw, const kb_plugin *desc, void *copy,
                     const char *path, void *dl)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 8;
        r->items = kbc_xrealloc(r->items, r->cap * sizeof *r->items);
    }
    r->items[r->n].desc = desc;
    r->items[r->n].raw = raw;
    r->items[r->n].copy = copy;
    r->items[r->n].path = kbc_xstrdup(path);
    r->items[r->n].dl = dl;
    r->n++;
}

const kbc_plugin *kbc_registry_find(const kbc_registry *r, const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].desc->name, name) == 0)
            return &r->items[i];
    return NULL;
}

/* ------------------------------------------------------------------------
 * Descriptor checks.
 * ---------------------------------------------------------------------- */

/* A plugin name is written in INI files and printed in reports, so it is
   kept to characters that need no quoting anywhere. */
static int plugin_name_ok(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

/* A parameter name is an INI key: lower case letters, digits and '_'. */
static int param_name_ok(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

/* A variant name appears in the comma-separated `variants = ...` list, so
   it may not be empty nor hold a comma or white space. */
static int variant_name_ok(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (*s == ',' || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == ';' ||
            *s == '#')
            return 0;
    return 1;
}

static const char *why_set(char *why, size_t n, const char *fmt, ...) KB_PRINTF(3, 4);

static const char *why_set(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return why;
}

/* Whether a structure of `size` bytes holds the member that ends at `end`
   (offsetof + sizeof): the LV2 rule, a field past the plugin's size is
   never read. */
#define KBC_HAS(size, type, member) ((size) >= offsetof(type, member) + sizeof(((type *)0)->member))

/* The host's copy of one descriptor, in one block. */
typedef struct kbc_desc_copy {
    kb_plugin desc;
    kb_ops ops;
    kb_variant variants[KB_MAX_VARIANTS];
    kb_param params[]; /* n_params */
} kbc_desc_copy;

/* Copies the leading min(have, want) bytes of one structure and leaves the
   rest zero: zero is every optional field's default. */
static void copy_prefix(void *dst, size_t want, const void *src, size_t have)
{
    memset(dst, 0, want);
    memcpy(dst, src, have < want ? have : want);
}

static const char *check_copy(const kb_plugin *d, char *why, size_t n);

/* The fields every ABI version shares: the major version and the
   descriptor's size; -1 with why when the plugin cannot be read. */
static int check_abi(const kb_plugin *raw, char *why, size_t n)
{
    /* abi_major, abi_minor and size are the only fields every version of
       the ABI shares, so they are checked before anything else is read.
       Across a major version a rebuild alone does not compile, so the
       sentence points at the porting note. */
    if (raw->abi_major < KB_ABI_MAJOR) {
        why_set(why, n,
                "plugin ABI %u.%u, but this kbench speaks ABI %d.x; port the plugin to ABI %d "
                "and rebuild it against this kbench's kbench/plugin.h: docs/migrating.md "
                "(installed as share/doc/kbench/migrating.md) lists every change since ABI "
                "%u, before and after",
                (unsigned)raw->abi_major, (unsigned)raw->abi_minor, KB_ABI_MAJOR, KB_ABI_MAJOR,
                (unsigned)raw->abi_major);
        return -1;
    }
    if (raw->abi_major > KB_ABI_MAJOR) {
        why_set(why, n,
                "plugin ABI %u.%u, but this kbench speaks ABI %d.x; the plugin was built for a "
                "newer kbench: load it with that one, or rebuild the plugin against this "
                "kbench's kbench/plugin.h (docs/migrating.md, installed as "
                "share/doc/kbench/migrating.md, lists what each major version changed)",
                (unsigned)raw->abi_major, (unsigned)raw->abi_minor, KB_ABI_MAJOR);
        return -1;
    }
    /* Everything up to ops is in every ABI 2 descriptor. */
    if (!KBC_HAS(raw->size, kb_plugin, ops)) {
        why_set(why, n,
                "its descriptor is %u bytes, smaller than the %zu bytes every ABI %d "
                "descriptor has; it was not built from kbench/plugin.h",
                (unsigned)raw->size, offsetof(kb_plugin, ops) + sizeof raw->ops, KB_ABI_MAJOR);
        return -1;
    }
    return 0;
}

/* The counts, tables and declared sizes of a descriptor of this major
   version, before anything is copied through them; -1 with why. */
static int check_tables(const kb_plugin *raw, char *why, size_t n)
{
    const char *name = raw->name && *raw->name ? raw->name : "(unnamed)";
    if (raw->n_params > KB_MAX_PARAMS) {
        why_set(why, n, "plugin '%s' declares %u parameters; at most %d are allowed", name,
                (unsigned)raw->n_params, KB_MAX_PARAMS);
        return -1;
    }
    if (raw->n_variants > KB_MAX_VARIANTS || raw->n_variants == 0) {
        why_set(why, n, "plugin '%s' declares %u variants; it must declare 1 to %d", name,
                (unsigned)raw->n_variants, KB_MAX_VARIANTS);
        return -1;
    }
    if (!raw->variants) {
        why_set(why, n, "plugin '%s' declares %u variants but its variant table is NULL", name,
                (unsigned)raw->n_variants);
        return -1;
    }
    if (raw->n_params > 0 && !raw->params) {
        why_set(why, n, "plugin '%s' declares %u parameters but its parameter table is NULL",
                name, (unsigned)raw->n_params);
        return -1;
    }
    /* Every declared size is the sizeof of some version of its structure,
       so a multiple of the structure's alignment: a size that is not would
       make the copy below end in the middle of a field. */
    const char *odd = NULL;
    size_t align = 0;
    if (raw->size % _Alignof(kb_plugin))
        odd = "size", align = _Alignof(kb_plugin);
    else if (raw->variant_size % _Alignof(kb_variant))
        odd = "variant_size", align = _Alignof(kb_variant);
    else if (raw->n_params && raw->param_size % _Alignof(kb_param))
        odd = "param_size", align = _Alignof(kb_param);
    if (odd) {
        why_set(why, n,
                "plugin '%s': its %s is not a multiple of %zu, so it is not the size of any "
                "version of the structure; it was not built from kbench/plugin.h",
                name, odd, align);
        return -1;
    }
    if (!KBC_HAS(raw->variant_size, kb_variant, summary)) {
        why_set(why, n,
                "plugin '%s': its variant_size %u is smaller than the %zu bytes every ABI %d "
                "variant has (use KB_VARIANTS(array))",
                name, (unsigned)raw->variant_size,
                offsetof(kb_variant, summary) + sizeof(const char *), KB_ABI_MAJOR);
        return -1;
    }
    if (raw->n_params > 0 && !KBC_HAS(raw->param_size, kb_param, n_choices)) {
        why_set(why, n,
                "plugin '%s': its param_size %u is smaller than the %zu bytes every ABI %d "
                "parameter has (use KB_PARAMS(array))",
                name, (unsigned)raw->param_size,
                offsetof(kb_param, n_choices) + sizeof(uint32_t), KB_ABI_MAJOR);
        return -1;
    }
    if (!raw->ops) {
        why_set(why, n, "plugin '%s' has no operations table (ops is NULL)", name);
        return -1;
    }
    if (raw->ops->size % _Alignof(kb_ops)) {
        why_set(why, n,
                "plugin '%s': its ops table declares %u bytes, not a multiple of %zu, so it is "
                "not the size of any version of kb_ops (start it with KB_OPS_HEADER)",
                name, (unsigned)raw->ops->size, _Alignof(kb_ops));
        return -1;
    }
    if (!KBC_HAS(raw->ops->size, kb_ops, teardown)) {
        why_set(why, n,
                "plugin '%s': its ops table declares %u bytes, fewer than the %zu bytes every "
                "ABI %d ops table has (start it with KB_OPS_HEADER)",
                name, (unsigned)raw->ops->size, offsetof(kb_ops, teardown) + sizeof(void *),
                KB_ABI_MAJOR);
        return -1;
    }
    return 0;
}

/* The descriptor, its ops, variants and parameters copied into this
   kbench's layout (fields a smaller, older one lacks stay zero). */
static kbc_desc_copy *copy_descriptor(const kb_plugin *raw)
{
    kbc_desc_copy *c = kbc_xcalloc(1, sizeof *c + raw->n_params * sizeof(kb_param));
    copy_prefix(&c->desc, sizeof c->desc, raw, raw->size);
    copy_prefix(&c->ops, sizeof c->ops, raw->ops, raw->ops->size);
    c->ops.size = sizeof c->ops;
    const char *vbase = (const char *)raw->variants;
    for (uint32_t v = 0; v < raw->n_variants; v++)
        copy_prefix(&c->variants[v], sizeof c->variants[v], vbase + (size_t)v * raw->variant_size,
                    raw->variant_size);
    const char *pbase = (const char *)raw->params;
    for (uint32_t p = 0; p < raw->n_params; p++) {
        copy_prefix(&c->params[p], sizeof c->params[p], pbase + (size_t)p * raw->param_size,
                    raw->param_size);
        if (!c->params[p].help)
            c->params[p].help = "";
    }
    c->desc.size = sizeof c->desc;
    c->desc.ops = &c->ops;
    c->desc.variants = c->variants;
    c->desc.variant_size = sizeof(kb_variant);
    c->desc.params = raw->n_params ? c->params : NULL;
    c->desc.param_size = sizeof(kb_param);
    return c;
}

void *kbc_descriptor_read(const kb_plugin *raw, const kb_plugin **out, char *why, size_t n)
{
    *out = NULL;
    if (check_abi(raw, why, n) != 0 || check_tables(raw, why, n) != 0)
        return NULL;
    kbc_desc_copy *c = copy_descriptor(raw);
    if (check_copy(&c->desc, why, n)) {
        /* A value this kbench does not know (a flag, a type, a backend) may
           be one a newer minor added: say so rather than only "unknown". */
        if (raw->abi_minor > KB_ABI_MINOR) {
            size_t len = strlen(why);
            snprintf(why + len, n - len,
                     " (the plugin was built for ABI %u.%u, newer than this kbench's %d.%d; "
                     "a newer kbench may read it)",
                     (unsigned)raw->abi_major, (unsigned)raw->abi_minor, KB_ABI_MAJOR,
                     KB_ABI_MINOR);
        }
        free(c);
        return NULL;
    }
    *out = &c->desc;
    return c;
}

const char *kbc_descriptor_check(const kb_plugin *raw, char *why, size_t n)
{
    const kb_plugin *d;
    void *c = kbc_descriptor_read(raw, &d, why, n);
    if (!c)
        return why;
    free(c);
    return NULL;
}

/* The checks on the host's copy: every field is there (or defaulted). */
static const char *check_copy(const kb_plugin *d, char *why, size_t n)
{
    if (!d->name || !*d->name)
        return why_set(why, n, "its descriptor has no name");
    if (!plugin_name_ok(d->name))
        return why_set(why, n,
                       "its name '%s' may only hold lower-case letters, digits, '_' and '-'",
                       d->name);

    const char *missing = !d->ops->plan       ? "plan"
                          : !d->ops->setup    ? "setup"
                          : !d->ops->prepare  ? "prepare"
                          : !d->ops->run      ? "run"
                          : !d->ops->verify   ? "verify"
                          : !d->ops->teardown ? "teardown"
                                              : NULL;
    if (missing)
        return why_set(why, n, "plugin '%s' has no %s() operation, which is required", d->name,
                       missing);

    for (uint32_t v = 0; v < d->n_variants; v++) {
        const kb_variant *var = &d->variants[v];
        if (!var->name)
            return why_set(why, n, "plugin '%s': variant #%u has no name", d->name, (unsigned)v);
        if (!variant_name_ok(var->name))
            return why_set(why, n,
                           "plugin '%s': variant name '%s' is empty or holds a comma, white "
                           "space, ';' or '#'",
                           d->name, var->name);
        if (var->backend != KB_BACKEND_CPU && var->backend != KB_BACKEND_CUDA)
            return why_set(why, n, "plugin '%s': variant '%s' has unknown backend %d", d->name,
                           var->name, (int)var->backend);
        if (var->flags & ~(uint32_t)(KB_VARIANT_SYNCS | KB_VARIANT_NONDETERM |
                                     KB_VARIANT_LIBRARY))
            return why_set(why, n, "plugin '%s': variant '%s' has unknown flags 0x%x", d->name,
                           var->name, (unsigned)var->flags);
        if (d->n_params < 64 && (var->uses >> d->n_params) != 0)
            return why_set(why, n,
                           "plugin '%s': variant '%s' uses parameter bits beyond its %u "
                           "parameters",
                           d->name, var->name, (unsigned)d->n_params);
        for (uint32_t w = 0; w < v; w++)
            if (strcmp(d->variants[w].name, var->name) == 0)
                return why_set(why, n, "plugin '%s' declares variant '%s' twice", d->name,
                               var->name);
    }

    for (uint32_t p = 0; p < d->n_params; p++) {
        const kb_param *par = &d->params[p];
        if (!par->name)
            return why_set(why, n, "plugin '%s': parameter #%u has no name", d->name, (unsigned)p);
        if (!param_name_ok(par->name))
            return why_set(why, n,
                           "plugin '%s': parameter name '%s' may only hold lower-case letters, "
                           "digits and '_'",
                           d->name, par->name);
        /* A parameter named like a core key could never be set. */
        if (kbc_core_key_find(par->name))
            return why_set(why, n,
                           "plugin '%s': parameter '%s' clashes with the core key of the same "
                           "name",
                           d->name, par->name);
        if ((unsigned)par->type > KB_PARAM_BOOL)
            return why_set(why, n, "plugin '%s': parameter '%s' has unknown type %d", d->name,
                           par->name, (int)par->type);
        if (par->type == KB_PARAM_ENUM && (!par->choices || par->n_choices == 0))
            return why_set(why, n, "plugin '%s': enum parameter '%s' has no choices", d->name,
                           par->name);
        for (uint32_t k = 0; par->type == KB_PARAM_ENUM && k < par->n_choices; k++)
            if (!par->choices[k] || !variant_name_ok(par->choices[k]))
                return why_set(why, n,
                               "plugin '%s': choice #%u of enum parameter '%s' is NULL, empty "
                               "or holds a comma, white space, ';' or '#'",
                               d->name, (unsigned)k, par->name);
        if (!par->def)
            return why_set(why, n, "plugin '%s': parameter '%s' has no default", d->name,
                           par->name);
        if (par->type == KB_PARAM_ENUM) {
            int found = 0;
            for (uint32_t k = 0; k < par->n_choices; k++)
                if (strcmp(par->choices[k], par->def) == 0)
                    found = 1;
            if (!found)
                return why_set(why, n,
                               "plugin '%s': the default '%s' of enum parameter '%s' is not one "
                               "of its choices",
                               d->name, par->def, par->name);
        }
        /* multiple_of (minor 3) says which integers the host accepts; on
           another type it could only be a mistake. */
        if (par->multiple_of > 1 && par->type != KB_PARAM_INT && par->type != KB_PARAM_SIZE)
            return why_set(why, n,
                           "plugin '%s': parameter '%s' declares multiple_of %llu, which only "
                           "INT and SIZE parameters take",
                           d->name, par->name, (unsigned long long)par->multiple_of);
        /* The default goes through the same parser as an INI value, so that
           a plugin whose default is malformed or out of its own range is
           refused here rather than failing every experiment that uses it. */
        kb_value v;
        char vwhy[256];
        if (kbc_value_parse(par, par->def, &v, vwhy, sizeof vwhy) != 0)
            return why_set(why, n, "plugin '%s': the default of parameter '%s' is invalid: %s",
                           d->name, par->name, vwhy);
        for (uint32_t q = 0; q < p; q++)
            if (strcmp(d->params[q].name, par->name) == 0)
                return why_set(why, n, "plugin '%s' declares parameter '%s' twice", d->name,
                               par->name);
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * Loading files and folders.
 * ---------------------------------------------------------------------- */

/* Where phdr_exec looks for an address: the address, and whether a
   segment that holds it was found and is executable. */
typedef struct exec_probe {
    uintptr_t at;
    int found, exec;
} exec_probe;

static int phdr_exec(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    exec_probe *p = arg;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD || p->at < lo || p->at - lo >= ph->p_memsz)
            continue;
        p->found = 1;
        p->exec = (ph->p_flags & PF_X) != 0;
        return 1;
    }
    return 0;
}

/* NULL when the entry symbol at sym is code; else what it is instead
   ("data", "a symbol without a type").  The symbol table's type says it
   first; the segment that holds the address must also be executable,
   which catches data that a hand-written table calls a function. */
static const char *symbol_not_code(void *sym)
{
    Dl_info info;
    const ElfW(Sym) *es = NULL;
    if (dladdr1(sym, &info, (void **)&es, RTLD_DL_SYMENT) && es) {
        int type = ELF64_ST_TYPE(es->st_info);
        if (type == STT_OBJECT || type == STT_COMMON || type == STT_TLS)
            return "data";
        if (type != STT_FUNC && type != STT_GNU_IFUNC)
            return "a symbol of no known type";
    }
    exec_probe p = {(uintptr_t)sym, 0, 0};
    dl_iterate_phdr(phdr_exec, &p);
    if (p.found && !p.exec)
        return "data (it lies outside the code)";
    return NULL;
}

static void load_file(kbc_registry *r, const char *path)
{
    /* dlopen searches the library path for a name without a '/', so a
       plugin named bare ("kbench-x.so", meant in the current folder) is
       given as "./kbench-x.so". */
    char *owned = strchr(path, '/') ? NULL : kbc_xasprintf("./%s", path);
    if (owned)
        path = owned;
    dlerror();
    /* RTLD_NODELETE: dlclose() never unmaps a plugin.  A CUDA plugin's C++
       runtime keeps static buffers (its exception pool) that would
       otherwise outlive the mapping that points at them, and a kernel
       image the runtime registered stays valid until exit. */
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!dl) {
        const char *e = dlerror();
        refuse(r, "%s: cannot be loaded as a shared object (%s)", path, e ? e : "unknown error");
        goto done;
    }
    /* The dynamic loader knows a file by its device and inode, so the same
       plugin reached twice (a folder named both in KBENCH_PLUGIN_PATH and in
       an INI file, or through a link) gives a handle already held: it is
       skipped quietly rather than refused as a duplicate of itself. */
    for (size_t i = 0; i < r->n_handles; i++)
        if (r->handles[i] == dl) {
            dlclose(dl);
            goto done;
        }

    dlerror();
    void *sym = dlsym(dl, KB_ENTRY_SYMBOL);
    if (!sym) {
        refuse(r,
               "%s: has no '%s' symbol, so it is not a kbench plugin (build it with "
               "kbench_add_plugin(), which exports that symbol)",
               path, KB_ENTRY_SYMBOL);
        dlclose(dl);
        goto done;
    }
    /* Calling a symbol that is data jumps into it: the scan of every
       command would crash on one such file. */
    const char *not_code = symbol_not_code(sym);
    if (not_code) {
        refuse(r,
               "%s: its '%s' symbol is %s, not a function, so it is not a kbench plugin "
               "(declare it as const kb_plugin *%s(uint32_t index), as kbench/plugin.h does)",
               path, KB_ENTRY_SYMBOL, not_code, KB_ENTRY_SYMBOL);
        dlclose(dl);
        goto done;
    }
    /* POSIX guarantees that a data pointer from dlsym converts to a function
       pointer; the memcpy keeps ISO C compilers quiet about it. */
    kb_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);

    size_t accepted = 0;
    uint32_t index = 0;
    for (; index < KBC_MAX_PER_FILE; index++) {
        const kb_plugin *raw = entry(index);
        if (!raw)
            break;
        char why[512];
        const kb_plugin *d = NULL;
        void *copy = kbc_descriptor_read(raw, &d, why, sizeof why);
        if (!copy) {
            if (index == 0)
                refuse(r, "%s: %s", path, why);
            else
                refuse(r, "%s (descriptor %u): %s", path, (unsigned)index, why);
            continue;
        }
        const kbc_plugin *prev = kbc_registry_find(r, d->name);
        if (prev) {
            refuse(r, "%s: plugin '%s' is already provided by %s; the first one found is used",
                   path, d->name, prev->path);
            free(copy);
            continue;
        }
        add_item(r, raw, d, copy, path, dl);
        accepted++;
    }
    if (index == 0)
        refuse(r, "%s: %s(0) returned NULL, so it declares no plugin", path, KB_ENTRY_SYMBOL);
    else if (index == KBC_MAX_PER_FILE && entry(index))
        refuse(r, "%s: declares more than %d plugins; only the first %d were read", path,
               KBC_MAX_PER_FILE, KBC_MAX_PER_FILE);

    /* A file none of whose descriptors was accepted is closed at once; the
       others stay open because the registry points into them. */
    if (accepted)
        add_handle(r, dl);
    else
        dlclose(dl);
done:
    free(owned);
}

static int ends_with_so(const char *s)
{
    size_t n = strlen(s);
    return n > 3 && strcmp(s + n - 3, ".so") == 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads every regular *.so in folder, in name order so that which of two
   same-named plugins wins does not depend on the file system. */
static int load_folder(kbc_registry *r, const char *folder, kbc_diag *d)
{
    DIR *dir = opendir(folder);
    if (!dir) {
        kbc_diag_set(d, "plugin folder '%s' cannot be read: %s", folder, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (!ends_with_so(e->d_name))
            continue;
        char *full = kbc_xasprintf("%s/%s", folder, e->d_name);
        struct stat st;
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(full);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            names = kbc_xrealloc(names, cap * sizeof *names);
        }
        names[n++] = full;
    }
    closedir(dir);
    if (n > 0)
        qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        load_file(r, names[i]);
        free(names[i]);
    }
    free(names);
    return n == 0 ? KBC_PATH_EMPTY : 0;
}

int kbc_registry_add_path(kbc_registry *r, const char *path, kbc_diag *d)
{
    if (!path || !*path) {
        kbc_diag_set(d, "plugin path is empty");
        return -1;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            kbc_diag_set(d, "plugin path '%s' does not exist", path);
        else
            kbc_diag_set(d, "plugin path '%s' cannot be read: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        /* A folder given with a trailing '/' would print as "dir//file". */
        char *clean = kbc_xstrdup(path);
        size_t len = strlen(clean);
        while (len > 1 && clean[len - 1] == '/')
            clean[--len] = '\0';
        int rc = load_folder(r, clean, d);
        free(clean);
        return rc;
    }
    /* dlopen() of a FIFO waits for a writer, and of a device reads it. */
    if (!S_ISREG(st.st_mode)) {
        kbc_diag_set(d, "plugin path '%s' is neither a folder nor a regular file (it is %s)",
                     path, S_ISFIFO(st.st_mode) ? "a named pipe" : "a device or a socket");
        return -1;
    }
    /* A file named explicitly is tried whatever its suffix: the user chose
       it, and dlopen's own message says what is wrong with it. */
    load_file(r, path);
    return 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The plugin folder of an installed kbench: <exe>/../KBENCH_PLUGIN_INSTALL_REL.
   Returns a malloc'ed canonical path, or NULL when it does not exist. */
static char *installed_folder(const char *exe_dir)
{
    char *guess = kbc_xasprintf("%s/../%s", exe_dir, KBENCH_PLUGIN_INSTALL_REL);
    char *real = realpath(guess, NULL);
    free(guess);
    if (real && !is_dir(real)) {
        free(real);
        return NULL;
    }
    return real;
}

/* Whether path lies inside folder (both canonical). */
static int is_inside(const char *path, const char *folder)
{
    size_t n = strlen(folder);
    return strncmp(path, folder, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

void kbc_registry_add_defaults(kbc_registry *r)
{
    const char *nodef = getenv("KBENCH_NO_DEFAULT_PLUGINS");
    if (!(nodef && strcmp(nodef, "1") == 0)) {
        char exe[PATH_MAX];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        char *exe_dir = NULL;
        if (len > 0) {
            exe[len] = '\0';
            exe_dir = kbc_xstrdup(dirname(exe));
        }

        /* The build's plugin folder is searched only by programs that live in
           that build tree (kbench itself, the tests).  An installed kbench
           would otherwise find every plugin twice, once in the build and
           once installed, and warn about each as a duplicate. */
        char *build = realpath(KBENCH_PLUGIN_BUILD_DIR, NULL);
        char *build_root = NULL;
        if (build) {
            char *tmp = kbc_xstrdup(build);
            build_root = kbc_xstrdup(dirname(tmp));
            free(tmp);
        }
        char *exe_real = exe_dir ? realpath(exe_dir, NULL) : NULL;
        int in_build = build && is_dir(build) &&
                       (!exe_real || is_inside(exe_real, build_root));
        kbc_diag d;
        if (in_build && load_folder(r, build, &d) < 0)
            refuse(r, "%s", d.msg);

        char *inst = exe_dir ? installed_folder(exe_dir) : NULL;
        if (inst && !(in_build && strcmp(inst, build) == 0) && load_folder(r, inst, &d) < 0)
            refuse(r, "%s", d.msg);

        free(inst);
        free(exe_real);
        free(build_root);
        free(build);
        free(exe_dir);
    }

    const char *env = getenv("KBENCH_PLUGIN_PATH");
    if (!env)
        return;
    char *copy = kbc_xstrdup(env);
    char *save = NULL;
    /* strtok_r skips empty entries ("a::b", a leading ':'), which is what a
       path list means by them here. */
    for (char *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
        kbc_diag d;
        if (kbc_registry_add_path(r, tok, &d) < 0)
            refuse(r, "$KBENCH_PLUGIN_PATH: %s", d.msg);
    }
    free(copy);
}

void kbc_registry_print_refused(const kbc_registry *r, FILE *out)
{
    for (size_t i = 0; i < r->n_refused; i++)
        fprintf(out, "kbench: warning: %s.\n", r->refused[i]);
}
