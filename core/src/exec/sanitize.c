/*
 * sanitize.c -- --sanitize-on-crash: a crashed CUDA variant runs once more,
 * alone, in a throw-away worker under compute-sanitizer memcheck, and the
 * first report memcheck prints goes into its row.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    rerun_read(&r, t0 + 10 * kbc_job_timeout(s->plan, &sl->job), &eb);
    memcheck_report(eb.p, out, n);
    free(eb.p);
    double spent = kbc_now() - t0;
    for (size_t i = 0; i < s->n_w; i++)
        if (s->w[i].deadline > 0)
            s->w[i].deadline += spent;
}
