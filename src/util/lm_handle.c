/* Object table: per kind, one flat array of slots that doubles as objects
 * are created (never sized by the job); objects themselves never move, so
 * the array may. A slot remembers a 5-bit generation so stale handles are
 * caught. A freed slot keeps its object for the next allocation of the
 * kind (up to LM_HANDLE_OBJECTS_KEPT per kind, all of one size), which keeps request allocation
 * off malloc on the hot path with no cache of its own to search. */
#include "util/lm_handle.h"
#include "util/lm_mem.h"
#include <string.h>

#define FIRST_SLOTS 64u
#define MAX_SLOTS (1u << 20)

static uint32_t capacity[LM_KIND_COUNT];
lm_handle_index lm_handle_indexes[LM_KIND_COUNT];
lm_handle_memo lm_handle_last[LM_KIND_COUNT];

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

static __attribute__((noinline)) int grow(enum lm_kind kind, lm_handle_index *x)
{
    uint32_t old = capacity[kind];
    if (x->used >= MAX_SLOTS) return -1;
    uint32_t cap = old ? 2 * old : FIRST_SLOTS;
    if (cap > MAX_SLOTS) cap = MAX_SLOTS;
    lm_handle_slot *s = lm_realloc(LM_MEM_CORE, x->slots, cap * sizeof *s);
    if (!s) return -1;
    memset(s + old, 0, (cap - old) * sizeof *s);
    x->slots = s;
    capacity[kind] = cap;
    return 0;
}

void *lm_object_alloc(enum lm_kind kind, size_t size)
{
    lm_handle_index *x = &lm_handle_indexes[kind];
    uint32_t i;
    if (x->free_head) {
        i = x->free_head - 1;
        x->free_head = x->slots[i].next_free;
    } else {
        if (x->used == capacity[kind] && grow(kind, x)) return NULL;
        i = x->used++;
    }
    lm_handle_slot *s = &x->slots[i];
    lm_object *o = s->obj;
    if (o) {
        x->kept--;
        if (lm_alloc_size(o) == size) memset(o, 0, size);
        else {
            lm_free(component_of(kind), o);
            o = NULL;
        }
    }
    if (!o) o = lm_calloc(component_of(kind), 1, size);
    if (!o) {
        s->obj = NULL;
        s->next_free = x->free_head;
        x->free_head = i + 1;
        return NULL;
    }
    s->obj = o;
    o->handle = LM_HANDLE(kind, LM_TIER_DYNAMIC, (s->generation << 20) | i);
    o->refcount = 1;
    x->live++;
    return o;
}

void lm_object_drop(lm_handle_slot *s, lm_object *o, enum lm_kind kind)
{
    s->obj = NULL;
    lm_free(component_of(kind), o);
}

void lm_object_free(void *obj) { lm_object_free_sized(obj, lm_alloc_size(obj)); }

void lm_object_foreach(enum lm_kind kind, void (*fn)(void *, void *), void *arg)
{
    const lm_handle_index *x = &lm_handle_indexes[kind];
    for (uint32_t i = 0; i < x->used; i++) {
        lm_object *o = x->slots[i].obj;
        if (o && o->handle) fn(o, arg);
    }
}

size_t lm_object_live_count(enum lm_kind kind) { return lm_handle_indexes[kind].live; }

void lm_object_finalize(void)
{
    for (int k = 0; k < LM_KIND_COUNT; k++) {
        lm_handle_index *x = &lm_handle_indexes[k];
        for (uint32_t i = 0; i < x->used; i++) {
            lm_object *o = x->slots[i].obj;
            if (o && !o->handle) {
                lm_free(component_of((enum lm_kind)k), o);
                x->slots[i].obj = NULL;
            }
        }
        x->kept = 0;
        if (x->live) continue;
        lm_free(LM_MEM_CORE, x->slots);
        /* an empty table: later lookups fail instead of reading freed slots */
        memset(x, 0, sizeof *x);
        capacity[k] = 0;
        lm_handle_last[k] = (lm_handle_memo){0, NULL};
    }
}
