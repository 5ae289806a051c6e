/* The one table of tunables. Values come from LEANMPI_<NAME>. */
#include "core/lm_cvar.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const lm_cvar_desc lm_cvar_table[LM_CVAR_COUNT] = {
    [LM_CVAR_EAGER_LIMIT] = {"EAGER_LIMIT", 16384, 0, 1L << 30,
                             "messages up to this many bytes are sent eagerly; larger ones by rendezvous"},
    [LM_CVAR_CMA_ENABLE] = {"CMA_ENABLE", 1, 0, 1,
                            "copy large intra-node messages once with process_vm_readv when permitted"},
    [LM_CVAR_FASTBOX_THRESHOLD] = {"FASTBOX_THRESHOLD", 8, 0, 1L << 30,
                                   "messages sent to one peer before a fast box is claimed for the pair"},
    [LM_CVAR_FASTBOX_MAX] = {"FASTBOX_MAX", 8, 0, 64, "fast boxes one receiver serves at most"},
    [LM_CVAR_FASTBOX_PEERS] = {"FASTBOX_PEERS", 0, 0, 1L << 30,
                               "peers one rank sends to through fast boxes at most (0: no limit; "
                               "resource-saving mode: 1024)"},
    [LM_CVAR_UNEXPECTED_LIMIT] = {"UNEXPECTED_LIMIT", 64L << 20, 0, 1L << 40,
                                  "eager bytes a receiver may hold unmatched before senders switch to rendezvous"},
    [LM_CVAR_PIPELINE_CHUNK] = {"PIPELINE_CHUNK", 0, 0, 1L << 30,
                                "bytes per chunk when large data goes through cells (0: the cell payload size)"},
    [LM_CVAR_SHM_ARENA_SIZE] = {"SHM_ARENA_SIZE", 1L << 20, 4096, 1L << 34,
                                "bytes of node-shared memory per rank for one-sided access (read by mpirun)"},
    [LM_CVAR_MEMREPORT] = {"MEMREPORT", 0, 0, 1, "print the per-component memory table at MPI_Finalize"},
    [LM_CVAR_COOP_COPY_MIN] = {"COOP_COPY_MIN", 256L << 10, 0, 1L << 40,
                               "single-copy messages of at least this many bytes are copied by receiver and "
                               "sender together (0: the receiver copies alone)"},
    [LM_CVAR_COOP_COPY_CHUNK] = {"COOP_COPY_CHUNK", 128L << 10, 4096, 1L << 30,
                                 "smallest piece of a shared copy (each side claims one half of the message)"},
    [LM_CVAR_COLL_SHM] = {"COLL_SHM", 1, 0, 1,
                          "collectives on communicators within one node may use node shared-memory mailboxes "
                          "(0: point-to-point algorithms only)"},
};

static long values[LM_CVAR_COUNT];
static int loaded;

/* LEANMPI_PROTOCOL=resource-saving: eager messages only up to this size,
 * so that unexpected and queued eager data stays small at any job size, and
 * fast-path buffers (fast boxes) at no more than this many peers per sender
 * (a receiver serves at most FASTBOX_MAX of them in every mode). Variables
 * set explicitly still win. */
#define RESOURCE_SAVING_EAGER_LIMIT 128
#define RESOURCE_SAVING_FASTBOX_PEERS 1024

static long default_of(int i, int resource_saving)
{
    if (resource_saving && i == LM_CVAR_EAGER_LIMIT) return RESOURCE_SAVING_EAGER_LIMIT;
    if (resource_saving && i == LM_CVAR_FASTBOX_PEERS) return RESOURCE_SAVING_FASTBOX_PEERS;
    return lm_cvar_table[i].default_value;
}

void lm_cvar_load(void)
{
    if (loaded) return;
    const char *protocol = lm_param_string("PROTOCOL");
    int resource_saving = protocol && !strcmp(protocol, "resource-saving");
    if (protocol && !resource_saving && strcmp(protocol, "default"))
        fprintf(stderr, "LeanMPI: ignoring LEANMPI_PROTOCOL=%s (expected default or resource-saving)\n", protocol);
    for (int i = 0; i < LM_CVAR_COUNT; i++) {
        const lm_cvar_desc *d = &lm_cvar_table[i];
        char name[96];
        snprintf(name, sizeof name, "LEANMPI_%s", d->name);
        values[i] = default_of(i, resource_saving);
        const char *s = getenv(name);
        if (!s || !*s) continue;
        char *end;
        errno = 0;
        long v = strtol(s, &end, 0);
        if (*end == 'k' || *end == 'K') v <<= 10, end++;
        else if (*end == 'm' || *end == 'M') v <<= 20, end++;
        else if (*end == 'g' || *end == 'G') v <<= 30, end++;
        if (errno || *end || v < d->min_value || v > d->max_value) {
            fprintf(stderr, "LeanMPI: ignoring %s=%s (expected an integer in [%ld, %ld])\n", name, s,
                    d->min_value, d->max_value);
            continue;
        }
        values[i] = v;
    }
    loaded = 1;
}

long lm_cvar(enum lm_cvar_id id)
{
    if (!loaded) lm_cvar_load();
    return values[id];
}

int lm_cvar_set(enum lm_cvar_id id, long value)
{
    if (!loaded) lm_cvar_load();
    const lm_cvar_desc *d = &lm_cvar_table[id];
    if (value < d->min_value || value > d->max_value) return -1;
    values[id] = value;
    return 0;
}

const char *lm_param_string(const char *name)
{
    char full[96];
    snprintf(full, sizeof full, "LEANMPI_%s", name);
    const char *s = getenv(full);
    return (s && *s) ? s : NULL;
}

const lm_cvar_desc *lm_cvar_describe(int i, long *value)
{
    if (i < 0 || i >= LM_CVAR_COUNT) return NULL;
    if (value) *value = lm_cvar((enum lm_cvar_id)i);
    return &lm_cvar_table[i];
}
