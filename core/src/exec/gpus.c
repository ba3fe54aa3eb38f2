/* gpus.c -- --gpus through NVML (supervisor.h, kbc_gpus_pick). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"
#include "supervisor.h"
#include "util.h"

#define MAX_GPUS 64

int kbc_gpus_pick(const char *spec, int allow_mixed, int allow_shared, kbc_gpu_pick **picks,
                  size_t *n, unsigned long long *min_mem, char *why, size_t whyn)
{
    *picks = NULL;
    *n = 0;
    *min_mem = 0;
    kbc_gpu_id ids[MAX_GPUS];
    char nwhy[400];
    int count = kbc_nvml_list(ids, MAX_GPUS, nwhy, sizeof nwhy);
    if (count < 0) {
        snprintf(why, whyn, "--gpus %s: the GPUs cannot be listed, because %s", spec, nwhy);
        return -1;
    }
    /* What there is, for the messages. */
    char there[600];
    size_t used = (size_t)snprintf(there, sizeof there, "NVML sees %d GPU%s", count,
                                   count == 1 ? "" : "s");
    for (int i = 0; i < count && used < sizeof there; i++)
        used += (size_t)snprintf(there + used, sizeof there - used, "%s%u %s", i ? ", " : ": ",
                                 ids[i].index, ids[i].name);
    int chosen[MAX_GPUS];
    size_t k = 0;
    if (strcmp(spec, "all") == 0) {
        for (int i = 0; i < count; i++)
            chosen[k++] = i;
    } else {
        char *copy = kbc_xstrdup(spec);
        for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
            int found = -1;
            char *end;
            errno = 0;
            long idx = strtol(tok, &end, 10);
            if (*tok >= '0' && *tok <= '9' && !*end && !errno) {
                for (int i = 0; i < count; i++)
                    if ((long)ids[i].index == idx)
                        found = i;
            } else {
                for (int i = 0; i < count; i++)
                    if (strcmp(ids[i].uuid, tok) == 0)
                        found = i;
            }
            if (found < 0 || k >= MAX_GPUS) {
                snprintf(why, whyn, "--gpus %s: there is no GPU '%s' on this machine (%s)", spec,
                         tok, there);
                free(copy);
                return -1;
            }
            for (size_t j = 0; j < k; j++)
                if (chosen[j] == found && !allow_shared) {
                    snprintf(why, whyn,
                             "--gpus %s: GPU %u is named twice; two workers on one GPU time "
                             "each other's kernels (add --allow-shared if that is meant)",
                             spec, ids[found].index);
                    free(copy);
                    return -1;
                }
            chosen[k++] = found;
        }
        free(copy);
    }
    if (k == 0) {
        snprintf(why, whyn, "--gpus %s: no GPU to run on (%s)", spec, there);
        return -1;
    }
    for (size_t j = 1; j < k; j++)
        if (strcmp(ids[chosen[j]].name, ids[chosen[0]].name) != 0 && !allow_mixed) {
            snprintf(why, whyn,
                     "--gpus %s: GPU %u is a %s and GPU %u a %s; rows of different models are "
                     "not comparable (add --allow-mixed if that is meant)",
                     spec, ids[chosen[0]].index, ids[chosen[0]].name, ids[chosen[j]].index,
                     ids[chosen[j]].name);
            return -1;
        }
    *picks = kbc_xcalloc(k, sizeof **picks);
    for (size_t j = 0; j < k; j++) {
        const kbc_gpu_id *g = &ids[chosen[j]];
        snprintf((*picks)[j].uuid, sizeof (*picks)[j].uuid, "%s", g->uuid);
        snprintf((*picks)[j].pci_bus_id, sizeof (*picks)[j].pci_bus_id, "%s", g->pci_bus_id);
        snprintf((*picks)[j].name, sizeof (*picks)[j].name, "%s", g->name);
        if (g->mem_bytes && (!*min_mem || g->mem_bytes < *min_mem))
            *min_mem = g->mem_bytes;
    }
    *n = k;
    return 0;
}
