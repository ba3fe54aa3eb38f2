/* expr.c -- see expr.h.  A recursive-descent parser into a small tree,
   a pass that gives every node its type (integer, or the text of one
   parameter's choices or of the variant names) and resolves the words,
   and an evaluator. */
#define _GNU_SOURCE
#include "expr.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *const fact_names[KBC_EXPR_N_FACTS] = {KBC_EXPR_FACTS};

enum { N_INT, N_NAME, N_WORD, N_NOT, N_NEG, N_BIN };
enum { OP_OR, OP_AND, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_ADD, OP_SUB, OP_MUL,
       OP_DIV, OP_MOD };
static const char *const op_text[] = {"||", "&&", "==", "!=", "<", "<=", ">",
                                      ">=", "+",  "-",  "*",  "/",  "%"};

/* A node's type: integer, or text whose values are the choices of a
   domain (a parameter's index, or n_params for the variant names). */
#define T_INT (-1)

typedef struct node {
    int kind, op, col;
    int start, end;   /* the text it was parsed from: [start, end)       */
    int64_t v;        /* N_INT: the value; N_NAME: the slot; N_WORD: the choice */
    char *word;       /* N_WORD */
    int type;         /* T_INT or a domain                                  */
    struct node *a, *b;
} node;

struct kbc_expr {
    node *root;
    kbc_expr_names names; /* its variants: a copy of the array (vnames) */
    const char **vnames;
    char *text;           /* as written, for the terms' text            */
    node **terms;         /* the operands of the top-level && chain      */
    size_t n_terms;
};

typedef struct parser {
    const char *s;
    size_t pos;
    const kbc_expr_names *names;
    char *why;
    size_t whyn;
    int failed;
    int depth;            /* parentheses and unary operators open here  */
} parser;

static int fail(parser *p, int col, const char *fmt, ...) KB_PRINTF(3, 4);
static int fail(parser *p, int col, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(p->why, p->whyn, "%s at column %d", what, col + 1);
    p->failed = 1;
    return -1;
}

static void node_free(node *n)
{
    if (!n)
        return;
    node_free(n->a);
    node_free(n->b);
    free(n->word);
    free(n);
}

static node *mk(int kind, int col)
{
    node *n = kbc_xcalloc(1, sizeof *n);
    n->kind = kind;
    n->col = col;
    n->start = col;
    n->end = col;
    n->type = T_INT;
    return n;
}

/* One level deeper (a parenthesis or a unary operator at col): the
   parser, the type check and the evaluator recurse once per level, so
   the depth is bounded before the stack is.  Returns 0, or -1 after
   fail. */
static int deeper(parser *p, int col)
{
    if (++p->depth <= KBC_EXPR_MAX_DEPTH)
        return 0;
    return fail(p, col, "the expression nests more than %d levels deep (parentheses and the "
                        "unary operators ! and -)",
                KBC_EXPR_MAX_DEPTH);
}

static void skip_space(parser *p)
{
    while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos]))
        p->pos++;
}

/* Whether the text at the cursor is op; consumes it when so. */
static int take(parser *p, const char *op)
{
    skip_space(p);
    size_t n = strlen(op);
    if (strncmp(p->s + p->pos, op, n) != 0)
        return 0;
    /* "<" is not the start of "<=", "!" not of "!=", "=" never alone. */
    if (n == 1 && (op[0] == '<' || op[0] == '>' || op[0] == '!') && p->s[p->pos + 1] == '=')
        return 0;
    p->pos += n;
    return 1;
}

static int is_word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '.';
}

/* The slot a name stands for, or -1. */
static int slot_of(const kbc_expr_names *nm, const char *w)
{
    for (uint32_t i = 0; i < nm->n_params; i++)
        if (strcmp(nm->params[i].name, w) == 0)
            return (int)i;
    if (strcmp(w, "variant") == 0)
        return (int)nm->n_params;
    for (int i = 0; i < KBC_EXPR_N_FACTS; i++)
        if (strcmp(fact_names[i], w) == 0)
            return (int)nm->n_params + 1 + i;
    return -1;
}

static node *parse_or(parser *p);

static node *parse_primary(parser *p)
{
    skip_space(p);
    int col = (int)p->pos;
    char c = p->s[p->pos];
    if (c == '(') {
        if (deeper(p, col) != 0)
            return NULL;
        p->pos++;
        node *n = parse_or(p);
        if (!n)
            return NULL;
        if (!take(p, ")")) {
            skip_space(p);
            fail(p, (int)p->pos, "'(' at column %d is not closed%s%.20s%s", col + 1,
                 p->s[p->pos] ? ": found '" : "", p->s + p->pos, p->s[p->pos] ? "'" : "");
            node_free(n);
            return NULL;
        }
        p->depth--;
        n->start = col;
        n->end = (int)p->pos;
        return n;
    }
    if (c == '"' || c == '\'') {
        const char *end = strchr(p->s + p->pos + 1, c);
        if (!end) {
            fail(p, col, "the quote %c is not closed", c);
            return NULL;
        }
        node *n = mk(N_WORD, col);
        n->word = kbc_xstrndup(p->s + p->pos + 1, (size_t)(end - (p->s + p->pos + 1)));
        p->pos = (size_t)(end - p->s) + 1;
        n->end = (int)p->pos;
        return n;
    }
    if (!is_word_char(c)) {
        if (!c)
            fail(p, col, "the expression ends where a value is expected");
        else
            fail(p, col, "'%c' is not expected here (a value, a name or '(' is)", c);
        return NULL;
    }
    size_t start = p->pos;
    while (is_word_char(p->s[p->pos]))
        p->pos++;
    char *w = kbc_xstrndup(p->s + start, p->pos - start);
    if (isdigit((unsigned char)w[0])) {
        char *end;
        unsigned long long v = strtoull(w, &end, 10);
        unsigned long long mul = 1;
        if (*end && !end[1] && strchr("KMG", *end))
            mul = *end == 'K' ? 1024ULL : *end == 'M' ? 1024ULL * 1024 : 1024ULL * 1024 * 1024;
        if (!*end || mul > 1) {
            if (v > (unsigned long long)INT64_MAX / mul) {
                fail(p, col, "'%s' is too large", w);
                free(w);
                return NULL;
            }
            node *n = mk(N_INT, col);
            n->v = (int64_t)(v * mul);
            n->end = (int)p->pos;
            free(w);
            return n;
        }
    }
    int slot = isdigit((unsigned char)w[0]) ? -1 : slot_of(p->names, w);
    node *n = mk(slot >= 0 ? N_NAME : N_WORD, col);
    n->end = (int)p->pos;
    if (slot >= 0) {
        n->v = slot;
        free(w);
    } else {
        n->word = w;
    }
    return n;
}

static node *parse_unary(parser *p)
{
    skip_space(p);
    int col = (int)p->pos;
    int kind = take(p, "!") ? N_NOT : take(p, "-") ? N_NEG : -1;
    if (kind < 0)
        return parse_primary(p);
    if (deeper(p, col) != 0)
        return NULL;
    node *a = parse_unary(p);
    if (!a)
        return NULL;
    p->depth--;
    node *n = mk(kind, col);
    n->a = a;
    n->end = a->end;
    return n;
}

/* One level of left-associative binary operators ops[0..n_ops). */
static node *parse_level(parser *p, node *(*next)(parser *), const int *ops, int n_ops)
{
    node *left = next(p);
    while (left) {
        skip_space(p);
        int col = (int)p->pos, op = -1;
        for (int i = 0; i < n_ops && op < 0; i++)
            if (take(p, op_text[ops[i]]))
                op = ops[i];
        if (op < 0)
            return left;
        node *right = next(p);
        if (!right) {
            node_free(left);
            return NULL;
        }
        node *n = mk(N_BIN, col);
        n->op = op;
        n->a = left;
        n->b = right;
        n->start = left->start;
        n->end = right->end;
        left = n;
    }
    return NULL;
}

static node *parse_product(parser *p)
{
    static const int ops[] = {OP_MUL, OP_DIV, OP_MOD};
    return parse_level(p, parse_unary, ops, 3);
}

static node *parse_sum(parser *p)
{
    static const int ops[] = {OP_ADD, OP_SUB};
    return parse_level(p, parse_product, ops, 2);
}

static node *parse_cmp(parser *p)
{
    static const int ops[] = {OP_EQ, OP_NE, OP_LE, OP_GE, OP_LT, OP_GT};
    node *left = parse_level(p, parse_sum, ops, 6);
    /* parse_level stops before anything that is not an operator. */
    if (left && p->s[p->pos] == '=') {
        fail(p, (int)p->pos, "'=' is not an operator here (compare with ==)");
        node_free(left);
        return NULL;
    }
    return left;
}

static node *parse_and(parser *p)
{
    static const int ops[] = {OP_AND};
    return parse_level(p, parse_cmp, ops, 1);
}

static node *parse_or(parser *p)
{
    static const int ops[] = {OP_OR};
    return parse_level(p, parse_and, ops, 1);
}

/* ---- types ---- */

/* The text domain of a slot, or T_INT. */
static int slot_type(const kbc_expr_names *nm, int64_t slot)
{
    if (slot < (int64_t)nm->n_params)
        return nm->params[slot].type == KB_PARAM_ENUM ? (int)slot : T_INT;
    if (slot == (int64_t)nm->n_params)
        return (int)nm->n_params;
    return T_INT;
}

static const char *slot_name(const kbc_expr_names *nm, int64_t slot)
{
    if (slot < (int64_t)nm->n_params)
        return nm->params[slot].name;
    if (slot == (int64_t)nm->n_params)
        return "variant";
    return fact_names[slot - nm->n_params - 1];
}

/* The choices of a text domain. */
static const char *const *domain_choices(const kbc_expr_names *nm, int dom, uint32_t *n)
{
    if (dom == (int)nm->n_params) {
        *n = nm->n_variants;
        return nm->variants;
    }
    *n = nm->params[dom].n_choices;
    return nm->params[dom].choices;
}

static void join_names(char *buf, size_t n, const char *const *names, size_t count)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", names[i]);
}

/* A word that is no name and is not compared with text. */
static int unknown_word(parser *p, const node *n)
{
    const kbc_expr_names *nm = p->names;
    size_t total = nm->n_params + 1 + KBC_EXPR_N_FACTS;
    const char **all = kbc_xcalloc(total, sizeof *all);
    for (uint32_t i = 0; i < nm->n_params; i++)
        all[i] = nm->params[i].name;
    all[nm->n_params] = "variant";
    for (int i = 0; i < KBC_EXPR_N_FACTS; i++)
        all[nm->n_params + 1 + i] = fact_names[i];
    char list[600];
    join_names(list, sizeof list, all, nm->n_params);
    const char *best = kbc_closest(n->word, all, total);
    char sug[120] = "";
    if (best)
        snprintf(sug, sizeof sug, "; did you mean '%s'?", best);
    free(all);
    if (isdigit((unsigned char)n->word[0]))
        return fail(p, n->col,
                    "'%s' is neither an integer nor compared with a parameter that takes it "
                    "as a value",
                    n->word);
    return fail(p, n->col,
                "unknown name '%s' (names are the parameters %s, variant, and the facts "
                "cpu_threads, sm_count, cc, l2_bytes, device_mem)%s",
                n->word, list, sug);
}

static int check(parser *p, node *n);

/* == or != between text: both sides of one domain; a word becomes the
   index of its choice. */
static int check_text_cmp(parser *p, node *n)
{
    const kbc_expr_names *nm = p->names;
    int a_text = n->a->kind == N_NAME && slot_type(nm, n->a->v) != T_INT;
    int b_text = n->b->kind == N_NAME && slot_type(nm, n->b->v) != T_INT;
    node *name = a_text ? n->a : b_text ? n->b : n->a->kind == N_WORD ? n->b : n->a;
    node *word = name == n->a ? n->b : n->a;
    if (name->kind == N_WORD)
        return unknown_word(p, name);
    if (check(p, name) != 0)
        return -1;
    if (word == name)
        return 0;
    if (name->type == T_INT)
        return word->kind == N_WORD ? unknown_word(p, word) : 0;
    if (word->kind != N_WORD) {
        if (check(p, word) != 0)
            return -1;
        if (word->type != name->type)
            return fail(p, n->col, "'%s' compares %s with %s, which is not the same kind of value",
                        op_text[n->op], slot_name(p->names, name->v),
                        word->kind == N_NAME ? slot_name(p->names, word->v) : "a number");
        return 0;
    }
    uint32_t nc;
    const char *const *ch = domain_choices(p->names, name->type, &nc);
    for (uint32_t i = 0; i < nc; i++)
        if (strcmp(ch[i], word->word) == 0) {
            word->v = i;
            word->type = name->type;
            return 0;
        }
    char list[600], sug[120] = "";
    join_names(list, sizeof list, ch, nc);
    const char *best = kbc_closest(word->word, ch, nc);
    if (best)
        snprintf(sug, sizeof sug, "; did you mean '%s'?", best);
    return fail(p, word->col, "'%s' is not a value of %s%s (it has: %s)%s", word->word,
                name->type == (int)p->names->n_params ? "" : "parameter ",
                slot_name(p->names, name->v), list, sug);
}

static int check(parser *p, node *n)
{
    switch (n->kind) {
    case N_INT:
        return 0;
    case N_NAME:
        n->type = slot_type(p->names, n->v);
        if (n->v < (int64_t)p->names->n_params &&
            p->names->params[n->v].type == KB_PARAM_FLOAT)
            return fail(p, n->col, "'%s' is a floating-point parameter, which a constraint "
                                   "cannot use (it works in integers)",
                        slot_name(p->names, n->v));
        return 0;
    case N_WORD:
        return unknown_word(p, n);
    case N_NOT:
    case N_NEG:
        if (check(p, n->a) != 0)
            return -1;
        if (n->a->type != T_INT)
            return fail(p, n->col, "'%s' cannot apply to %s, which is text",
                        n->kind == N_NOT ? "!" : "-", slot_name(p->names, n->a->v));
        return 0;
    }
    if ((n->op == OP_EQ || n->op == OP_NE) &&
        (n->a->kind == N_WORD || n->b->kind == N_WORD ||
         (n->a->kind == N_NAME && slot_type(p->names, n->a->v) != T_INT) ||
         (n->b->kind == N_NAME && slot_type(p->names, n->b->v) != T_INT)))
        return check_text_cmp(p, n);
    /* Arithmetic and order: a text name on either side is the mistake,
       before any word on the other. */
    const node *text = n->a->kind == N_NAME && slot_type(p->names, n->a->v) != T_INT ? n->a
                       : n->b->kind == N_NAME && slot_type(p->names, n->b->v) != T_INT
                           ? n->b
                           : NULL;
    if (!text) {
        if (check(p, n->a) != 0 || check(p, n->b) != 0)
            return -1;
        text = n->a->type != T_INT ? n->a : n->b->type != T_INT ? n->b : NULL;
    }
    if (text)
        return fail(p, n->col, "'%s' cannot apply to %s, which is text (compare it with == or "
                               "!=)",
                    op_text[n->op], slot_name(p->names, text->v));
    return 0;
}

/* The operands of the && chain at the top of the tree, left to right. */
static void collect_terms(kbc_expr *e, node *n)
{
    if (n->kind == N_BIN && n->op == OP_AND) {
        collect_terms(e, n->a);
        collect_terms(e, n->b);
        return;
    }
    e->terms = kbc_xrealloc(e->terms, (e->n_terms + 1) * sizeof *e->terms);
    e->terms[e->n_terms++] = n;
}

kbc_expr *kbc_expr_parse(const char *text, const kbc_expr_names *names, char *why, size_t n)
{
    parser p = {text, 0, names, why, n, 0, 0};
    size_t len = strlen(text);
    if (len > KBC_EXPR_MAX_LEN) {
        snprintf(why, n, "the expression is %zu characters long, more than the %d a constraint "
                         "may have at column %d",
                 len, KBC_EXPR_MAX_LEN, KBC_EXPR_MAX_LEN + 1);
        return NULL;
    }
    skip_space(&p);
    if (!text[p.pos]) {
        snprintf(why, n, "the expression is empty");
        return NULL;
    }
    node *root = parse_or(&p);
    if (root) {
        skip_space(&p);
        if (text[p.pos]) {
            size_t tok = 0;
            while (text[p.pos + tok] && !isspace((unsigned char)text[p.pos + tok]) && tok < 20)
                tok++;
            fail(&p, (int)p.pos, "'%.*s' is not expected here (an operator or the end is)",
                 (int)tok, text + p.pos);
        } else if (check(&p, root) == 0) {
            kbc_expr *e = kbc_xcalloc(1, sizeof *e);
            e->root = root;
            e->names = *names;
            e->vnames = kbc_xcalloc(names->n_variants ? names->n_variants : 1,
                                    sizeof *e->vnames);
            for (uint32_t i = 0; i < names->n_variants; i++)
                e->vnames[i] = names->variants[i];
            e->names.variants = e->vnames;
            e->text = kbc_xstrdup(text);
            collect_terms(e, root);
            return e;
        }
    }
    node_free(root);
    return NULL;
}

/* ---- evaluation ---- */

static const char *text_of(const kbc_expr *e, const node *n, const kbc_expr_env *env)
{
    uint32_t nc;
    const char *const *ch = domain_choices(&e->names, n->type, &nc);
    int64_t i = n->kind == N_WORD ? n->v : env->ival[n->v];
    return i >= 0 && (uint64_t)i < nc ? ch[i] : "";
}

/* What stopped an evaluation: a division by zero (the constraint is
   false there) or an overflow (an error), and where. */
typedef struct halt {
    int overflow;
    const node *at;
    int64_t a, b;
} halt;

enum { EVAL_OK = 0, EVAL_HALT = -1 };

static int halt_at(halt *h, int overflow, const node *n, int64_t a, int64_t b)
{
    h->overflow = overflow;
    h->at = n;
    h->a = a;
    h->b = b;
    return EVAL_HALT;
}

/* Returns EVAL_OK with *out, or EVAL_HALT with h set.  Integers are
   64-bit and an operation whose result does not fit is an overflow, not
   a wrap: a constraint that wraps says something else than it reads. */
static int eval(const kbc_expr *e, const node *n, const kbc_expr_env *env, int64_t *out,
                halt *h)
{
    int64_t a, b;
    switch (n->kind) {
    case N_INT:
        *out = n->v;
        return EVAL_OK;
    case N_NAME:
        *out = env->ival[n->v];
        return EVAL_OK;
    case N_WORD:
        *out = n->v;
        return EVAL_OK;
    case N_NOT:
        if (eval(e, n->a, env, &a, h))
            return EVAL_HALT;
        *out = !a;
        return EVAL_OK;
    case N_NEG:
        if (eval(e, n->a, env, &a, h))
            return EVAL_HALT;
        if (__builtin_sub_overflow((int64_t)0, a, out))
            return halt_at(h, 1, n, a, 0);
        return EVAL_OK;
    }
    if (n->op == OP_OR || n->op == OP_AND) {
        if (eval(e, n->a, env, &a, h))
            return EVAL_HALT;
        if ((n->op == OP_OR && a) || (n->op == OP_AND && !a)) {
            *out = n->op == OP_OR;
            return EVAL_OK;
        }
        if (eval(e, n->b, env, &b, h))
            return EVAL_HALT;
        *out = b != 0;
        return EVAL_OK;
    }
    if (n->a->type != T_INT) {
        /* Text: both sides of one domain; compare the words. */
        int same = strcmp(text_of(e, n->a, env), text_of(e, n->b, env)) == 0;
        *out = n->op == OP_EQ ? same : !same;
        return EVAL_OK;
    }
    if (eval(e, n->a, env, &a, h) || eval(e, n->b, env, &b, h))
        return EVAL_HALT;
    int over = 0;
    switch (n->op) {
    case OP_EQ: *out = a == b; break;
    case OP_NE: *out = a != b; break;
    case OP_LT: *out = a < b; break;
    case OP_LE: *out = a <= b; break;
    case OP_GT: *out = a > b; break;
    case OP_GE: *out = a >= b; break;
    case OP_ADD: over = __builtin_add_overflow(a, b, out); break;
    case OP_SUB: over = __builtin_sub_overflow(a, b, out); break;
    case OP_MUL: over = __builtin_mul_overflow(a, b, out); break;
    case OP_DIV:
    case OP_MOD:
        if (b == 0)
            return halt_at(h, 0, n, a, b);
        if (a == INT64_MIN && b == -1) {
            /* The quotient does not fit; the remainder is 0 (C leaves
               both undefined). */
            if (n->op == OP_DIV)
                return halt_at(h, 1, n, a, b);
            *out = 0;
            break;
        }
        *out = n->op == OP_DIV ? a / b : a % b;
        break;
    }
    return over ? halt_at(h, 1, n, a, b) : EVAL_OK;
}

/* The result of evaluating node n: 1, 0, or -1 with why set (an
   overflow). */
static int result_of(const kbc_expr *e, const node *n, const kbc_expr_env *env, char *why,
                     size_t wn)
{
    int64_t v;
    halt h = {0, NULL, 0, 0};
    if (eval(e, n, env, &v, &h) == EVAL_OK)
        return v != 0;
    if (!h.overflow)
        return 0;
    if (why) {
        if (h.at->kind == N_NEG)
            snprintf(why, wn, "'-' of %lld does not fit a 64-bit integer at column %d",
                     (long long)h.a, h.at->col + 1);
        else
            snprintf(why, wn, "'%s' of %lld and %lld does not fit a 64-bit integer at column %d",
                     op_text[h.at->op], (long long)h.a, (long long)h.b, h.at->col + 1);
    }
    return -1;
}

int kbc_expr_holds(const kbc_expr *e, const kbc_expr_env *env)
{
    return result_of(e, e->root, env, NULL, 0) == 1;
}

int kbc_expr_eval(const kbc_expr *e, const kbc_expr_env *env, char *why, size_t n)
{
    return result_of(e, e->root, env, why, n);
}

size_t kbc_expr_n_terms(const kbc_expr *e)
{
    return e->n_terms;
}

int kbc_expr_term_eval(const kbc_expr *e, size_t i, const kbc_expr_env *env)
{
    return result_of(e, e->terms[i], env, NULL, 0) == 1;
}

int kbc_expr_term_col(const kbc_expr *e, size_t i)
{
    return e->terms[i]->start + 1;
}

const char *kbc_expr_term_text(const kbc_expr *e, size_t i, char *buf, size_t n)
{
    const node *t = e->terms[i];
    snprintf(buf, n, "%.*s", t->end - t->start, e->text + t->start);
    return buf;
}

static void mark_slots(const node *n, unsigned char *used, size_t count)
{
    if (!n)
        return;
    if (n->kind == N_NAME && (uint64_t)n->v < count)
        used[n->v] = 1;
    mark_slots(n->a, used, count);
    mark_slots(n->b, used, count);
}

void kbc_expr_slots(const kbc_expr *e, unsigned char *used, size_t count)
{
    memset(used, 0, count);
    mark_slots(e->root, used, count);
}

void kbc_expr_free(kbc_expr *e)
{
    if (!e)
        return;
    node_free(e->root);
    free(e->vnames);
    free(e->text);
    free(e->terms);
    free(e);
}
