/*
 * expr.h -- the constraint of a tuning experiment (`constrain = ...`): a
 * C-like expression over the plugin's parameters, the variant and a few
 * facts of the machine, true for the candidates the search may try.
 *
 *   expr    := or
 *   or      := and { "||" and }
 *   and     := cmp { "&&" cmp }
 *   cmp     := sum { ("==" | "!=" | "<" | "<=" | ">" | ">=") sum }
 *   sum     := product { ("+" | "-") product }
 *   product := unary { ("*" | "/" | "%") unary }
 *   unary   := ("!" | "-") unary | primary
 *   primary := INTEGER | NAME | WORD | "quoted" | '(' expr ')'
 *
 * Values are 64-bit integers or text.  A NAME is a parameter (integer,
 * size and bool parameters are integers; enum parameters are text), the
 * word `variant` (text), or a fact: cpu_threads, sm_count, cc (the compute
 * capability as 90), l2_bytes, device_mem (0 where there is no GPU).  Text
 * compares with == and != only, against a choice of the enum it is
 * compared with (a bare word such as 128x256x8, or a quoted one such as
 * "cub-radix"); a word that is neither a name nor such a choice is a
 * mistake.  An integer is decimal, with an optional K, M or G (powers of
 * 1024).  A comparison and ! give 1 or 0 (so a < b < c compares a < b,
 * 0 or 1, with c, as C does); && and || stop early.  A division or
 * remainder by zero makes the whole constraint false there; an operation
 * whose result does not fit 64 bits is an error (kbc_expr_eval), never a
 * wrap.  An expression is at most KBC_EXPR_MAX_LEN characters and nests
 * at most KBC_EXPR_MAX_DEPTH parentheses and unary operators deep: the
 * parser and the evaluator recurse per level.
 */
#ifndef KBENCH_EXPR_H
#define KBENCH_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include "kbench/plugin.h"

/* The facts of the machine a constraint may name, in this order after the
   parameters and `variant` (kbc_expr_env.ival). */
#define KBC_EXPR_FACTS "cpu_threads", "sm_count", "cc", "l2_bytes", "device_mem"
#define KBC_EXPR_N_FACTS 5

/* The longest constraint, and its deepest nesting. */
#define KBC_EXPR_MAX_LEN 4096
#define KBC_EXPR_MAX_DEPTH 64

typedef struct kbc_expr kbc_expr;

/* What names mean: the plugin's parameters and variant names (the
   strings must outlive the expression; the arrays are copied or the
   plugin's own). */
typedef struct kbc_expr_names {
    const kb_param *params; /* stride sizeof(kb_param): the desc's array */
    uint32_t n_params;
    const char *const *variants;
    uint32_t n_variants;
} kbc_expr_names;

/* Parses text.  Returns the expression, or NULL with why set to one
   sentence naming the offending token and its column ("unknown name
   'blok_x' at column 1 (the parameters are ...; did you mean 'block_x'?)"). */
kbc_expr *kbc_expr_parse(const char *text, const kbc_expr_names *names, char *why, size_t n);

/* A candidate's values: ival[i] for parameter i (enums: their index),
   ival[n_params] the variant's index, then the facts; the text of an enum
   parameter is its choice, the variant's its name. */
typedef struct kbc_expr_env {
    const int64_t *ival;
} kbc_expr_env;

/* 1 when the constraint holds, 0 when not (or it divides by zero), -1
   when an operation overflows 64 bits, with why set to a clause naming
   the operator, its operands and its column ("'+' of 4 and
   9223372036854775807 does not fit a 64-bit integer at column 7"). */
int kbc_expr_eval(const kbc_expr *e, const kbc_expr_env *env, char *why, size_t n);

/* 1 when the constraint holds, 0 when not (it divides by zero, or
   overflows: kbc_expr_eval tells that apart). */
int kbc_expr_holds(const kbc_expr *e, const kbc_expr_env *env);

/* Marks used[slot] (count slots: the parameters, the variant, the facts,
   as kbc_expr_env.ival) for each slot the constraint names, and clears
   the others: a candidate's other values cannot change its result. */
void kbc_expr_slots(const kbc_expr *e, unsigned char *used, size_t count);

/* The terms of the constraint: the operands of its top-level && chain
   (one term, the whole, when it is no such chain), each with its result
   at env (1 or 0; an overflow counts as 0), its column from 1 and its
   text as written. */
size_t kbc_expr_n_terms(const kbc_expr *e);
int kbc_expr_term_eval(const kbc_expr *e, size_t i, const kbc_expr_env *env);
int kbc_expr_term_col(const kbc_expr *e, size_t i);
const char *kbc_expr_term_text(const kbc_expr *e, size_t i, char *buf, size_t n);

void kbc_expr_free(kbc_expr *e);

#endif
