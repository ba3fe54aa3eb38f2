/*
 * allowed.c -- how many of a problem's candidates the constraint allows,
 * counted over the searched parameters it names only.
 *
 * A constraint's value at a candidate depends on the parameters it names,
 * the variant and the facts: the other searched parameters can take any
 * value without changing it.  So the count is found by evaluating the
 * constraint once per combination of the named parameters (and per
 * variant), and multiplying by the sizes of the others: `x > 99` over a
 * space of ten million candidates is 16 evaluations per variant, not ten
 * million decodings of a candidate into a point.  The count is the one
 * candidate_ok (tune.c) gives: a variant that ignores searched parameters
 * counts each combination of the parameters it uses once, when some
 * combination of the ignored ones allows it.
 *
 * Every combination of the named parameters is evaluated, so that an
 * overflow anywhere in the space is found here, before the search, rather
 * than at some candidate the search happens to propose.
 */
#include <string.h>

#include "tune_internal.h"
#include "util.h"

/* The slots of the constraint's values (kbc_expr_env.ival). */
#define N_SLOTS (KB_MAX_PARAMS + 1 + KBC_EXPR_N_FACTS)

/* A searched parameter's axis and the parameters it drives (itself and
   the followers of its zip group). */
typedef struct dim {
    uint32_t size;
    uint32_t params[KB_MAX_PARAMS];
    size_t n_params;
} dim;

typedef struct scan {
    const kbc_experiment *e;
    const kbc_expr *c;
    int64_t ival[N_SLOTS];
    dim dims[KB_MAX_PARAMS]; /* the named searched parameters      */
    size_t search_of[KB_MAX_PARAMS]; /* dims[k] is x->search[search_of[k]] */
    size_t n_dims;
    uint32_t at[KB_MAX_PARAMS]; /* each dim's value index            */
} scan;

static int64_t ival_of(const kb_param *q, kb_value v)
{
    return q->type == KB_PARAM_SIZE ? (int64_t)v.u : q->type == KB_PARAM_FLOAT ? 0 : v.i;
}

/* The axis whose index drives parameter i (its zip group's first). */
static uint32_t driver(const kbc_experiment *e, uint32_t i)
{
    return e->axes[i].lead_plus1 ? e->axes[i].lead_plus1 - 1 : i;
}

/* Sets the values of the parameters dim k drives to its index at[k]. */
static void set_dim(scan *s, size_t k)
{
    const dim *m = &s->dims[k];
    for (size_t j = 0; j < m->n_params; j++) {
        uint32_t i = m->params[j];
        const kbc_axis *a = &s->e->axes[i];
        s->ival[i] = ival_of(a->param, a->values[s->at[k]]);
    }
}

/* Steps the odometer over dims[lo..hi) (the last the fastest); 0 when it
   wraps around to all zeros. */
static int step(scan *s, size_t lo, size_t hi)
{
    for (size_t k = hi; k-- > lo;) {
        int more = ++s->at[k] < s->dims[k].size;
        if (!more)
            s->at[k] = 0;
        set_dim(s, k);
        if (more)
            return 1;
    }
    return 0;
}

/* Orders dims so that those variant v uses come first; returns how many. */
static size_t used_first(scan *s, uint32_t v, const tune_exp *x)
{
    size_t n_used = 0;
    for (size_t k = 0; k < s->n_dims; k++)
        if (kbc_tune_uses(s->e, v, x->search[s->search_of[k]])) {
            dim m = s->dims[k];
            size_t o = s->search_of[k];
            memmove(&s->dims[n_used + 1], &s->dims[n_used], (k - n_used) * sizeof *s->dims);
            memmove(&s->search_of[n_used + 1], &s->search_of[n_used],
                    (k - n_used) * sizeof *s->search_of);
            s->dims[n_used] = m;
            s->search_of[n_used] = o;
            n_used++;
        }
    return n_used;
}

void kbc_tune_allowed(const tune *t, const tune_problem *p, tune_allowed *a)
{
    memset(a, 0, sizeof *a);
    a->empty_term = -1;
    const tune_exp *x = &t->exps[p->te];
    const kbc_experiment *e = &t->full.exps[x->exp];
    const kb_plugin *d = e->plugin->desc;
    scan s;
    memset(&s, 0, sizeof s);
    s.e = e;
    s.c = x->constrain;
    unsigned char named[N_SLOTS];
    if (x->constrain)
        kbc_expr_slots(x->constrain, named, d->n_params + 1 + KBC_EXPR_N_FACTS);
    else
        memset(named, 0, sizeof named);

    /* Every value at its first index, the problem's at the problem's. */
    for (uint32_t i = 0; i < d->n_params; i++) {
        uint32_t lead = driver(e, i);
        uint32_t idx = 0;
        for (size_t j = 0; j < x->n_problem; j++)
            if (x->problem[j] == lead)
                idx = p->at[j];
        s.ival[i] = ival_of(&d->params[i], e->axes[i].values[idx]);
    }
    for (int f = 0; f < KBC_EXPR_N_FACTS; f++)
        s.ival[d->n_params + 1 + f] = t->facts[f];

    /* The searched parameters the constraint names (through any member of
       their zip group); the others multiply. */
    uint64_t others[KB_MAX_PARAMS];
    for (size_t j = 0; j < x->n_search; j++) {
        dim m = {(uint32_t)e->axes[x->search[j]].n, {0}, 0};
        int is_named = 0;
        for (uint32_t i = 0; i < d->n_params; i++)
            if (driver(e, i) == x->search[j]) {
                m.params[m.n_params++] = i;
                is_named |= named[i];
            }
        others[j] = is_named ? 1 : m.size;
        if (is_named) {
            s.search_of[s.n_dims] = j;
            s.dims[s.n_dims++] = m;
        }
    }

    kbc_expr_env env = {s.ival};
    for (size_t vi = 0; vi < x->n_variants; vi++) {
        uint32_t v = x->variants[vi];
        s.ival[d->n_params] = v;
        size_t n_used = used_first(&s, v, x);
        /* The parameters v uses and the constraint does not name: each of
           their values is another candidate. */
        uint64_t times = 1;
        for (size_t j = 0; j < x->n_search; j++)
            if (kbc_tune_uses(e, v, x->search[j]))
                times *= others[j];
        memset(s.at, 0, sizeof s.at);
        for (size_t k = 0; k < s.n_dims; k++)
            set_dim(&s, k);
        do {
            /* The combinations of the ignored named parameters: one that
               holds makes this combination of the used ones a candidate. */
            int any = 0;
            do {
                int r = x->constrain ? kbc_expr_eval(x->constrain, &env, a->why, sizeof a->why)
                                     : 1;
                if (r < 0) {
                    a->overflow = 1;
                    return;
                }
                any |= r;
            } while (step(&s, n_used, s.n_dims));
            a->n += any ? times : 0;
        } while (step(&s, 0, n_used));
    }
    if (a->n > 0 || !x->constrain)
        return;

    /* None: the first term that holds nowhere by itself, if one does. */
    size_t n_terms = kbc_expr_n_terms(x->constrain);
    for (size_t term = 0; term < n_terms && a->empty_term < 0; term++) {
        int any = 0;
        for (size_t vi = 0; vi < x->n_variants && !any; vi++) {
            s.ival[d->n_params] = x->variants[vi];
            memset(s.at, 0, sizeof s.at);
            for (size_t k = 0; k < s.n_dims; k++)
                set_dim(&s, k);
            do
                any = kbc_expr_term_eval(x->constrain, term, &env);
            while (!any && step(&s, 0, s.n_dims));
        }
        if (!any)
            a->empty_term = (long)term;
    }
}
