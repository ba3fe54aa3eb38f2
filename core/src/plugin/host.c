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
    h->host_private = hc;
    hc->plugin = plugin;
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
