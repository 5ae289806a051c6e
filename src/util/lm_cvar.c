/* The one table of tunables (LM_CVAR_LIST in lm_cvar.h). Values come from
 * LEANMPI_<NAME>. */
#include "util/lm_cvar.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const lm_cvar_desc lm_cvar_table[LM_CVAR_COUNT] = {
#define LM_CVAR_ROW(name, def, lo, hi, group, audience, writable, text) \
    [LM_CVAR_##name] = {#name, def, lo, hi, LM_CVAR_GROUP_##group, LM_CVAR_##audience, writable, text},
    LM_CVAR_LIST(LM_CVAR_ROW)
#undef LM_CVAR_ROW
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
            fprintf(stderr, "LeanMPI: ignoring %s=%s (expected an integer in [%ld, %ld])\n", name, s, d->min_value,
                    d->max_value);
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
