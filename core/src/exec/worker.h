/*
 * worker.h -- the process that runs points for a supervisor (supervisor.h).
 *
 * `kbench run` starts each worker by exec'ing its own binary with the
 * arguments of request.h (`kbench __worker FILE ...`), with the GPU it may
 * use chosen through CUDA_VISIBLE_DEVICES.  The worker builds the same plan
 * from the same INI file (without planning its points: each comes with its
 * plan, request.h), opens its device, and then runs the points it is told
 * to, one at a time.  Nothing of one point's plugin code runs in the
 * supervisor: a plugin that crashes, exits, hangs or spoils its CUDA
 * context takes only its worker with it.
 *
 * The channel, one line per message in each direction:
 *   supervisor -> worker, on the worker's standard input: the orders of
 *     request.h (a point with its plan, or quit)
 *   worker -> supervisor, on the descriptor named by $KBENCH_WORKER_FD, each
 *   line one JSON object:
 *     {"hello": {...}}         ready: pid, plan hash, machine, ceilings
 *     {"variant": NAME}        a variant of the current point starts
 *     {"log": LINE}            a line the plugin logged through the host
 *                              (also written on stderr)
 *     {"done": {"exp", "point", "lost"}, "rows": [...]}
 *                              the point's rows (record_json.h); "lost" is
 *                              the CUDA error that spoilt the context, or
 *                              null; after a lost context the worker exits
 *     {"fatal": SENTENCE}      the worker cannot go on (then it exits 2)
 * The worker's standard output is its standard error: a plugin that prints
 * cannot break the channel.
 */
#ifndef KBENCH_WORKER_H
#define KBENCH_WORKER_H

#include "request.h"

/* The environment variable that names the channel's descriptor (the
   hidden command's name, KBC_WORKER_COMMAND, is request.h's). */
#define KBC_WORKER_FD_ENV "KBENCH_WORKER_FD"

/* The worker's exit status when its channel was closed under it (a plugin
   closed the descriptor): it cannot say so on the channel, so its status
   does.  No kbench command exits with it. */
#define KBC_WORKER_EXIT_CHANNEL_CLOSED 97

/* The worker's main: argv[0] is KBC_WORKER_COMMAND.  Returns its exit
   code. */
int kbc_worker_main(int argc, char **argv);

#endif
