/*
 * core_keys.h -- the keys kbench itself reads in an INI file, as one table.
 *
 * Each row says everything about one key: its name, what kind of value it
 * takes, where it may be written, its default, one line of help and, for
 * the measure settings, the typed declaration its value is parsed with and
 * the kbc_measure field it lands in.  config.c parses and defaults from this
 * table, the loader refuses a plugin parameter named like a row, and
 * kbc_core_keys_print() documents them.  A new core key is one row in
 * core_keys.c (plus, for a measure setting, its field in kbc_measure).
 */
#ifndef KBENCH_CORE_KEYS_H
#define KBENCH_CORE_KEYS_H

#include <stddef.h>
#include <stdio.h>

#include "kbench/plugin.h"

/* What a core key's value is, and so who parses it. */
typedef enum kbc_key_kind {
    KBC_KIND_PLUGIN,   /* a plugin name (config.c: resolve_plugin)        */
    KBC_KIND_VARIANTS, /* "all" or a list of variant names                */
    KBC_KIND_VARIANT,  /* one selected variant                            */
    KBC_KIND_MEASURE,  /* one typed value (param) stored into kbc_measure */
    KBC_KIND_PATHS,    /* a list of plugin folders or files               */
    KBC_KIND_TEXT      /* free text                                       */
} kbc_key_kind;

/* Where a key may be written (a bit mask). */
#define KBC_IN_GLOBAL 0x1u
#define KBC_IN_EXPERIMENT 0x2u
#define KBC_IN_ANY (KBC_IN_GLOBAL | KBC_IN_EXPERIMENT)

/* How a KBC_KIND_MEASURE value is stored into its kbc_measure field. */
typedef enum kbc_key_store {
    KBC_STORE_NONE,
    KBC_STORE_U32,    /* uint32_t from value.i */
    KBC_STORE_INT,    /* int from value.i      */
    KBC_STORE_U64,    /* uint64_t from value.u */
    KBC_STORE_DOUBLE  /* double from value.f   */
} kbc_key_store;

typedef struct kbc_core_key {
    const char *name;
    kbc_key_kind kind;
    unsigned where;      /* KBC_IN_* */
    const char *def;     /* the default as a user reads it ("required", "none");
                            NULL for a measure key, whose param says it  */
    const char *help;    /* one line; NULL for a measure key (param->help) */
    const kb_param *param; /* KBC_KIND_MEASURE: the typed declaration */
    kbc_key_store store;
    size_t offset;       /* offsetof(kbc_measure, field) */
} kbc_core_key;

extern const kbc_core_key kbc_core_keys[];
extern const size_t kbc_n_core_keys;

/* The row named name, or NULL. */
const kbc_core_key *kbc_core_key_find(const char *name);

/* Stores a parsed value v of key k into the structure at measure (a
   kbc_measure); does nothing for keys that are not KBC_KIND_MEASURE. */
void kbc_core_key_store_value(const kbc_core_key *k, kb_value v, void *measure);

/* The `cache` key: hot (default) or cold (flush the L2 before each timed
   run, outside the timed region). */
extern const kb_param kbc_key_cache;

/* The default and the help line of a row, from its param when it has one. */
const char *kbc_core_key_default(const kbc_core_key *k);
const char *kbc_core_key_help(const kbc_core_key *k);

/* Prints the table: one line per key, "  name  default  help". */
void kbc_core_keys_print(FILE *out);

#endif
