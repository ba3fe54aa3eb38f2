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

Test(search, strategy_names)
{
    for (int i = 0; i < KBC_TUNE_N_STRATEGIES; i++)
        cr_assert_eq(kbc_strategy_parse(kbc_strategy_name(i)), i);
    cr_assert_eq(kbc_strategy_parse("annealing"), -1);
}
