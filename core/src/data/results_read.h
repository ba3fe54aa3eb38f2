/*
 * results_read.h -- reads a results.json written by results_write.c back into
 * the records it was written from (record.h), for comparisons between runs
 * and for tools.  Needs jansson and record.c only.
 */
#ifndef KBENCH_RESULTS_READ_H
#define KBENCH_RESULTS_READ_H

#include <stddef.h>

#include "record.h"
#include "util.h"

/* Loads every row of the document at path into *recs (malloc'd, *n of
   them, each with its samples; free with kbc_records_free).  Returns 0, or -1 with d set to one sentence.
   A number that does not fit its field (docs/output.md, "Reading results
   back") is such a sentence, naming the file, the result and the field. */
int kbc_results_read(const char *path, kbc_record **recs, size_t *n, kbc_diag *d);

/* path itself, or path/results.json when path is a folder (what every
   command that reads a run accepts); malloc'd. */
char *kbc_results_path(const char *path);

/* The document at path parsed by jansson (the caller json_decref()s it),
   or NULL with d set to one sentence naming the file and line. */
struct json_t;
struct json_t *kbc_results_load(const char *path, kbc_diag *d);

/* kbc_results_read() on a document already parsed (root); path only names
   the file in d. */
int kbc_results_from_json(const struct json_t *root, const char *path, kbc_record **recs,
                          size_t *n, kbc_diag *d);

/* The whole document: the header a run's reporters were given (the
   run_info, rebuilt) and every row.  Everything is owned by the doc;
   info's pointers point into it.  Free with kbc_run_doc_free. */
typedef struct kbc_run_doc {
    kbc_run_info info;       /* ready to hand to a sink's begin()       */
    kbc_machine machine;     /* "machine" (info.machine points here)   */
    int has_machine;         /* the document has a "machine" object    */
    char *command;           /* "command", or NULL                     */
    char *config_file;       /* "config"."file", or NULL               */
    char *clocks_why;        /* "machine"."nvml"."reason", or NULL     */
    kbc_exp_info *exps;      /* "config"."experiments"                 */
    size_t n_exps;
    /* "plan": has_plan 0 when the document has none (a file written
       before plans had a hash); shard_count 0 when "shard" is null. */
    int has_plan;
    char *plan_hash;
    int shard_index, shard_count;
    uint64_t jobs;
    kbc_build_info *builds;  /* "provenance"."plugins"                 */
    size_t n_builds;
    int cccl_version;        /* 0: unknown                             */
    /* "exit_code" and "finished": finished 0 (and exit_code -1) when
       null, which is how a run cut short looks. */
    int exit_code;
    int finished;
    kbc_record *recs;        /* "results", in the document's order     */
    size_t n_recs;
    /* "suspects" (written when the run ends): has_suspects 0 when the
       document has none (a run cut short, or a file written before suspect
       rows were found); each key malloc'd. */
    int has_suspects;
    kbc_suspect *suspects;
    size_t n_suspects;
} kbc_run_doc;

/* Reads the document at path into *doc: the header (machine, command,
   configuration, plan, provenance, exit code), the rows and the suspect
   rows.  Returns 0,
   or -1 with d set to one sentence naming the file (doc is then empty and
   needs no free). */
int kbc_results_read_run(const char *path, kbc_run_doc *doc, kbc_diag *d);

/* The same from a document already parsed by jansson (root is a json_t
   *); path only names the file in d. */
int kbc_run_doc_from_json(const struct json_t *root, const char *path, kbc_run_doc *doc,
                          kbc_diag *d);

/* Frees what doc owns and leaves it empty. */
void kbc_run_doc_free(kbc_run_doc *doc);

#endif
