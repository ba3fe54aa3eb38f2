/*
 * test_tune_expr.c -- the constraint expressions of kbench tune
 * (core/src/tune/expr.h): what they compute, and one sentence naming the
 * offending token and its column for each mistake.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

enum { P_BX, P_BY, P_TILE, P_N, P_RATIO, NP };
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

/* block_x, block_y, tile (index), n, ratio, variant (index), then the
   facts cpu_threads, sm_count, cc, l2_bytes, device_mem. */
static int holds(const char *text, int64_t bx, int64_t by, int64_t tile, int64_t variant)
{
    char why[600];
    kbc_expr *e = kbc_expr_parse(text, &names, why, sizeof why);
    cr_assert_not_null(e, "%s: %s", text, why);
    int64_t ival[NP + 1 + KBC_EXPR_N_FACTS] = {bx, by, tile, 4096, 0, variant,
                                              16, 132, 90, 50 << 20, 80LL << 30};
    kbc_expr_env env = {ival};
    int r = kbc_expr_holds(e, &env);
    kbc_expr_free(e);
    return r;
}

Test(expr, arithmetic_and_comparisons)
{
    cr_assert_eq(holds("block_x * block_y <= 1024", 32, 32, 0, 0), 1);
    cr_assert_eq(holds("block_x * block_y <= 1024", 64, 32, 0, 0), 0);
    cr_assert_eq(holds("(block_x + block_y) % 3 == 1", 2, 2, 0, 0), 1);
    cr_assert_eq(holds("block_x - block_y * 2 == -2", 2, 2, 0, 0), 1);
    cr_assert_eq(holds("block_x / block_y == 2", 9, 4, 0, 0), 1);
    cr_assert_eq(holds("n == 4K", 0, 0, 0, 0), 1);
    cr_assert_eq(holds("!(block_x > 4) && block_y >= 2 || block_x == 99", 4, 2, 0, 0), 1);
    cr_assert_eq(holds("!(block_x > 4) && block_y >= 2 || block_x == 99", 5, 2, 0, 0), 0);
    cr_assert_eq(holds("block_x != 1 == 1", 2, 0, 0, 0), 1);
}

Test(expr, facts_of_the_machine)
{
    cr_assert_eq(holds("block_x * block_y <= sm_count * 8 && cc >= 90", 33, 32, 0, 0), 1);
    cr_assert_eq(holds("cpu_threads == 16 && l2_bytes == 50M && device_mem == 80G", 0, 0, 0, 0),
                 1);
}

Test(expr, text_compares_with_its_choices)
{
    cr_assert_eq(holds("tile != 128x256x8 || block_x <= 3", 4, 0, 1, 0), 0);
    cr_assert_eq(holds("tile != 128x256x8 || block_x <= 3", 4, 0, 0, 0), 1);
    cr_assert_eq(holds("128x128x16 == tile", 0, 0, 0, 0), 1);
    cr_assert_eq(holds("variant == \"cub-radix\"", 0, 0, 0, 2), 1);
    cr_assert_eq(holds("variant != tiled", 0, 0, 0, 1), 0);
    cr_assert_eq(holds("variant == variant", 0, 0, 0, 1), 1);
}

Test(expr, a_division_by_zero_makes_it_false)
{
    cr_assert_eq(holds("block_x / block_y >= 0", 4, 0, 0, 0), 0);
    cr_assert_eq(holds("block_x % block_y == 0 || 1", 4, 0, 0, 0), 0);
    /* && and || stop early: the division is never made. */
    cr_assert_eq(holds("block_y == 0 || block_x / block_y > 1", 4, 0, 0, 0), 1);
}

typedef struct mistake {
    char text[64];
    char sentence[240];
} mistake;

ParameterizedTestParameters(expr, mistakes)
{
    static mistake cases[] = {
        {"blok_x * 2 <= 64",
         "unknown name 'blok_x' (names are the parameters block_x, block_y, tile, n, ratio, "
         "variant, and the facts cpu_threads, sm_count, cc, l2_bytes, device_mem); did you "
         "mean 'block_x'? at column 1"},
        {"block_x * * 2", "'*' is not expected here (a value, a name or '(' is) at column 11"},
        {"(block_x <= 4", "'(' at column 1 is not closed at column 14"},
        {"block_x <= 4)", "')' is not expected here (an operator or the end is) at column 13"},
        {"block_x = 4", "'=' is not an operator here (compare with ==) at column 9"},
        {"tile != 128x256x9",
         "'128x256x9' is not a value of parameter tile (it has: 128x128x16, 128x256x8, "
         "64x64x32); did you mean '128x256x8'? at column 9"},
        {"tile < 128x256x8",
         "'<' cannot apply to tile, which is text (compare it with == or !=) at column 6"},
        {"variant == cub", "'cub' is not a value of variant (it has: naive, tiled, cub-radix)"},
        {"tile == 5", "'==' compares tile with a number, which is not the same kind of value at "
                      "column 6"},
        {"ratio > 1", "'ratio' is a floating-point parameter, which a constraint cannot use"},
        {"block_x <= 12x", "'12x' is neither an integer nor compared with a parameter that "
                           "takes it as a value at column 12"},
        {"variant == \"naive", "the quote \" is not closed at column 12"},
        {"   ", "the expression is empty"},
        {"block_x <=", "the expression ends where a value is expected at column 11"},
        {"-tile == 1", "'-' cannot apply to tile, which is text at column 1"},
    };
    return cr_make_param_array(mistake, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(mistake *m, expr, mistakes)
{
    char why[600] = "";
    kbc_expr *e = kbc_expr_parse(m->text, &names, why, sizeof why);
    cr_assert_null(e, "'%s' was accepted", m->text);
    cr_assert(strstr(why, m->sentence) != NULL, "'%s': expected \"%s\" in \"%s\"", m->text,
              m->sentence, why);
}

/* ---- bounds: the parser, the type check and the evaluator recurse per
   level, so a constraint too deep or too long is one sentence, not a
   crash (both were SIGSEGV). ---- */

static char *repeat3(const char *head, size_t n, const char *mid, const char *tail)
{
    size_t hl = strlen(head), tl = strlen(tail);
    char *s = malloc(hl * n + strlen(mid) + tl * n + 1);
    cr_assert_not_null(s);
    char *p = s;
    for (size_t i = 0; i < n; i++, p += hl)
        memcpy(p, head, hl);
    strcpy(p, mid);
    p += strlen(mid);
    for (size_t i = 0; i < n; i++, p += tl)
        memcpy(p, tail, tl);
    *p = '\0';
    return s;
}

static void refused_text(const char *text, const char *sentence)
{
    char why[600] = "";
    kbc_expr *e = kbc_expr_parse(text, &names, why, sizeof why);
    cr_assert_null(e, "accepted");
    cr_assert(strstr(why, sentence) != NULL, "expected \"%s\" in \"%s\"", sentence, why);
}

Test(expr, deep_parentheses_are_refused_at_the_level_too_many)
{
    char *t = repeat3("(", 2000, "block_x", ")");
    refused_text(t, "the expression nests more than 64 levels deep (parentheses and the unary "
                    "operators ! and -) at column 65");
    free(t);
}

/* 100,000 levels: refused by the length before any level is parsed. */
Test(expr, a_hundred_thousand_nested_parentheses_are_one_sentence)
{
    char *t = repeat3("(", 100000, "block_x", ")");
    refused_text(t, "the expression is 200007 characters long, more than the 4096 a constraint "
                    "may have");
    free(t);
}

Test(expr, a_long_chain_of_unary_operators_is_refused)
{
    char *t = repeat3("!-", 1000, "block_x", "");
    refused_text(t, "nests more than 64 levels deep");
    free(t);
}

Test(expr, nesting_up_to_the_limit_parses)
{
    char *t = repeat3("(", 64, "block_x > 1", ")");
    cr_assert_eq(holds(t, 2, 0, 0, 0), 1);
    free(t);
}

Test(expr, a_constraint_over_the_length_limit_is_refused)
{
    char *t = repeat3("block_x+", 100000, "1 > 0", "");
    refused_text(t, "the expression is 800005 characters long, more than the 4096 a constraint "
                    "may have at column 4097");
    free(t);
}

Test(expr, a_flat_sum_up_to_the_length_limit_evaluates)
{
    /* 2041 terms: the tree is that deep, and every pass over it copes. */
    char *t = repeat3("1+", 2040, "1 == 2041", "");
    cr_assert_leq(strlen(t), KBC_EXPR_MAX_LEN);
    cr_assert_eq(holds(t, 0, 0, 0, 0), 1);
    free(t);
}

/* ---- 64-bit overflow is an error, not a wrap ---- */

static int eval_at(const char *text, int64_t bx, char *why, size_t n)
{
    char err[600];
    kbc_expr *e = kbc_expr_parse(text, &names, err, sizeof err);
    cr_assert_not_null(e, "%s: %s", text, err);
    int64_t ival[NP + 1 + KBC_EXPR_N_FACTS] = {bx, 0, 0, 4096, 0, 0, 16, 132, 90, 0, 0};
    kbc_expr_env env = {ival};
    int r = kbc_expr_eval(e, &env, why, n);
    kbc_expr_free(e);
    return r;
}

Test(expr, an_overflowing_sum_is_an_error_naming_its_operands_and_column)
{
    char why[300] = "";
    cr_assert_eq(eval_at("block_x + 9223372036854775807 > 0", 4, why, sizeof why), -1);
    cr_assert_str_eq(why, "'+' of 4 and 9223372036854775807 does not fit a 64-bit integer at "
                          "column 9");
}

Test(expr, every_operator_that_can_overflow_says_so)
{
    char why[300];
    cr_assert_eq(eval_at("block_x * 4G * 4G > 0", 1 << 20, why, sizeof why), -1);
    cr_assert_eq(eval_at("-block_x - 9223372036854775807 < 0", 2, why, sizeof why), -1);
    cr_assert_eq(eval_at("-(block_x - 9223372036854775807 - 1) > 0", 0, why, sizeof why), -1);
    cr_assert_str_eq(why, "'-' of -9223372036854775808 does not fit a 64-bit integer at column "
                          "1");
    cr_assert_eq(eval_at("(block_x - 9223372036854775807 - 1) / -1 > 0", 0, why, sizeof why),
                 -1);
    /* The remainder of the same division is 0, which fits. */
    cr_assert_eq(eval_at("(block_x - 9223372036854775807 - 1) % -1 == 0", 0, why, sizeof why),
                 1);
    /* Near the edge, without crossing it. */
    cr_assert_eq(eval_at("block_x + 9223372036854775806 > 0", 1, why, sizeof why), 1);
}

Test(expr, a_short_circuit_skips_the_overflow)
{
    char why[300];
    cr_assert_eq(eval_at("block_x == 1 || block_x * 9223372036854775807 > 0", 1, why,
                         sizeof why),
                 1);
}

/* ---- what tune asks of a constraint ---- */

Test(expr, the_terms_are_the_operands_of_the_top_level_and)
{
    char why[600];
    kbc_expr *e = kbc_expr_parse("block_x > 2 &&  (block_y < 3 || tile == 64x64x32) && n == 4K",
                                 &names, why, sizeof why);
    cr_assert_not_null(e, "%s", why);
    cr_assert_eq(kbc_expr_n_terms(e), 3);
    char t[100];
    cr_assert_str_eq(kbc_expr_term_text(e, 1, t, sizeof t), "(block_y < 3 || tile == 64x64x32)");
    cr_assert_eq(kbc_expr_term_col(e, 1), 17);
    cr_assert_str_eq(kbc_expr_term_text(e, 2, t, sizeof t), "n == 4K");
    int64_t ival[NP + 1 + KBC_EXPR_N_FACTS] = {1, 2, 0, 4096, 0, 0, 16, 132, 90, 0, 0};
    kbc_expr_env env = {ival};
    cr_assert_eq(kbc_expr_term_eval(e, 0, &env), 0);
    cr_assert_eq(kbc_expr_term_eval(e, 1, &env), 1);
    kbc_expr_free(e);
}

Test(expr, the_slots_it_names)
{
    char why[600];
    kbc_expr *e = kbc_expr_parse("block_y * 2 < sm_count || variant == naive", &names, why,
                                 sizeof why);
    cr_assert_not_null(e, "%s", why);
    unsigned char used[NP + 1 + KBC_EXPR_N_FACTS];
    kbc_expr_slots(e, used, sizeof used);
    unsigned char want[NP + 1 + KBC_EXPR_N_FACTS] = {0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0};
    cr_assert_arr_eq(used, want, sizeof want);
    kbc_expr_free(e);
}
