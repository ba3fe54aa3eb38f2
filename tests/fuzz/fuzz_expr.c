/*
 * fuzz_expr.c -- libFuzzer harness for the constraint expressions of
 * kbench tune (core/src/tune/expr.c): the input is a `constrain =` value,
 * parsed against a plugin's names (integer, size, enum and float
 * parameters, variants whose names hold '-'); what parses is evaluated at
 * candidates whose values are the edges of 64-bit integers, its terms and
 * the slots it names are read.  A refusal must be one sentence naming a
 * column; an evaluation must be 1, 0, or -1 with a sentence, never
 * undefined behaviour (an overflow is an error, not a wrap).
 * Built only with -DKBENCH_FUZZ=ON (tests/fuzz/fuzz.cmake).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { P_BX, P_BY, P_TILE, P_N, P_RATIO, NP, N_SLOTS = NP + 1 + KBC_EXPR_N_FACTS };
static const char *const tiles[] = {"128x128x16", "128x256x8", "64x64x32"};
static const kb_param params[NP] = {
    {.name = "block_x", .type = KB_PARAM_INT},
    {.name = "block_y", .type = KB_PARAM_INT},
    {.name = "tile", .type = KB_PARAM_ENUM, KB_CHOICES(tiles)},
    {.name = "n", .type = KB_PARAM_SIZE},
    {.name = "ratio", .type = KB_PARAM_FLOAT},
};
static const char *const variants[] = {"naive", "tiled", "cub-radix"};
static const kbc_expr_names names = {params, NP, variants, 3};

/* Values a candidate may hold: the edges of int64 and of the enums. */
static const int64_t edges[] = {0, 1, -1, 2, 3, INT64_MAX, INT64_MIN, INT64_MAX - 1,
                                INT64_MIN + 1, 1 << 30, -(1LL << 31)};
#define N_EDGES (sizeof edges / sizeof *edges)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    char why[700];
    why[0] = '\0';
    kbc_expr *e = kbc_expr_parse(text, &names, why, sizeof why);
    if (!e) {
        if (why[0] == '\0')
            abort(); /* refused without a sentence */
        free(text);
        return 0;
    }
    unsigned char used[N_SLOTS];
    kbc_expr_slots(e, used, N_SLOTS);
    size_t n_terms = kbc_expr_n_terms(e);
    if (n_terms == 0)
        abort();
    for (size_t t = 0; t < n_terms; t++) {
        char term[200];
        kbc_expr_term_text(e, t, term, sizeof term);
        if (kbc_expr_term_col(e, t) < 1 || (size_t)kbc_expr_term_col(e, t) > size)
            abort();
    }
    /* Candidates: each integer slot at an edge chosen by k, the enums and
       the variant at each of their indices. */
    for (size_t k = 0; k < 4 * N_EDGES; k++) {
        int64_t ival[N_SLOTS];
        for (int s = 0; s < N_SLOTS; s++)
            ival[s] = edges[(k + (size_t)s * 3) % N_EDGES];
        ival[P_TILE] = (int64_t)(k % 3);
        ival[NP] = (int64_t)(k % 3);
        kbc_expr_env env = {ival};
        why[0] = '\0';
        int r = kbc_expr_eval(e, &env, why, sizeof why);
        if (r < -1 || r > 1 || (r == -1 && strstr(why, "at column") == NULL))
            abort();
        if (kbc_expr_holds(e, &env) != (r == 1))
            abort();
        for (size_t t = 0; t < n_terms; t++) {
            int v = kbc_expr_term_eval(e, t, &env);
            if (v != 0 && v != 1)
                abort();
        }
    }
    kbc_expr_free(e);
    free(text);
    return 0;
}
