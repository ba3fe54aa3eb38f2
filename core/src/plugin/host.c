/* host.c -- see host.h. */
#define _GNU_SOURCE
#include "host.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text.h"

/* Set once from the command line before a run; read only after. */
static int quiet_mode;

void kbc_host_set_quiet(int quiet)
{
    quiet_mode = quiet;
}

int kbc_host_is_quiet(void)
{
    return quiet_mode;
}

static int show_progress(void)
{
    return !quiet_mode && isatty(2);
}

void kbc_host_progress_clear(kbc_hostctx *hc)
{
    if (hc->progress_shown) {
        fputs("\r\033[K", stderr);
        hc->progress_shown = 0;
    }
}

void kbc_host_progress(kbc_hostctx *hc, const char *experiment, const char *variant)
{
    if (hc->on_variant)
        hc->on_variant(hc->on_variant_arg, experiment, variant);
    if (!show_progress())
        return;
    fprintf(stderr, "\r\033[K[%llu/%llu points] %s: %s ...", (unsigned long long)hc->done + 1,
            (unsigned long long)hc->total, experiment, variant);
    fflush(stderr);
    hc->progress_shown = 1;
}

static void host_log(kb_host *h, kb_log_level level, const char *fmt, ...)
{
    kbc_hostctx *hc = h->host_private;
    /* Debug lines are for whoever writes the plugin, asked for by name;
       -q keeps only warnings. */
    if (level == KB_LOG_DEBUG && !getenv("KBENCH_DEBUG"))
        return;
    if (quiet_mode && level != KB_LOG_WARN)
        return;
    kbc_host_progress_clear(hc);
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    /* Plugins often begin their lines with their own name, which the
       prefix below already gives: "kbench: matmul: cpu ...", not
       "kbench: matmul: matmul: cpu ...". */
    const char *name = hc->plugin ? hc->plugin : "plugin";
    const char *text = line;
    size_t nn = strlen(name);
    if (strncmp(text, name, nn) == 0 && text[nn] == ':' && text[nn + 1] == ' ')
        text += nn + 2;
    /* A plugin's line reaches a terminal: no escape sequence or control
       character of it acts there (kbc_text_visible). */
    fprintf(stderr, "kbench: %s: %s%s\n", kbc_text_visible(name),
            level == KB_LOG_WARN ? "warning: " : "", kbc_text_visible(text));
    if (hc->on_log)
        hc->on_log(hc->on_variant_arg, text);
}

int kbc_host_fail(kb_host *h, int code, const char *fmt, ...)
{
    kbc_hostctx *hc = h->host_private;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(hc->fail_msg, sizeof hc->fail_msg, fmt, ap);
    va_end(ap);
    hc->said = 1;
    return code;
}

void kbc_refusals_clear(kbc_refusals *r)
{
    r->mask = 0;
    r->beyond = 0;
    r->used = 0;
    r->text[0] = '\0';
    for (uint32_t v = 0; v < KB_MAX_VARIANTS; v++)
        r->at[v] = KBC_REFUSAL_NONE;
}

void kbc_refusals_add(kbc_refusals *r, uint32_t v, const char *sentence)
{
    if (v >= KB_MAX_VARIANTS) {
        if (!r->beyond)
            r->beyond = v == UINT32_MAX ? v : v + 1;
        return;
    }
    if (r->mask & KB_VARIANT_BIT(v))
        return; /* the first sentence is kept */
    r->mask |= KB_VARIANT_BIT(v);
    size_t len = strlen(sentence);
    if (len + 1 > sizeof r->text - r->used) {
        r->at[v] = KBC_REFUSAL_FULL;
        return;
    }
    memcpy(r->text + r->used, sentence, len + 1);
    r->at[v] = r->used;
    r->used = (uint16_t)(r->used + len + 1);
}

const char *kbc_refusals_sentence(const kbc_refusals *r, uint32_t v)
{
    if (v >= KB_MAX_VARIANTS || !(r->mask & KB_VARIANT_BIT(v)))
        return NULL;
    if (r->at[v] == KBC_REFUSAL_FULL)
        return "plan() refused this variant here (its sentence did not fit beside the "
               "point's other refusals)";
    return r->at[v] == KBC_REFUSAL_NONE ? "" : r->text + r->at[v];
}

/* The core's refuse(): plan() says this point is not for variant v. */
static void host_refuse(kb_host *h, uint32_t v, const char *fmt, ...)
{
    kbc_hostctx *hc = h->host_private;
    if (!hc || !hc->refusals)
        return;
    char sentence[600] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(sentence, sizeof sentence, fmt, ap);
        va_end(ap);
    }
    kbc_refusals_add(hc->refusals, v, sentence);
}

void kbc_host_clear(kbc_hostctx *hc)
{
    hc->fail_msg[0] = '\0';
    hc->said = 0;
}

void kbc_host_init(kb_host *h, kbc_hostctx *hc, const char *plugin, uint64_t seed,
                   int cpu_threads)
{
    memset(h, 0, sizeof *h);
    h->size = sizeof *h;
    h->abi_minor = KB_ABI_MINOR;
    h->seed = seed;
    h->stream = NULL;
    h->device = -1;
    h->cpu_threads = cpu_threads > 0 ? cpu_threads : 1;
    h->log = host_log;
    h->fail = kbc_host_fail;
    h->refuse = host_refuse;
    h->host_private = hc;
    hc->plugin = plugin;
    hc->refusals = NULL;
    kbc_host_clear(hc);
}

const char *kbc_status_name(int code)
{
    switch (code) {
    case KB_EINVAL: return "KB_EINVAL";
    case KB_ENOMEM: return "KB_ENOMEM";
    case KB_ECUDA: return "KB_ECUDA";
    case KB_EUNSUPPORTED: return "KB_EUNSUPPORTED";
    case KB_EFAIL: return "KB_EFAIL";
    default: return "an unknown code";
    }
}
