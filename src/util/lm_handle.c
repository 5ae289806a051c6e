/* Object table: per kind, slots grow in chunks as objects are created (never
 * sized by the job). A slot remembers a 5-bit generation so stale handles
 * are caught. Freed objects of the same size are recycled, which keeps
 * request allocation off malloc on the hot path. */
#include "util/lm_handle.h"
#include "util/lm_mem.h"
#include <string.h>

#define CHUNK_SHIFT 8
#define CHUNK_SLOTS (1u << CHUNK_SHIFT)
#define MAX_SLOTS (1u << 20)
#define FREE_OBJECT_CACHE 256

typedef struct slot {
    void *obj;           /* NULL when free */
    uint32_t generation; /* 0..31 */
    uint32_t next_free;  /* free-list link (slot index + 1; 0 = end) */
} slot;

typedef struct kind_table {
    slot **chunks;
    uint32_t nchunks;
    uint32_t used;      /* slots ever handed out */
    uint32_t free_head; /* index + 1 */
    size_t live;
    size_t cached_size; /* size of the objects in the cache */
    void *cache[FREE_OBJECT_CACHE];
    int ncached;
} kind_table;

static kind_table tables[LM_KIND_COUNT];
lm_handle_memo lm_handle_last[LM_KIND_COUNT];

static slot *slot_at(kind_table *t, uint32_t i) { return &t->chunks[i >> CHUNK_SHIFT][i & (CHUNK_SLOTS - 1)]; }

static int grab_slot(kind_table *t, uint32_t *out)
{
    if (t->free_head) {
        *out = t->free_head - 1;
        t->free_head = slot_at(t, *out)->next_free;
        return 0;
    }
    if (t->used >= MAX_SLOTS) return -1;
    if ((t->used >> CHUNK_SHIFT) >= t->nchunks) {
        slot **nc = lm_realloc(LM_MEM_CORE, t->chunks, (t->nchunks + 1) * sizeof(slot *));
        if (!nc) return -1;
        t->chunks = nc;
        t->chunks[t->nchunks] = lm_calloc(LM_MEM_CORE, CHUNK_SLOTS, sizeof(slot));
        if (!t->chunks[t->nchunks]) return -1;
        t->nchunks++;
    }
    *out = t->used++;
    return 0;
}

static enum lm_mem_component component_of(enum lm_kind k)
{
    switch (k) {
    case LM_KIND_REQUEST: return LM_MEM_REQUEST;
    case LM_KIND_COMM:
    case LM_KIND_GROUP: return LM_MEM_COMM;
    case LM_KIND_DATATYPE: return LM_MEM_DATATYPE;
    case LM_KIND_WIN: return LM_MEM_RMA;
    default: return LM_MEM_CORE;
    }
}

void *lm_object_alloc(enum lm_kind kind, size_t size)
{
    kind_table *t = &tables[kind];
    uint32_t i;
    if (grab_slot(t, &i)) return NULL;
    lm_object *o;
    if (t->ncached && t->cached_size == size) {
        o = t->cache[--t->ncached];
        memset(o, 0, size);
    } else {
        o = lm_calloc(component_of(kind), 1, size);
        if (!o) {
            slot_at(t, i)->next_free = t->free_head;
            t->free_head = i + 1;
            return NULL;
        }
    }
    slot *s = slot_at(t, i);
    s->obj = o;
    o->handle = LM_HANDLE(kind, LM_TIER_DYNAMIC, (s->generation << 20) | i);
    o->refcount = 1;
    t->live++;
    return o;
}

void lm_object_free(void *obj)
{
    lm_object *o = obj;
    unsigned kind = LM_HANDLE_KIND(o->handle);
    kind_table *t = &tables[kind];
    uint32_t i = LM_HANDLE_SLOT(o->handle);
    slot *s = slot_at(t, i);
    if (lm_handle_last[kind].handle == o->handle) lm_handle_last[kind] = (lm_handle_memo){0, NULL};
    s->obj = NULL;
    s->generation = (s->generation + 1) & 31u;
    s->next_free = t->free_head;
    t->free_head = i + 1;
    t->live--;
    size_t size = lm_alloc_size(o);
    o->handle = 0;
    if (t->ncached < FREE_OBJECT_CACHE && (t->ncached == 0 || t->cached_size == size)) {
        t->cached_size = size;
        t->cache[t->ncached++] = o;
    } else {
        lm_free(component_of(kind), o);
    }
}

void *lm_object_lookup_table(int handle, enum lm_kind kind)
{
    kind_table *t = &tables[kind];
    if (LM_HANDLE_KIND(handle) != (unsigned)kind || LM_HANDLE_TIER(handle) != LM_TIER_DYNAMIC) return NULL;
    uint32_t i = LM_HANDLE_SLOT(handle);
    if (i >= t->used) return NULL;
    slot *s = slot_at(t, i);
    if (!s->obj || ((lm_object *)s->obj)->handle != handle) return NULL;
    lm_handle_last[kind] = (lm_handle_memo){handle, s->obj};
    return s->obj;
}

void lm_object_foreach(enum lm_kind kind, void (*fn)(void *, void *), void *arg)
{
    kind_table *t = &tables[kind];
    for (uint32_t i = 0; i < t->used; i++) {
        slot *s = slot_at(t, i);
        if (s->obj) fn(s->obj, arg);
    }
}

size_t lm_object_live_count(enum lm_kind kind) { return tables[kind].live; }

void lm_object_finalize(void)
{
    for (int k = 0; k < LM_KIND_COUNT; k++) {
        kind_table *t = &tables[k];
        while (t->ncached) lm_free(component_of((enum lm_kind)k), t->cache[--t->ncached]);
        if (t->live) continue;
        for (uint32_t c = 0; c < t->nchunks; c++) lm_free(LM_MEM_CORE, t->chunks[c]);
        lm_free(LM_MEM_CORE, t->chunks);
        /* an empty table: later lookups fail instead of reading freed slots */
        memset(t, 0, sizeof *t);
    }
}
