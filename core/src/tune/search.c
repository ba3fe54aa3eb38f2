/* search.c -- see search.h. */
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MAX_DIMS 64
/* Random neighbours an annealing step tries, and its temperatures (the
   relative worsening accepted with probability 1/e). */
#define ANNEAL_TRIES 4
#define ANNEAL_T0 0.3
#define ANNEAL_COOLING 0.8
#define ANNEAL_COLD 0.01
/* Candidates a random proposal gives the bandit per round. */
#define AUTO_RANDOM_BATCH 4
/* The largest space auto screens (the screen lists the allowed
   candidates and scans them for each value it sweeps); a larger one goes
   straight to the bandit.  A categorical dimension is swept over its
   first SCREEN_MAX_VALUES values. */
#define SCREEN_MAX_SPACE (1ULL << 16)
#define SCREEN_MAX_VALUES 256
/* Candidates a draw in the focus picks the farthest of. */
#define FOCUS_DRAWS 8

static const char *const names[KBC_TUNE_N_STRATEGIES] = {"exhaustive", "random", "local",
                                                         "anneal", "auto"};

const char *kbc_strategy_name(int s)
{
    return s >= 0 && s < KBC_TUNE_N_STRATEGIES ? names[s] : "?";
}

int kbc_strategy_parse(const char *name)
{
    for (int i = 0; i < KBC_TUNE_N_STRATEGIES; i++)
        if (name && strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

/* ---- the costs told (and the candidates asked), by candidate ---- */

typedef struct slot {
    uint64_t key; /* candidate + 1; 0: empty */
    double cost;  /* NAN while asked and not yet told */
} slot;

typedef struct map {
    slot *s;
    size_t cap, n;
} map;

static size_t hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static slot *map_find(const map *m, uint64_t c)
{
    if (!m->cap)
        return NULL;
    for (size_t i = hash(c) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->s[i].key)
            return NULL;
        if (m->s[i].key == c + 1)
            return &m->s[i];
    }
}

static void map_put(map *m, uint64_t c, double cost)
{
    slot *hit = map_find(m, c);
    if (hit) {
        hit->cost = cost;
        return;
    }
    if (2 * (m->n + 1) > m->cap) {
        map old = *m;
        m->cap = old.cap ? 2 * old.cap : 64;
        m->s = kbc_xcalloc(m->cap, sizeof *m->s);
        m->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.s[i].key)
                map_put(m, old.s[i].key - 1, old.s[i].cost);
        free(old.s);
    }
    size_t i = hash(c) & (m->cap - 1);
    while (m->s[i].key)
        i = (i + 1) & (m->cap - 1);
    m->s[i] = (slot){c + 1, cost};
    m->n++;
}

/* ---- the strategies ---- */

enum { ARM_RANDOM, ARM_LOCAL, ARM_ANNEAL, N_ARMS };

typedef struct arm {
    kbc_strategy kind;
    int have_cur, started;  /* a current candidate; its start was asked */
    uint64_t cur;
    double cur_cost;
    double temp;
    uint64_t *tried;        /* the last batch of annealing proposals     */
    size_t n_tried;
    int done;               /* nothing left to propose                  */
    uint64_t *starts;       /* auto: the best candidates started from   */
    size_t n_starts;
    uint64_t pulls;         /* auto: rounds given                        */
    double reward;          /* auto: rounds that improved the best       */
} arm;

struct kbc_search {
    kbc_strategy strategy;
    size_t k;
    uint32_t sizes[MAX_DIMS];
    unsigned char cat[MAX_DIMS];
    uint64_t stride[MAX_DIMS];
    uint64_t n;
    kbc_search_ok ok;
    void *ctx;
    uint64_t rng;
    map seen;
    double best;
    uint64_t best_c;
    uint64_t cursor;        /* exhaustive                               */
    arm arms[N_ARMS];
    int last;               /* the arm that proposed the last batch     */
    double best_before;     /* auto: the best when that batch was asked */
    double focus_before;    /* auto: and the focus's best               */
    uint64_t rounds;
    int64_t allowed;        /* -1 until counted                         */
    uint64_t *nb;           /* room for one candidate's neighbours      */
    size_t nb_cap;
    /* auto's screen (see screen_ask): the allowed candidates, the point
       the sweeps start from, the categorical dimensions to sweep (the
       widest first) and how many of them are swept. */
    int screening;          /* 1 until the screen is over               */
    uint64_t *allow;
    size_t n_allow;
    int have_at;
    uint64_t at;
    size_t sweep[MAX_DIMS], n_sweep, swept;
    /* After the screen: the best screened candidate whose categorical
       values leave something to vary; random draws (and restarts) keep
       its categorical values while any such candidate is fresh. */
    int have_focus, focused;
    uint64_t focus;
    uint64_t focus_best;    /* the best told with the focus's values     */
    double focus_cost;
};

static uint64_t next_random(kbc_search *s)
{
    /* splitmix64 */
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform(kbc_search *s)
{
    return (double)(next_random(s) >> 11) / 9007199254740992.0;
}

uint32_t kbc_search_coord(const kbc_search *s, uint64_t c, size_t d)
{
    return (uint32_t)((c / s->stride[d]) % s->sizes[d]);
}

static int allowed(const kbc_search *s, uint64_t c)
{
    return !s->ok || s->ok(s->ctx, c);
}

/* Not asked yet, and allowed. */
static int fresh(const kbc_search *s, uint64_t c)
{
    return !map_find(&s->seen, c) && allowed(s, c);
}

static void asked(kbc_search *s, uint64_t c)
{
    map_put(&s->seen, c, NAN);
}

/* Whether a and b have the same value on every categorical dimension. */
static int same_categories(const kbc_search *s, uint64_t a, uint64_t b)
{
    for (size_t d = 0; d < s->k; d++)
        if (s->cat[d] && kbc_search_coord(s, a, d) != kbc_search_coord(s, b, d))
            return 0;
    return 1;
}

/* The distance between two candidates: the steps along each ordinal
   dimension, plus one for each categorical one that differs. */
static uint64_t distance(const kbc_search *s, uint64_t a, uint64_t b)
{
    uint64_t dist = 0;
    for (size_t d = 0; d < s->k; d++) {
        uint32_t x = kbc_search_coord(s, a, d), y = kbc_search_coord(s, b, d);
        dist += s->cat[d] ? x != y : x > y ? x - y : y - x;
    }
    return dist;
}

/* How far c is from the nearest candidate asked so far with the focus's
   categorical values. */
static uint64_t focus_gap(const kbc_search *s, uint64_t c)
{
    uint64_t gap = UINT64_MAX;
    for (size_t i = 0; i < s->seen.cap; i++) {
        uint64_t t = s->seen.s[i].key;
        if (t && same_categories(s, t - 1, s->focus)) {
            uint64_t d = distance(s, t - 1, c);
            if (d < gap)
                gap = d;
        }
    }
    return gap;
}

/* A fresh allowed candidate with the focus's categorical values, spread
   out: of a few drawn at random, the one farthest from those asked (a
   space-filling draw: the first ones land apart, not in one corner); 0
   when none is left (and the focus is dropped). */
static int focus_fresh(kbc_search *s, uint64_t *out)
{
    int found = 0;
    uint64_t far = 0;
    for (int i = 0, drawn = 0; i < 64 && drawn < FOCUS_DRAWS; i++) {
        uint64_t c = s->allow[next_random(s) % s->n_allow];
        if (!same_categories(s, c, s->focus) || map_find(&s->seen, c))
            continue;
        drawn++;
        uint64_t gap = focus_gap(s, c);
        if (!found || gap > far) {
            far = gap;
            *out = c;
            found = 1;
        }
    }
    if (found)
        return 1;
    size_t start = (size_t)(next_random(s) % s->n_allow);
    for (size_t i = 0; i < s->n_allow; i++) {
        uint64_t c = s->allow[(start + i) % s->n_allow];
        if (same_categories(s, c, s->focus) && !map_find(&s->seen, c)) {
            *out = c;
            return 1;
        }
    }
    s->have_focus = 0;
    return 0;
}

/* A fresh candidate at random (a few draws, then a scan from a random
   place); 0 when none is left. */
static int random_fresh(kbc_search *s, uint64_t *out)
{
    if (s->have_focus && focus_fresh(s, out))
        return 1;
    for (int i = 0; i < 64; i++) {
        uint64_t c = next_random(s) % s->n;
        if (fresh(s, c)) {
            *out = c;
            return 1;
        }
    }
    uint64_t start = next_random(s) % s->n;
    for (uint64_t i = 0; i < s->n; i++) {
        uint64_t c = (start + i) % s->n;
        if (fresh(s, c)) {
            *out = c;
            return 1;
        }
    }
    return 0;
}

static void nb_add(kbc_search *s, size_t *n, uint64_t c)
{
    if (*n == s->nb_cap) {
        s->nb_cap = s->nb_cap ? 2 * s->nb_cap : 64;
        s->nb = kbc_xrealloc(s->nb, s->nb_cap * sizeof *s->nb);
    }
    s->nb[(*n)++] = c;
}

/* Whether y is a step from x along dimension d: one value away on an
   ordinal dimension, any other value on a categorical one. */
static int step(const kbc_search *s, size_t d, uint32_t x, uint32_t y)
{
    return y != x && (s->cat[d] || y + 1 == x || y == x + 1);
}

/* The neighbours of c into s->nb: a step along one dimension; with wide,
   also a step along each of two dimensions at once (so that a space
   whose constraint leaves no valid single step, a checkerboard, can
   still be climbed).  Returns how many. */
static size_t neighbours(kbc_search *s, uint64_t c, int wide)
{
    size_t n = 0;
    for (size_t d = 0; d < s->k; d++) {
        uint32_t x = kbc_search_coord(s, c, d);
        uint64_t base = c - (uint64_t)x * s->stride[d];
        for (uint32_t y = 0; y < s->sizes[d]; y++) {
            if (!step(s, d, x, y))
                continue;
            uint64_t one = base + (uint64_t)y * s->stride[d];
            nb_add(s, &n, one);
            if (!wide)
                continue;
            for (size_t e = d + 1; e < s->k; e++) {
                uint32_t x2 = kbc_search_coord(s, one, e);
                uint64_t base2 = one - (uint64_t)x2 * s->stride[e];
                for (uint32_t y2 = 0; y2 < s->sizes[e]; y2++)
                    if (step(s, e, x2, y2))
                        nb_add(s, &n, base2 + (uint64_t)y2 * s->stride[e]);
            }
        }
    }
    return n;
}

static double cost_of(const kbc_search *s, uint64_t c)
{
    const slot *h = map_find(&s->seen, c);
    return h && !isnan(h->cost) ? h->cost : INFINITY;
}

/* Starts (or restarts) an arm.  Under auto, the best candidate so far
   is the start, once per arm (the random arm finds the basin, the local
   ones descend it); else a fresh random candidate, asked for.  Returns 1
   when it asked for one (out[0]), 0 when the arm has its current
   candidate already, -1 when nothing is left. */
static int start(kbc_search *s, arm *a, uint64_t *out)
{
    uint64_t c;
    a->have_cur = 0;
    a->temp = ANNEAL_T0;
    a->n_tried = 0;
    /* After the screen, the best of the focus (a better candidate of a
       variant without parameters has nothing around it to descend). */
    uint64_t from = s->focused ? s->focus_best : s->best_c;
    double from_cost = s->focused ? s->focus_cost : s->best;
    if (s->strategy == KBC_TUNE_AUTO && isfinite(from_cost)) {
        int used = 0;
        for (size_t i = 0; i < a->n_starts && !used; i++)
            used = a->starts[i] == from;
        if (!used) {
            a->starts = kbc_xrealloc(a->starts, (a->n_starts + 1) * sizeof *a->starts);
            a->starts[a->n_starts++] = from;
            a->cur = from;
            a->cur_cost = from_cost;
            a->have_cur = 1;
            return 0;
        }
    }
    if (!random_fresh(s, &c)) {
        a->done = 1;
        return -1;
    }
    a->cur = c;
    a->started = 1;
    asked(s, c);
    out[0] = c;
    return 1;
}

/* After the start was told: it is the current candidate. */
static void settle_start(kbc_search *s, arm *a)
{
    if (a->started) {
        a->started = 0;
        a->have_cur = 1;
        a->cur_cost = cost_of(s, a->cur);
    }
}

static size_t ask_random(kbc_search *s, arm *a, uint64_t *out, size_t room)
{
    size_t n = 0;
    uint64_t c;
    while (n < room && random_fresh(s, &c)) {
        asked(s, c);
        out[n++] = c;
    }
    if (!n)
        a->done = 1;
    return n;
}

static size_t ask_local(kbc_search *s, arm *a, uint64_t *out, size_t room)
{
    settle_start(s, a);
    for (;;) {
        if (!a->have_cur) {
            int r = start(s, a, out);
            if (r != 0)
                return r > 0;
        }
        /* The single steps first; once they are known and none is better,
           the double steps; then a move to the best, or a restart at a
           local optimum. */
        uint64_t to = a->cur;
        double best = a->cur_cost;
        for (int wide = 0; wide < 2 && to == a->cur; wide++) {
            size_t nn = neighbours(s, a->cur, wide), n = 0;
            for (size_t i = 0; i < nn && n < room; i++)
                if (fresh(s, s->nb[i])) {
                    asked(s, s->nb[i]);
                    out[n++] = s->nb[i];
                }
            if (n)
                return n;
            for (size_t i = 0; i < nn; i++) {
                double c = cost_of(s, s->nb[i]);
                if (c < best) {
                    best = c;
                    to = s->nb[i];
                }
            }
        }
        if (to == a->cur) {
            a->have_cur = 0;
            continue;
        }
        a->cur = to;
        a->cur_cost = best;
    }
}

static size_t ask_anneal(kbc_search *s, arm *a, uint64_t *out, size_t room)
{
    settle_start(s, a);
    if (a->have_cur && a->n_tried) {
        /* The last proposals were told: move to their best when it is
           better, or with the Metropolis probability when worse. */
        double best = INFINITY;
        uint64_t to = a->cur;
        for (size_t i = 0; i < a->n_tried; i++) {
            double c = cost_of(s, a->tried[i]);
            if (c < best) {
                best = c;
                to = a->tried[i];
            }
        }
        a->n_tried = 0;
        if (isfinite(best)) {
            double worse = isfinite(a->cur_cost) && a->cur_cost > 0
                               ? (best - a->cur_cost) / a->cur_cost
                               : -1.0;
            if (worse < 0 || uniform(s) < exp(-worse / a->temp)) {
                a->cur = to;
                a->cur_cost = best;
            }
        }
        a->temp *= ANNEAL_COOLING;
        if (a->temp < ANNEAL_COLD)
            a->have_cur = 0;
    }
    if (!a->have_cur) {
        int r = start(s, a, out);
        if (r != 0)
            return r > 0;
    }
    size_t nn = neighbours(s, a->cur, 1), n = 0;
    /* A few fresh neighbours at random (single and double steps): a
       partial shuffle. */
    for (size_t i = 0; i < nn && n < ANNEAL_TRIES && n < room; i++) {
        size_t j = i + (size_t)(next_random(s) % (nn - i));
        uint64_t t = s->nb[i];
        s->nb[i] = s->nb[j];
        s->nb[j] = t;
        if (fresh(s, s->nb[i])) {
            asked(s, s->nb[i]);
            out[n++] = s->nb[i];
        }
    }
    if (!n) {
        /* Nothing new around here: restart elsewhere (a restart at the
           best so far has nothing new around it either, so a second try
           is a random one). */
        for (int tries = 0; tries < 2; tries++) {
            int r = start(s, a, out);
            if (r != 0)
                return r > 0;
        }
        return 0;
    }
    a->tried = kbc_xrealloc(a->tried, n * sizeof *a->tried);
    memcpy(a->tried, out, n * sizeof *out);
    a->n_tried = n;
    return n;
}

static size_t ask_arm(kbc_search *s, arm *a, uint64_t *out, size_t room)
{
    if (a->done)
        return 0;
    switch (a->kind) {
    case KBC_TUNE_LOCAL:
        return ask_local(s, a, out, room);
    case KBC_TUNE_ANNEAL:
        return ask_anneal(s, a, out, room);
    default:
        return ask_random(s, a, out, room);
    }
}

/* ---- auto's screen ----
   Before the bandit, auto sweeps each categorical dimension (the
   variants, an enum such as a tile shape) once, the widest first: every
   value of it at the current point, then the best of them is the point
   the next sweep starts from.  The first point has each ordinal
   dimension at its middle value and each categorical one at the value
   with the most allowed candidates (ties: one at random), i.e. the
   richest variant.  A value whose candidate there is not allowed (a
   variant that ignores the ordinal parameters has one candidate only)
   is tried at its allowed candidate nearest to the point.  So every
   variant is measured once, near the middle of the space, before any
   budget goes to local moves inside one of them. */

/* The allowed candidate with coordinate d at value y nearest to c (the
   lowest on a tie); 0 when none. */
static int nearest(const kbc_search *s, uint64_t c, size_t d, uint32_t y, uint64_t *out)
{
    uint64_t best = UINT64_MAX;
    for (size_t i = 0; i < s->n_allow; i++) {
        uint64_t a = s->allow[i];
        if (kbc_search_coord(s, a, d) != y)
            continue;
        uint64_t dist = distance(s, a, c);
        if (dist < best) {
            best = dist;
            *out = a;
        }
    }
    return best != UINT64_MAX;
}

/* Lists the allowed candidates, and picks the first point and the
   dimensions to sweep.  0 when there is nothing to screen. */
static int screen_begin(kbc_search *s)
{
    if (s->n > SCREEN_MAX_SPACE)
        return 0;
    size_t cap = 0;
    for (uint64_t c = 0; c < s->n; c++)
        if (allowed(s, c)) {
            if (s->n_allow == cap) {
                cap = cap ? 2 * cap : 64;
                s->allow = kbc_xrealloc(s->allow, cap * sizeof *s->allow);
            }
            s->allow[s->n_allow++] = c;
        }
    if (!s->n_allow)
        return 0;
    uint64_t at = 0;
    for (size_t d = 0; d < s->k; d++) {
        uint32_t pick = (s->sizes[d] - 1) / 2;
        if (s->cat[d]) {
            uint64_t *count = kbc_xcalloc(s->sizes[d], sizeof *count), top = 0;
            uint32_t ties = 0;
            for (size_t i = 0; i < s->n_allow; i++)
                count[kbc_search_coord(s, s->allow[i], d)]++;
            for (uint32_t v = 0; v < s->sizes[d]; v++) {
                if (count[v] > top) {
                    top = count[v];
                    ties = 0;
                }
                /* One of the tied values, each as likely (reservoir). */
                if (count[v] == top && next_random(s) % ++ties == 0)
                    pick = v;
            }
            free(count);
        }
        at += (uint64_t)pick * s->stride[d];
    }
    /* The widest categorical dimension first (the lowest on a tie). */
    for (size_t d = 0; d < s->k; d++) {
        if (!s->cat[d] || s->sizes[d] < 2)
            continue;
        size_t i = s->n_sweep++;
        while (i > 0 && s->sizes[s->sweep[i - 1]] < s->sizes[d]) {
            s->sweep[i] = s->sweep[i - 1];
            i--;
        }
        s->sweep[i] = d;
    }
    /* The point itself, or the allowed candidate nearest to it. */
    if (!allowed(s, at) && !nearest(s, at, 0, kbc_search_coord(s, at, 0), &at))
        nearest(s, at, 0, kbc_search_coord(s, s->allow[0], 0), &at);
    s->at = at;
    return 1;
}

/* The focus after the screen: the best told candidate that shares its
   categorical values with another allowed one. */
static void screen_focus(kbc_search *s)
{
    double best = INFINITY;
    for (size_t i = 0; i < s->seen.cap; i++) {
        const slot *t = &s->seen.s[i];
        if (!t->key || !(t->cost < best))
            continue;
        uint64_t c = t->key - 1;
        for (size_t j = 0; j < s->n_allow; j++)
            if (s->allow[j] != c && same_categories(s, s->allow[j], c)) {
                best = t->cost;
                s->focus = s->focus_best = c;
                s->focus_cost = best;
                s->have_focus = s->focused = 1;
                break;
            }
    }
}

/* The screen's next candidates; 0 when it is over. */
static size_t screen_ask(kbc_search *s, uint64_t *out, size_t room)
{
    if (!s->have_at) {
        if (!screen_begin(s))
            return 0;
        s->have_at = 1;
        if (fresh(s, s->at)) {
            asked(s, s->at);
            out[0] = s->at;
            return 1;
        }
    }
    for (; s->swept < s->n_sweep; s->swept++) {
        size_t d = s->sweep[s->swept], n = 0;
        uint64_t line[SCREEN_MAX_VALUES], to = s->at;
        double best = cost_of(s, s->at);
        uint32_t m = s->sizes[d] < SCREEN_MAX_VALUES ? s->sizes[d] : SCREEN_MAX_VALUES;
        for (uint32_t y = 0; y < m; y++) {
            uint64_t c;
            if (!nearest(s, s->at, d, y, &c))
                continue;
            if (fresh(s, c)) {
                size_t dup = 0;
                while (dup < n && line[dup] != c)
                    dup++;
                if (dup == n)
                    line[n++] = c;
            } else if (cost_of(s, c) < best) {
                best = cost_of(s, c);
                to = c;
            }
        }
        if (n) {
            /* In a random order, so that a budget that ends the sweep
               leaves out values at random, not the last ones. */
            for (size_t i = 0; i + 1 < n; i++) {
                size_t j = i + (size_t)(next_random(s) % (n - i));
                uint64_t t = line[i];
                line[i] = line[j];
                line[j] = t;
            }
            if (n > room)
                n = room;
            for (size_t i = 0; i < n; i++) {
                asked(s, line[i]);
                out[i] = line[i];
            }
            return n;
        }
        s->at = to;
    }
    return 0;
}

/* UCB1 over the arms not done: an arm never pulled first, then the
   highest mean reward plus sqrt(2 ln rounds / pulls). */
static int bandit_pick(const kbc_search *s)
{
    int pick = -1;
    double top = -1;
    for (int i = 0; i < N_ARMS; i++) {
        const arm *a = &s->arms[i];
        if (a->done)
            continue;
        if (!a->pulls)
            return i;
        double score = a->reward / (double)a->pulls +
                       sqrt(2.0 * log((double)s->rounds) / (double)a->pulls);
        if (score > top) {
            top = score;
            pick = i;
        }
    }
    return pick;
}

size_t kbc_search_ask(kbc_search *s, uint64_t *out, size_t room)
{
    if (!room)
        return 0;
    switch (s->strategy) {
    case KBC_TUNE_EXHAUSTIVE: {
        size_t n = 0;
        for (; s->cursor < s->n && n < room; s->cursor++)
            if (fresh(s, s->cursor)) {
                asked(s, s->cursor);
                out[n++] = s->cursor;
            }
        return n;
    }
    case KBC_TUNE_RANDOM:
        s->last = ARM_RANDOM;
        return ask_arm(s, &s->arms[ARM_RANDOM], out, room);
    case KBC_TUNE_LOCAL:
        s->last = ARM_LOCAL;
        return ask_arm(s, &s->arms[ARM_LOCAL], out, room);
    case KBC_TUNE_ANNEAL:
        s->last = ARM_ANNEAL;
        return ask_arm(s, &s->arms[ARM_ANNEAL], out, room);
    case KBC_TUNE_AUTO:
        break;
    }
    if (s->screening) {
        size_t n = screen_ask(s, out, room);
        if (n) {
            s->last = -1;
            return n;
        }
        s->screening = 0;
        screen_focus(s);
    }
    /* The last round's arm is rewarded when the best improved, or the
       focus's best (progress inside the variant being descended). */
    if (s->rounds && s->last >= 0 &&
        (s->best < s->best_before || (s->focused && s->focus_cost < s->focus_before)))
        s->arms[s->last].reward += 1.0;
    for (;;) {
        int i = bandit_pick(s);
        if (i < 0)
            return 0;
        arm *a = &s->arms[i];
        size_t r = a->kind == KBC_TUNE_RANDOM && room > AUTO_RANDOM_BATCH ? AUTO_RANDOM_BATCH
                                                                           : room;
        size_t n = ask_arm(s, a, out, r);
        if (!n)
            continue; /* done now: the bandit picks among the others */
        a->pulls++;
        s->rounds++;
        s->last = i;
        s->best_before = s->best;
        s->focus_before = s->focus_cost;
        return n;
    }
}

void kbc_search_tell(kbc_search *s, uint64_t c, double cost)
{
    if (isnan(cost))
        cost = INFINITY;
    map_put(&s->seen, c, cost);
    if (s->focused && cost < s->focus_cost && same_categories(s, c, s->focus)) {
        s->focus_cost = cost;
        s->focus_best = c;
    }
    if (cost < s->best || (cost == s->best && c < s->best_c && isfinite(cost))) {
        s->best = cost;
        s->best_c = c;
    }
}

kbc_strategy kbc_search_arm(const kbc_search *s)
{
    if (s->strategy != KBC_TUNE_AUTO)
        return s->strategy;
    return s->last >= 0 ? s->arms[s->last].kind : KBC_TUNE_AUTO;
}

double kbc_search_best(const kbc_search *s, uint64_t *c)
{
    *c = isfinite(s->best) ? s->best_c : 0;
    return s->best;
}

uint64_t kbc_search_size(const kbc_search *s)
{
    return s->n;
}

uint64_t kbc_search_allowed(kbc_search *s)
{
    if (s->allowed < 0) {
        uint64_t n = 0;
        for (uint64_t c = 0; c < s->n; c++)
            n += allowed(s, c);
        s->allowed = (int64_t)n;
    }
    return (uint64_t)s->allowed;
}

kbc_search *kbc_search_new(kbc_strategy strategy, const uint32_t *sizes,
                           const unsigned char *categorical, size_t k, uint64_t seed,
                           kbc_search_ok ok, void *ctx)
{
    if (k > MAX_DIMS)
        return NULL;
    uint64_t n = 1;
    for (size_t d = 0; d < k; d++) {
        if (!sizes[d] || n > (1ULL << 40) / sizes[d])
            return NULL;
        n *= sizes[d];
    }
    kbc_search *s = kbc_xcalloc(1, sizeof *s);
    s->strategy = strategy;
    s->k = k;
    s->n = n;
    s->ok = ok;
    s->ctx = ctx;
    s->rng = seed * 0x2545f4914f6cdd1dULL + 1;
    s->best = INFINITY;
    s->last = -1;
    s->allowed = -1;
    s->screening = strategy == KBC_TUNE_AUTO;
    uint64_t stride = 1;
    for (size_t d = k; d-- > 0;) {
        s->sizes[d] = sizes[d];
        s->cat[d] = categorical ? categorical[d] : 0;
        s->stride[d] = stride;
        stride *= sizes[d];
    }
    static const kbc_strategy kinds[N_ARMS] = {KBC_TUNE_RANDOM, KBC_TUNE_LOCAL,
                                               KBC_TUNE_ANNEAL};
    for (int i = 0; i < N_ARMS; i++)
        s->arms[i].kind = kinds[i];
    return s;
}

void kbc_search_free(kbc_search *s)
{
    if (!s)
        return;
    for (int i = 0; i < N_ARMS; i++) {
        free(s->arms[i].tried);
        free(s->arms[i].starts);
    }
    free(s->seen.s);
    free(s->nb);
    free(s->allow);
    free(s);
}
