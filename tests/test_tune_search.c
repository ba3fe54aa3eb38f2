/*
 * test_tune_search.c -- kbench tune's strategies (core/src/tune/search.h)
 * on the known landscapes of tests/fixtures/tune/landscape.h, without
 * running anything: a 16 x 16 grid of x and y times two variants (grid and
 * alt), searched as kbench tune searches it (an invalid candidate is told
 * INFINITY and costs no evaluation).  Each strategy's result is compared
 * with the exhaustive optimum, and the same seed gives the same walk.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "landscape.h"
#include "search.h"

#define SIDE 16
#define SPACE (SIDE * SIDE * 2)

typedef struct outcome {
    double best;
    uint64_t best_c;
    uint64_t evaluations, invalid;
    uint64_t walk[SPACE]; /* the candidates in the order they were asked */
    size_t n_walk;
} outcome;

static double cost(int shape, uint64_t c, int *valid)
{
    long x = (long)(c / (SIDE * 2)), y = (long)(c / 2 % SIDE);
    int v = (int)(c % 2);
    *valid = landscape_valid(shape, x, y);
    return landscape_cost(shape, x, y, v);
}

/* Runs one search with a budget of evaluations, as the tuner does. */
static outcome search(kbc_strategy st, int shape, uint64_t budget, uint64_t seed)
{
    static const uint32_t sizes[3] = {SIDE, SIDE, 2};
    static const unsigned char cat[3] = {0, 0, 1};
    outcome o;
    memset(&o, 0, sizeof o);
    kbc_search *s = kbc_search_new(st, sizes, cat, 3, seed, NULL, NULL);
    cr_assert_not_null(s);
    uint64_t batch[SPACE];
    while (o.evaluations < budget) {
        size_t n = kbc_search_ask(s, batch, (size_t)(budget - o.evaluations));
        if (!n)
            break;
        for (size_t i = 0; i < n; i++) {
            int valid;
            double c = cost(shape, batch[i], &valid);
            cr_assert_lt(o.n_walk, (size_t)SPACE, "a candidate was asked twice");
            o.walk[o.n_walk++] = batch[i];
            if (valid)
                o.evaluations++;
            else
                o.invalid++;
            kbc_search_tell(s, batch[i], valid ? c : INFINITY);
        }
    }
    o.best = kbc_search_best(s, &o.best_c);
    kbc_search_free(s);
    return o;
}

static double optimum(int shape)
{
    outcome o = search(KBC_TUNE_EXHAUSTIVE, shape, SPACE, 1);
    return o.best;
}

static const kbc_strategy searching[] = {KBC_TUNE_RANDOM, KBC_TUNE_LOCAL, KBC_TUNE_ANNEAL,
                                         KBC_TUNE_AUTO};

Test(search, exhaustive_tries_every_candidate_once_and_finds_each_optimum)
{
    outcome o = search(KBC_TUNE_EXHAUSTIVE, LS_BOWL, SPACE, 1);
    cr_assert_eq(o.evaluations, SPACE);
    cr_assert_eq(o.best, 1.0);
    cr_assert_eq(o.best_c, (11 * SIDE + 5) * 2 + LS_GRID);
    o = search(KBC_TUNE_EXHAUSTIVE, LS_PLATEAU, SPACE, 1);
    cr_assert_eq(o.best_c, (13 * SIDE + 2) * 2 + LS_GRID);
    o = search(KBC_TUNE_EXHAUSTIVE, LS_HALF, SPACE, 1);
    cr_assert_eq(o.evaluations, SPACE / 2);
    cr_assert_eq(o.invalid, SPACE / 2);
    cr_assert_eq(o.best, 1.0);
}

/* A quarter of the space (the default budget of every strategy but
   exhaustive): the local strategies and auto reach the exhaustive optimum
   of the smooth bowl and of the half-invalid bowl, for each seed. */
Test(search, local_anneal_and_auto_find_the_bowls_optimum_in_a_quarter)
{
    for (int shape = LS_BOWL; shape <= LS_HALF; shape += LS_HALF - LS_BOWL) {
        double opt = optimum(shape);
        for (int k = 1; k < 4; k++)
            for (uint64_t seed = 1; seed <= 5; seed++) {
                outcome o = search(searching[k], shape, SPACE / 4, seed);
                cr_assert_eq(o.best, opt, "%s on shape %d, seed %llu: %g, the optimum %g",
                             kbc_strategy_name(searching[k]), shape,
                             (unsigned long long)seed, o.best, opt);
            }
    }
}

/* Random search has no gradient to follow: in a quarter of the bowl it
   gets within 2x of the optimum (the landscape runs up to 20x). */
Test(search, random_gets_near_the_bowls_optimum_in_a_quarter)
{
    for (uint64_t seed = 1; seed <= 5; seed++) {
        outcome o = search(KBC_TUNE_RANDOM, LS_BOWL, SPACE / 4, seed);
        cr_assert_leq(o.best, 2.0 * optimum(LS_BOWL), "seed %llu: %g",
                      (unsigned long long)seed, o.best);
        cr_assert_eq(o.evaluations, SPACE / 4);
    }
}

/* A plateau with one narrow best cannot be climbed: given the whole space
   as budget, every strategy goes on until it finds it (none stops early,
   none skips a candidate). */
Test(search, every_strategy_finds_the_plateaus_needle_given_the_space)
{
    for (int k = 0; k < 4; k++) {
        outcome o = search(searching[k], LS_PLATEAU, SPACE, 7);
        cr_assert_eq(o.best, 1.0, "%s", kbc_strategy_name(searching[k]));
        cr_assert_eq(o.best_c, (13 * SIDE + 2) * 2 + LS_GRID);
    }
}

Test(search, the_same_seed_gives_the_same_walk)
{
    for (int k = 0; k < 4; k++) {
        outcome a = search(searching[k], LS_HALF, SPACE / 4, 3);
        outcome b = search(searching[k], LS_HALF, SPACE / 4, 3);
        outcome c = search(searching[k], LS_HALF, SPACE / 4, 4);
        cr_assert_eq(a.n_walk, b.n_walk);
        cr_assert_eq(memcmp(a.walk, b.walk, a.n_walk * sizeof *a.walk), 0, "%s",
                     kbc_strategy_name(searching[k]));
        cr_assert(a.n_walk != c.n_walk || memcmp(a.walk, c.walk, a.n_walk * sizeof *a.walk) != 0,
                  "%s walks the same with another seed", kbc_strategy_name(searching[k]));
    }
}

/* The constraint prunes: nothing it rules out is asked for, and the
   allowed count is what it leaves. */
static int x_at_least_8(void *ctx, uint64_t c)
{
    (void)ctx;
    return c / (SIDE * 2) >= 8;
}

Test(search, no_strategy_asks_for_what_the_constraint_rules_out)
{
    static const uint32_t sizes[3] = {SIDE, SIDE, 2};
    for (int k = 0; k < 5; k++) {
        kbc_strategy st = k < 4 ? searching[k] : KBC_TUNE_EXHAUSTIVE;
        kbc_search *s = kbc_search_new(st, sizes, NULL, 3, 1, x_at_least_8, NULL);
        cr_assert_eq(kbc_search_allowed(s), SPACE / 2);
        uint64_t batch[SPACE];
        size_t total = 0, n;
        while ((n = kbc_search_ask(s, batch, 16)) > 0) {
            for (size_t i = 0; i < n; i++) {
                cr_assert_geq(batch[i] / (SIDE * 2), 8, "%s asked x=%llu",
                              kbc_strategy_name(st),
                              (unsigned long long)(batch[i] / (SIDE * 2)));
                int valid;
                kbc_search_tell(s, batch[i], cost(LS_BOWL, batch[i], &valid));
            }
            total += n;
        }
        cr_assert_eq(total, SPACE / 2, "%s tried %zu of the %d allowed",
                     kbc_strategy_name(st), total, SPACE / 2);
        kbc_search_free(s);
    }
}

/* A space with a categorical axis whose values ignore the others, as
   kbench tune builds it for variants: x and y (0 .. 7) times six
   variants, of which 0 and 1 use x and y (a bowl, its best at x 5, y 6)
   and 2 .. 5 ignore them, so each is one candidate (at x 0, y 0). */
#define VSIDE 8
#define VARIANTS 6
#define VSPACE (VSIDE * VSIDE * VARIANTS)
#define VALLOWED (2 * VSIDE * VSIDE + VARIANTS - 2)

static uint32_t vcoord(uint64_t c, int d)
{
    return d == 0 ? (uint32_t)(c / (VSIDE * VARIANTS))
           : d == 1 ? (uint32_t)(c / VARIANTS % VSIDE)
                    : (uint32_t)(c % VARIANTS);
}

static int variant_space_ok(void *ctx, uint64_t c)
{
    (void)ctx;
    return vcoord(c, 2) < 2 || (vcoord(c, 0) == 0 && vcoord(c, 1) == 0);
}

/* The cost of a candidate: the bowl for variants 0 and 1 (1 worse), and
   singles[v - 2] for the others. */
static double variant_cost(uint64_t c, const double *singles)
{
    uint32_t v = vcoord(c, 2);
    if (v >= 2)
        return singles[v - 2];
    double dx = (double)vcoord(c, 0) - 5, dy = (double)vcoord(c, 1) - 6;
    return 2.0 + v + (dx * dx + dy * dy) / 8;
}

/* Runs auto over the variant space with a quarter of it as budget; the
   walk into walk (room VALLOWED) when not NULL.  Returns the best cost. */
static double variant_search(uint64_t seed, const double *singles, uint64_t *walk)
{
    static const uint32_t sizes[3] = {VSIDE, VSIDE, VARIANTS};
    static const unsigned char cat[3] = {0, 0, 1};
    kbc_search *s = kbc_search_new(KBC_TUNE_AUTO, sizes, cat, 3, seed, variant_space_ok, NULL);
    cr_assert_not_null(s);
    cr_assert_eq(kbc_search_allowed(s), VALLOWED);
    uint64_t batch[VSPACE], done = 0, budget = VALLOWED / 4;
    size_t n;
    while (done < budget && (n = kbc_search_ask(s, batch, (size_t)(budget - done))) > 0)
        for (size_t i = 0; i < n; i++) {
            cr_assert(variant_space_ok(NULL, batch[i]));
            if (walk)
                walk[done] = batch[i];
            done++;
            kbc_search_tell(s, batch[i], variant_cost(batch[i], singles));
        }
    uint64_t c;
    double best = kbc_search_best(s, &c);
    kbc_search_free(s);
    return best;
}

/* auto's screen: the first candidate has x and y at their middle and a
   variant that uses them (the most candidates); the next ones are every
   other variant once, at the nearest candidate it allows. */
Test(search, auto_first_screens_every_variant_once_from_the_middle)
{
    static const double singles[4] = {4, 5, 6, 7};
    for (uint64_t seed = 1; seed <= 10; seed++) {
        uint64_t walk[VALLOWED];
        variant_search(seed, singles, walk);
        cr_assert_eq(vcoord(walk[0], 0), 3, "seed %llu", (unsigned long long)seed);
        cr_assert_eq(vcoord(walk[0], 1), 3);
        cr_assert_lt(vcoord(walk[0], 2), 2);
        int seen[VARIANTS] = {0};
        for (int i = 0; i < VARIANTS; i++)
            seen[vcoord(walk[i], 2)]++;
        for (int v = 0; v < VARIANTS; v++)
            cr_assert_eq(seen[v], 1, "seed %llu: variant %d measured %d times in the screen",
                         (unsigned long long)seed, v, seen[v]);
        for (int i = 0; i < VARIANTS; i++)
            if (vcoord(walk[i], 2) < 2)
                cr_assert(vcoord(walk[i], 0) == 3 && vcoord(walk[i], 1) == 3,
                          "seed %llu: a variant that uses x and y screened away from the "
                          "middle", (unsigned long long)seed);
    }
}

/* The best is a variant that ignores x and y (one candidate of 132): the
   screen finds it, whatever the seed. */
Test(search, auto_finds_a_single_candidate_variant_that_is_best)
{
    static const double singles[4] = {4, 5, 1.5, 7};
    for (uint64_t seed = 1; seed <= 30; seed++)
        cr_assert_eq(variant_search(seed, singles, NULL), 1.5, "seed %llu",
                     (unsigned long long)seed);
}

/* The best is inside a variant with parameters, and a variant without
   them beats that one's middle: after the screen, the search goes on in
   the variant with parameters (not around the single candidate), to its
   optimum in a quarter for most seeds and one step from it for all. */
Test(search, auto_descends_the_best_variant_after_the_screen)
{
    static const double singles[4] = {2.5, 5, 6, 7};
    int at_optimum = 0;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        double best = variant_search(seed, singles, NULL);
        cr_assert_leq(best, 2.125, "seed %llu: %g", (unsigned long long)seed, best);
        at_optimum += best == 2.0;
    }
    cr_assert_geq(at_optimum, 25);
}

/* After the screen, the first draws keep to the focus (the variant with
   parameters that screened best: 0, the better bowl) and spread out: the
   first lands far from the screened middle, not next to it. */
Test(search, auto_draws_after_the_screen_spread_over_the_focus)
{
    static const double singles[4] = {2.5, 5, 6, 7};
    for (uint64_t seed = 1; seed <= 30; seed++) {
        uint64_t walk[VALLOWED];
        variant_search(seed, singles, walk);
        for (int i = VARIANTS; i < VARIANTS + 4; i++)
            cr_assert_eq(vcoord(walk[i], 2), 0, "seed %llu: draw %d left the focus",
                         (unsigned long long)seed, i - VARIANTS);
        uint32_t x = vcoord(walk[VARIANTS], 0), y = vcoord(walk[VARIANTS], 1);
        uint32_t gap = (x > 3 ? x - 3 : 3 - x) + (y > 3 ? y - 3 : 3 - y);
        cr_assert_geq(gap, 5, "seed %llu: the first draw (%u, %u) is %u steps from the middle",
                      (unsigned long long)seed, x, y, gap);
    }
}

Test(search, strategy_names)
{
    for (int i = 0; i < KBC_TUNE_N_STRATEGIES; i++)
        cr_assert_eq(kbc_strategy_parse(kbc_strategy_name(i)), i);
    cr_assert_eq(kbc_strategy_parse("annealing"), -1);
}
