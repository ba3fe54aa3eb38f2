/*
 * fuzz_ini.c -- libFuzzer harness for the INI reader and the value and
 * sweep parsers.  The input is read as an INI file; every value that loads
 * is then parsed as one value and as a sweep of each parameter type, with
 * limits near the top of 64 bits, where rounding and overflow live.
 * Built only with -DKBENCH_FUZZ=ON (tests/fuzz/fuzz.cmake).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"
#include "sweep.h"
#include "value.h"

static const char *const choices[] = {"f32", "f64", "i32", NULL};
static const kb_param params[] = {
    {.name = "n", .type = KB_PARAM_SIZE, .def = "1K", .min = 1, .max = 4611686018427387904.0},
    {.name = "any", .type = KB_PARAM_SIZE, .def = "1", .min = 1, .max = 0},
    {.name = "block", .type = KB_PARAM_INT, .def = "32", .min = 32, .max = 1024},
    {.name = "offset", .type = KB_PARAM_INT, .def = "0", .min = -9223372036854775808.0,
     .max = 9223372036854775807.0},
    {.name = "scale", .type = KB_PARAM_FLOAT, .def = "1", .min = -1e300, .max = 1e300},
    {.name = "dtype", .type = KB_PARAM_ENUM, .def = "f32", .choices = choices},
    {.name = "check", .type = KB_PARAM_BOOL, .def = "true"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The string loader stops at a NUL, as a C string does. */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    kbc_ini ini;
    kbc_diag d;
    if (kbc_ini_load_string("fuzz.ini", text, &ini, &d) == 0) {
        for (size_t i = 0; i < ini.n; i++) {
            const kbc_section *s = &ini.sections[i];
            /* Every name must be found again through the indexes. */
            if (kbc_ini_section(&ini, s->name) != s)
                abort();
            for (size_t j = 0; j < s->n; j++) {
                const kbc_entry *e = &s->entries[j];
                if (kbc_section_get(s, e->key) != e)
                    abort();
                for (size_t k = 0; k < sizeof params / sizeof *params; k++) {
                    char why[256];
                    kb_value v, *vs = NULL;
                    size_t n = 0;
                    kbc_value_parse(&params[k], e->value, &v, why, sizeof why);
                    if (kbc_sweep_parse(&params[k], e->value, 1000, &vs, &n, why,
                                        sizeof why) == 0 && n > 1000)
                        abort();
                    free(vs);
                }
            }
        }
        kbc_ini_free(&ini);
    }
    free(text);
    return 0;
}
