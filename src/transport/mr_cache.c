/* Bounded registration cache (mr_cache.h): one list in order of last use,
 * searched linearly. It holds the exposures in flight plus at most
 * max_idle others, a few dozen at most, and each lookup precedes a message
 * above the eager limit, whose transfer costs far more than the walk. */
#include "transport/mr_cache.h"
#include "util/lm_mem.h"

void lm_mr_cache_init(lm_mr_cache *c, int max_idle, void (*drop)(void *reg))
{
    *c = (lm_mr_cache){.max_idle = max_idle < 0 ? 0 : max_idle, .drop = drop};
}

static void unlink_entry(lm_mr_cache *c, lm_mr_entry *e)
{
    if (e->prev) e->prev->next = e->next;
    else c->head = e->next;
    if (e->next) e->next->prev = e->prev;
    else c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(lm_mr_cache *c, lm_mr_entry *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head) c->head->prev = e;
    else c->tail = e;
    c->head = e;
}

static void drop_entry(lm_mr_cache *c, lm_mr_entry *e)
{
    unlink_entry(c, e);
    c->entries--;
    if (e->refs == 0) c->idle--;
    c->drop(e->reg);
    lm_free(LM_MEM_TRANSPORT, e);
}

lm_mr_entry *lm_mr_cache_get(lm_mr_cache *c, const void *buf, size_t len, uint64_t access)
{
    uintptr_t lo = (uintptr_t)buf;
    for (lm_mr_entry *e = c->head; e; e = e->next) {
        if (lo < e->base || lo - e->base > e->len || len > e->len - (lo - e->base)) continue;
        if ((e->access & access) != access) continue;
        if (e->refs++ == 0) c->idle--;
        unlink_entry(c, e);
        push_front(c, e);
        c->hits++;
        return e;
    }
    return NULL;
}

lm_mr_entry *lm_mr_cache_add(lm_mr_cache *c, const void *buf, size_t len, uint64_t access, void *reg)
{
    lm_mr_entry *e = lm_calloc(LM_MEM_TRANSPORT, 1, sizeof *e);
    if (!e) return NULL;
    e->base = (uintptr_t)buf;
    e->len = len;
    e->access = access;
    e->refs = 1;
    e->reg = reg;
    push_front(c, e);
    c->entries++;
    c->registrations++;
    return e;
}

void lm_mr_cache_put(lm_mr_cache *c, lm_mr_entry *e)
{
    if (--e->refs > 0) return;
    c->idle++;
    /* the least recently used unused entries go first */
    for (lm_mr_entry *v = c->tail; v && c->idle > c->max_idle;) {
        lm_mr_entry *prev = v->prev;
        if (v->refs == 0) drop_entry(c, v);
        v = prev;
    }
}

void lm_mr_cache_clear(lm_mr_cache *c)
{
    while (c->head) drop_entry(c, c->head);
}
