/* A small open-addressing map from int keys to pointers, for per-peer state
 * (rule R1: sized by the peers actually contacted, never by the job). It
 * starts empty (no allocation), doubles at 3/4 load and uses linear probing
 * with backward-shift deletion, so there are no tombstones to clean up.
 * Keys are any int except INT_MIN (the empty marker). Not thread-safe. */
#ifndef LM_HASHMAP_H
#define LM_HASHMAP_H
#include <limits.h>
#include <stddef.h>
#include "lm_mem.h"

#define LM_HASHMAP_EMPTY INT_MIN

typedef struct lm_hashmap_slot {
    int key;
    void *value;
} lm_hashmap_slot;

typedef struct lm_hashmap {
    lm_hashmap_slot *slots;
    size_t capacity; /* 0 or a power of two */
    size_t count;
    enum lm_mem_component component;
} lm_hashmap;

void lm_hashmap_init(lm_hashmap *m, enum lm_mem_component component);
void lm_hashmap_destroy(lm_hashmap *m);
/* NULL if absent. */
void *lm_hashmap_get(const lm_hashmap *m, int key);
/* Insert or replace. 0, or -1 if out of memory (the map is unchanged). */
int lm_hashmap_put(lm_hashmap *m, int key, void *value);
/* The removed value, or NULL if absent. */
void *lm_hashmap_remove(lm_hashmap *m, int key);
static inline size_t lm_hashmap_count(const lm_hashmap *m) { return m->count; }
/* Calls fn for every entry; fn must not change the map. */
void lm_hashmap_foreach(const lm_hashmap *m, void (*fn)(int key, void *value, void *arg), void *arg);

#endif
