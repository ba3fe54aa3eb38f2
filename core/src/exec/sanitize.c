/*
 * sanitize.c -- kbench and compute-sanitizer:
 *   --sanitize-on-crash  a crashed CUDA variant runs once more, alone, in a
 *                        throw-away worker under compute-sanitizer
 *                        memcheck, and the first report memcheck prints
 *                        goes into its row;
 *   --sanitize TOOL      every worker runs under compute-sanitizer TOOL,
 *                        one variant of one point each, so that what the
 *                        sanitizer prints belongs to one row: the tool is
 *                        found here, the words before the worker's argv
 *                        made here, and the verdict read from its output
 *                        and put into the row here (workers.c starts the
 *                        workers and reaps them, messages.c holds a
 *                        point's answer until the verdict is known).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "request.h"
#include "supervisor_internal.h"
#include "util.h"

/* The throw-away worker: its pid, the write end of its stdin already
   closed, its channel and its stderr. */
typedef struct rerun {
    pid_t pid;
    int from, err;
} rerun;

/* Starts variant v of the slot's point under memcheck on the GPU of the
   worker that crashed and sends it the point and quit.  Returns 0, or -1
   with out set to why it was not rerun. */
static int rerun_start(super *s, const slot *sl, uint32_t v, int gpu, rerun *r, char *out,
                       size_t n)
{
    int to[2], from[2], err[2];
    if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0 ||
        pipe2(err, O_CLOEXEC) != 0) {
        snprintf(out, n, "not rerun: cannot make pipes (%s)", strerror(errno));
        return -1;
    }
    const kbc_super_opts *o = s->o;
    static const char *const lead[] = {"compute-sanitizer", "--tool", "memcheck",
                                       "--print-limit", "1"};
    /* The crashed worker may still hold its GPU's lock: this rerun is
       meant to share it. */
    kbc_request q = o->request;
    q.quiet = 1;
    q.allow_shared = 1;
    char **argv = kbc_request_argv(&q, lead, sizeof lead / sizeof *lead);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* compute-sanitizer prints its reports on its standard output:
           that goes to the pipe read here, not to kbench's table. */
        sv_child_setup(o, to, from, err, gpu, 1);
        execvp("compute-sanitizer", argv);
        dprintf(2, "compute-sanitizer could not be started (%s)\n", strerror(errno));
        _exit(127);
    }
    free(argv);
    close(to[0]);
    close(from[1]);
    close(err[1]);
    if (pid < 0) {
        snprintf(out, n, "not rerun: cannot fork (%s)", strerror(errno));
        close(to[1]);
        close(from[0]);
        close(err[0]);
        return -1;
    }
    kbc_order quit = {.quit = 1};
    char *point = sv_point_order(s, sl, KB_VARIANT_BIT(v)), *end = kbc_order_line(&quit);
    char *orders = kbc_xasprintf("%s%s", point, end);
    if (write(to[1], orders, strlen(orders)) != (ssize_t)strlen(orders)) {
        /* it died at once; what it printed says why */
    }
    free(point);
    free(end);
    free(orders);
    close(to[1]);
    *r = (rerun){.pid = pid, .from = from[0], .err = err[0]};
    return 0;
}

/* Reads both pipes to their end (the channel only to keep the worker from
   blocking on it) until deadline, into eb (its stderr and stdout), then
   stops the worker. */
static void rerun_read(rerun *r, double deadline, buf *eb)
{
    int open_from = 1, open_err = 1;
    while ((open_from || open_err) && kbc_now() < deadline) {
        struct pollfd pf[2] = {{.fd = open_from ? r->from : -1, .events = POLLIN},
                               {.fd = open_err ? r->err : -1, .events = POLLIN}};
        if (poll(pf, 2, 250) < 0 && errno != EINTR)
            break;
        char chunk[4096];
        ssize_t got;
        if (open_from && (pf[0].revents & (POLLIN | POLLHUP)) &&
            (got = read(r->from, chunk, sizeof chunk)) <= 0)
            open_from = 0;
        if (open_err && (pf[1].revents & (POLLIN | POLLHUP))) {
            if ((got = read(r->err, chunk, sizeof chunk)) > 0)
                sv_buf_add(eb, chunk, (size_t)got);
            else
                open_err = 0;
        }
    }
    kill(r->pid, SIGKILL);
    kill(-r->pid, SIGKILL);
    waitpid(r->pid, NULL, 0);
    close(r->from);
    close(r->err);
}

/* memcheck's report in text (which this cuts up): the lines that begin
   "========= " from the first error line (after its banner) to the host
   backtrace or the blank line that ends the report, joined by " / " into
   out; or, when there is none, what it printed. */
static void memcheck_report(char *text, char *out, size_t n)
{
    out[0] = '\0';
    size_t used = 0;
    int in_report = 0;
    for (char *p = text, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        int tagged = strncmp(p, "========= ", 10) == 0;
        const char *body = tagged ? p + 10 : p;
        while (*body == ' ')
            body++;
        if (tagged && !in_report && *body && !strstr(body, "SUMMARY") &&
            !strstr(body, "COMPUTE-SANITIZER"))
            in_report = 1;
        else if (in_report && (!tagged || !*body || strstr(body, "host backtrace")))
            break;
        if (in_report && used < n)
            used += (size_t)snprintf(out + used, n - used, "%s%s", used ? " / " : "", body);
        if (!nl)
            break;
    }
    if (!out[0]) {
        const char *last = text ? text : "";
        snprintf(out, n, "memcheck reported nothing for this variant%s%.300s",
                 *last ? "; it printed: " : "", last);
        for (char *c = out; *c; c++)
            if (*c == '\n')
                *c = ' ';
    }
}

/* Reruns variant v of the slot's point once in a throw-away worker under
   compute-sanitizer memcheck, on the GPU of the worker that crashed, and
   keeps memcheck's first report (its lines joined by " / ") in out.
   Blocks; the time it takes is added to the other workers' watchdogs. */
void sv_sanitize_rerun(super *s, const slot *sl, uint32_t v, int gpu, char *out, size_t n)
{
    double t0 = kbc_now();
    rerun r;
    if (rerun_start(s, sl, v, gpu, &r, out, n) != 0)
        return;
    /* Under the point's watchdog, ten times over: memcheck slows kernels
       down. */
    buf eb = {0};
    rerun_read(&r, t0 + SV_SANITIZER_SLOWDOWN * kbc_job_timeout(s->plan, &sl->job), &eb);
    memcheck_report(eb.p, out, n);
    free(eb.p);
    double spent = kbc_now() - t0;
    for (size_t i = 0; i < s->n_w; i++)
        if (s->w[i].deadline > 0)
            s->w[i].deadline += spent;
}

/* ---- --sanitize ---- */

static const char *const tools[] = {"memcheck", "racecheck", "synccheck", "initcheck"};

int kbc_sanitize_tool_ok(const char *tool)
{
    for (size_t i = 0; tool && i < sizeof tools / sizeof *tools; i++)
        if (strcmp(tool, tools[i]) == 0)
            return 1;
    return 0;
}

/* Whether dir/compute-sanitizer is a file this process may run; its path
   into out. */
static int runnable_in(const char *dir, char *out, size_t n)
{
    struct stat st;
    snprintf(out, n, "%s/compute-sanitizer", *dir ? dir : ".");
    return stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0;
}

int kbc_sanitizer_find(char *path, size_t n, char *why, size_t whyn)
{
    const char *env = getenv("PATH");
    char *dirs = kbc_xstrdup(env ? env : "");
    int found = 0;
    /* Every entry, empty ones included (an empty entry is the current
       folder, as the shell reads it). */
    for (char *d = dirs, *next; d && !found; d = next) {
        next = strchr(d, ':');
        if (next)
            *next++ = '\0';
        found = runnable_in(d, path, n);
    }
    free(dirs);
#ifdef KBENCH_CUDA_BIN_DIR
    /* The toolkit kbench was built with keeps it beside nvcc. */
    if (!found)
        found = runnable_in(KBENCH_CUDA_BIN_DIR, path, n);
    const char *toolkit = KBENCH_CUDA_BIN_DIR;
#else
    const char *toolkit = "(unknown)";
#endif
    if (found)
        return 0;
    snprintf(why, whyn,
             "--sanitize needs compute-sanitizer, which comes with the CUDA toolkit, and it is "
             "neither on PATH nor in %s (the bin folder of the toolkit kbench was built "
             "with): install the toolkit's compute-sanitizer or put the folder that holds it "
             "on PATH",
             toolkit);
    path[0] = '\0';
    return -1;
}

#define WORDS_(x) #x
#define WORDS(x) WORDS_(x)

size_t sv_sanitizer_lead(const kbc_super_opts *o, const char **lead)
{
    static const char exit_code[] = WORDS(KBC_SANITIZER_ERROR_EXIT);
    size_t k = 0;
    lead[k++] = o->sanitizer;
    lead[k++] = "--tool";
    lead[k++] = o->sanitize_tool;
    /* The worker is compute-sanitizer's child: all of its processes are
       checked, whatever a plugin starts. */
    lead[k++] = "--target-processes";
    lead[k++] = "all";
    lead[k++] = "--error-exitcode";
    lead[k++] = exit_code;
    lead[k++] = "--print-limit";
    lead[k++] = "10";
    return k;
}

/* The number after `label` in text, or -1. */
static long number_after(const char *text, const char *label)
{
    const char *at = text ? strstr(text, label) : NULL;
    if (!at)
        return -1;
    char *end;
    long v = strtol(at + strlen(label), &end, 10);
    return end == at + strlen(label) ? -1 : v;
}

/* The line of text that holds needle, without "========= ", into out. */
static void line_of(const char *text, const char *needle, char *out, size_t n)
{
    const char *at = text ? strstr(text, needle) : NULL;
    if (!at)
        return;
    const char *end = strchr(at, '\n');
    snprintf(out, n, "%.*s", (int)(end ? end - at : (long)strlen(at)), at);
}

void sv_sanitize_judge(super *s, worker *w, int status)
{
    sv_verdict *v = &w->verdict;
    memset(v, 0, sizeof *v);
    v->known = 1;
    const char *text = w->san.p ? w->san.p : "";
    /* memcheck, synccheck and initcheck end with "ERROR SUMMARY: N
       errors"; racecheck with "RACECHECK SUMMARY: N hazards displayed (E
       errors, W warnings)", where a warning is a hazard too. */
    long errors = number_after(text, "ERROR SUMMARY: ");
    long race_e = number_after(text, "hazards displayed (");
    long race_w = number_after(text, "errors, ");
    if (race_e >= 0) {
        line_of(text, "RACECHECK SUMMARY: ", v->summary, sizeof v->summary);
        long hazards = race_e + (race_w > 0 ? race_w : 0);
        errors = hazards > errors ? hazards : errors;
    } else {
        line_of(text, "ERROR SUMMARY: ", v->summary, sizeof v->summary);
    }
    int said_error = WIFEXITED(status) && WEXITSTATUS(status) == KBC_SANITIZER_ERROR_EXIT;
    if (errors <= 0 && said_error)
        errors = 1; /* its exit status says so, whatever it printed */
    v->errors = errors > 0 ? errors : 0;
    if (!v->errors)
        return;
    if (!v->summary[0])
        snprintf(v->summary, sizeof v->summary,
                 "compute-sanitizer exited with %d, its status for an error", status >> 8);
    char *copy = kbc_xstrdup(text);
    memcheck_report(copy, v->report, sizeof v->report);
    free(copy);
    /* Its whole report, once, on stderr: the row keeps the first lines. */
    const slot *sl = w->job >= 0 ? &s->slots[w->job] : NULL;
    char what[400] = "a worker";
    if (sl)
        snprintf(what, sizeof what, "the worker of [%s] point %llu, variant %s",
                 sv_exp_of(s, sl)->name, (unsigned long long)sl->job.point + 1,
                 w->variant[0] ? w->variant : "(none started)");
    sv_progress_clear(s);
    fprintf(stderr, "kbench: compute-sanitizer %s found %ld error%s in %s:\n%s",
            s->o->sanitize_tool, v->errors, v->errors == 1 ? "" : "s", what, text);
    if (w->san.n && text[w->san.n - 1] != '\n')
        fputc('\n', stderr);
}

void sv_sanitize_apply(const super *s, const worker *w, kbc_record *r)
{
    const sv_verdict *v = &w->verdict;
    if (!w->sanitized || !v->known || !v->errors)
        return;
    snprintf(r->sanitizer, sizeof r->sanitizer, "%s", v->report[0] ? v->report : v->summary);
    if (kbc_outcome_failed((int)r->outcome))
        return; /* crashed, timed out or in error already: the report joins it */
    r->outcome = KBC_ERROR;
    snprintf(r->reason, sizeof r->reason,
             "compute-sanitizer %s found %ld error%s in this variant's worker (%s); its first "
             "report is the sanitizer line",
             s->o->sanitize_tool, v->errors, v->errors == 1 ? "" : "s", v->summary);
}
