/* Tagged allocation: a 16-byte prefix remembers the size and component so
 * frees are attributed correctly without the caller repeating the size. */
#include "util/lm_mem.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t size;
    size_t component;
} mem_prefix;

static size_t current[LM_MEM_COMPONENT_COUNT];
static size_t peak[LM_MEM_COMPONENT_COUNT];
static long shared[LM_MEM_COMPONENT_COUNT];

static const char *const names[LM_MEM_COMPONENT_COUNT] = {
    "core",      "boot",          "kvs",      "transport",  "peer_table", "pt2pt",        "collectives",
    "datatypes", "communicators", "requests", "attributes", "rma",        "user_buffers",
};

static void account(enum lm_mem_component c, size_t add, size_t sub)
{
    current[c] = current[c] + add - sub;
    if (current[c] > peak[c]) peak[c] = current[c];
}

void *lm_malloc(enum lm_mem_component c, size_t n)
{
    mem_prefix *p = malloc(sizeof(mem_prefix) + n);
    if (!p) return NULL;
    p->size = n;
    p->component = c;
    account(c, n, 0);
    return p + 1;
}

void *lm_calloc(enum lm_mem_component c, size_t nmemb, size_t size)
{
    if (size && nmemb > ((size_t)-1 - sizeof(mem_prefix)) / size) return NULL;
    size_t n = nmemb * size;
    mem_prefix *p = calloc(1, sizeof(mem_prefix) + n);
    if (!p) return NULL;
    p->size = n;
    p->component = c;
    account(c, n, 0);
    return p + 1;
}

void *lm_realloc(enum lm_mem_component c, void *ptr, size_t n)
{
    if (!ptr) return lm_malloc(c, n);
    mem_prefix *old = (mem_prefix *)ptr - 1;
    size_t old_size = old->size;
    mem_prefix *p = realloc(old, sizeof(mem_prefix) + n);
    if (!p) return NULL;
    p->size = n;
    account(c, n, old_size);
    return p + 1;
}

void lm_free(enum lm_mem_component c, void *ptr)
{
    (void)c;
    if (!ptr) return;
    mem_prefix *p = (mem_prefix *)ptr - 1;
    account((enum lm_mem_component)p->component, 0, p->size);
    free(p);
}

char *lm_strdup(enum lm_mem_component c, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = lm_malloc(c, n);
    if (d) memcpy(d, s, n);
    return d;
}

size_t lm_alloc_size(const void *ptr) { return ((const mem_prefix *)ptr - 1)->size; }

void lm_mem_note_shared(enum lm_mem_component c, long delta) { shared[c] += delta; }
const char *lm_mem_component_name(enum lm_mem_component c) { return names[c]; }
size_t lm_mem_current(enum lm_mem_component c) { return current[c]; }
size_t lm_mem_peak(enum lm_mem_component c) { return peak[c]; }
size_t lm_mem_shared(enum lm_mem_component c) { return (size_t)(shared[c] > 0 ? shared[c] : 0); }

void lm_mem_report(int world_rank)
{
    char buf[4096];
    size_t off = 0, tot_cur = 0, tot_peak = 0, tot_shared = 0;
    off += (size_t)snprintf(buf + off, sizeof buf - off,
                            "LeanMPI memory report, rank %d (bytes)\n%-14s %12s %12s %12s\n", world_rank, "component",
                            "current", "peak", "shared");
    for (int c = 0; c < LM_MEM_COMPONENT_COUNT; c++) {
        if (!current[c] && !peak[c] && !shared[c]) continue;
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%-14s %12zu %12zu %12zu\n", names[c], current[c], peak[c],
                                lm_mem_shared(c));
        tot_cur += current[c];
        tot_peak += peak[c];
        tot_shared += lm_mem_shared(c);
    }
    snprintf(buf + off, sizeof buf - off, "%-14s %12zu %12zu %12zu\n", "total", tot_cur, tot_peak, tot_shared);
    fputs(buf, stderr);
}
