/* A bounded cache of memory registrations, for a network backend whose
 * registrations name virtual addresses only (ofi.c decides which).
 *
 * A rendezvous sender registers its buffer for the receiver's RMA read;
 * programs send from the same buffers again and again (halo exchanges,
 * pipelines), so a registration is kept once its message is done, and the
 * next exposure of a range it covers takes it again instead of registering
 * anew. Entries in use are never dropped; at most `max_idle` unused ones
 * are kept, the least recently used going first, and 0 keeps none (every
 * registration is dropped when its last user puts it back).
 *
 * The cache knows nothing of the registrations themselves: `drop` releases
 * one. Not thread-safe: the transport runs under the library's critical
 * section. */
#ifndef LM_MR_CACHE_H
#define LM_MR_CACHE_H
#include <stddef.h>
#include <stdint.h>

typedef struct lm_mr_entry {
    uintptr_t base;
    size_t len;
    uint64_t access;                 /* what the registration allows (the backend's flags) */
    int refs;                        /* exposures using it now */
    void *reg;                       /* the backend's registration */
    struct lm_mr_entry *prev, *next; /* most recently used first */
} lm_mr_entry;

typedef struct lm_mr_cache {
    lm_mr_entry *head, *tail;
    int entries, idle;
    int max_idle;
    void (*drop)(void *reg);
    uint64_t hits, registrations; /* for MPI_T (transport_ofi_mr_*) */
} lm_mr_cache;

void lm_mr_cache_init(lm_mr_cache *c, int max_idle, void (*drop)(void *reg));
/* An entry whose range covers [buf, buf + len) with at least `access`,
 * taken (refs + 1) and made the most recent; NULL when none does. */
lm_mr_entry *lm_mr_cache_get(lm_mr_cache *c, const void *buf, size_t len, uint64_t access);
/* A new registration `reg` of [buf, buf + len), taken once. NULL when out
 * of memory (the caller still owns reg). */
lm_mr_entry *lm_mr_cache_add(lm_mr_cache *c, const void *buf, size_t len, uint64_t access, void *reg);
/* Give an entry back; unused entries beyond max_idle are dropped. */
void lm_mr_cache_put(lm_mr_cache *c, lm_mr_entry *e);
/* Drop every entry, used or not (the backend closes). */
void lm_mr_cache_clear(lm_mr_cache *c);

#endif
