/*
 * search.h -- the strategies of kbench tune, over an abstract space: k
 * dimensions of sizes[0..k) values each (a candidate is one index per
 * dimension, packed as a mixed-radix number, the first dimension the
 * slowest), some of them categorical (no order: every other value is a
 * neighbour) and the others ordinal (the values one step away are).  The
 * search asks for candidates, is told each one's cost (lower is better;
 * INFINITY for a candidate that is invalid, failed or crashed) and asks
 * again; it never asks for a candidate twice, nor for one that `ok` rules
 * out (the constraint).  Nothing here runs or measures anything, so the
 * same seed gives the same walk, which is what the CI tests check against
 * the exhaustive optimum of known landscapes.
 *
 * Strategies:
 *   exhaustive  every allowed candidate, in order
 *   random      allowed candidates in a seeded random order
 *   local       hill climbing: from a random start, every untried
 *               neighbour of the current candidate, then the best of them
 *               if it is better; a random restart at a local optimum
 *   anneal      simulated annealing: a few random neighbours per step, the
 *               best taken when better or with probability
 *               exp(-relative worsening / temperature), the temperature
 *               falling each step; a restart when it is cold
 *   auto        a screen, then a bandit: first each categorical
 *               dimension is swept once (every value, from the middle of
 *               the ordinal ones and the value with the most allowed
 *               candidates; a value not allowed there at its nearest
 *               allowed candidate), then UCB1 over random, local and
 *               anneal: each round one of them proposes, and one that
 *               improves the best so far (or the best of the focus, the
 *               best screened candidate whose categorical values leave
 *               something to vary, where random draws and the arms'
 *               starts stay) is given more rounds
 */
#ifndef KBENCH_SEARCH_H
#define KBENCH_SEARCH_H

#include <stddef.h>
#include <stdint.h>

typedef enum kbc_strategy {
    KBC_TUNE_EXHAUSTIVE,
    KBC_TUNE_RANDOM,
    KBC_TUNE_LOCAL,
    KBC_TUNE_ANNEAL,
    KBC_TUNE_AUTO
} kbc_strategy;
#define KBC_TUNE_N_STRATEGIES 5

/* "exhaustive" ... "auto", and back (-1 when unknown). */
const char *kbc_strategy_name(int s);
int kbc_strategy_parse(const char *name);

typedef struct kbc_search kbc_search;

/* Whether candidate c is allowed (the constraint); NULL allows all. */
typedef int (*kbc_search_ok)(void *ctx, uint64_t c);

/* A search over the space; sizes and categorical (NULL: none) have k
   entries, their product at most 2^40.  Returns NULL for an empty space. */
kbc_search *kbc_search_new(kbc_strategy strategy, const uint32_t *sizes,
                           const unsigned char *categorical, size_t k, uint64_t seed,
                           kbc_search_ok ok, void *ctx);
void kbc_search_free(kbc_search *s);

/* Up to room candidates to try next (every one told before the next ask);
   0 when the strategy has nothing left to try. */
size_t kbc_search_ask(kbc_search *s, uint64_t *out, size_t room);

/* The cost of a candidate this search asked for. */
void kbc_search_tell(kbc_search *s, uint64_t c, double cost);

/* The arm (a strategy) that proposed the last batch: the strategy itself,
   or under auto the one the bandit chose (auto during the screen). */
kbc_strategy kbc_search_arm(const kbc_search *s);

/* The best candidate told so far and its cost (INFINITY, *c 0: none). */
double kbc_search_best(const kbc_search *s, uint64_t *c);

/* The size of the space, and how many allowed candidates it holds
   (counted once, at the first call). */
uint64_t kbc_search_size(const kbc_search *s);
uint64_t kbc_search_allowed(kbc_search *s);

/* Packing: index of dimension d in candidate c. */
uint32_t kbc_search_coord(const kbc_search *s, uint64_t c, size_t d);

#endif
