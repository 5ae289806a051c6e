#include "lm_hashmap.h"
#include <stdint.h>

static inline size_t slot_of(int key, size_t capacity)
{
    /* Fibonacci hashing: ranks are dense small integers, so spread them. */
    return (size_t)(((uint32_t)key * 2654435769u) >> 7) & (capacity - 1);
}

void lm_hashmap_init(lm_hashmap *m, enum lm_mem_component component)
{
    m->slots = NULL;
    m->capacity = 0;
    m->count = 0;
    m->component = component;
}

void lm_hashmap_destroy(lm_hashmap *m)
{
    if (m->slots) lm_free(m->component, m->slots);
    lm_hashmap_init(m, m->component);
}

static size_t find(const lm_hashmap *m, int key)
{
    size_t mask = m->capacity - 1;
    for (size_t i = slot_of(key, m->capacity);; i = (i + 1) & mask) {
        if (m->slots[i].key == key || m->slots[i].key == LM_HASHMAP_EMPTY) return i;
    }
}

void *lm_hashmap_get(const lm_hashmap *m, int key)
{
    if (m->count == 0 || key == LM_HASHMAP_EMPTY) return NULL;
    size_t i = find(m, key);
    return m->slots[i].key == key ? m->slots[i].value : NULL;
}

static int grow(lm_hashmap *m)
{
    size_t cap = m->capacity ? m->capacity * 2 : 8;
    lm_hashmap_slot *s = lm_malloc(m->component, cap * sizeof *s);
    if (!s) return -1;
    for (size_t i = 0; i < cap; i++) s[i].key = LM_HASHMAP_EMPTY;
    lm_hashmap old = *m;
    m->slots = s;
    m->capacity = cap;
    for (size_t i = 0; i < old.capacity; i++) {
        if (old.slots[i].key != LM_HASHMAP_EMPTY) {
            size_t j = find(m, old.slots[i].key);
            m->slots[j] = old.slots[i];
        }
    }
    if (old.slots) lm_free(m->component, old.slots);
    return 0;
}

int lm_hashmap_put(lm_hashmap *m, int key, void *value)
{
    if (key == LM_HASHMAP_EMPTY) return -1;
    if ((m->count + 1) * 4 > m->capacity * 3 && grow(m) != 0) return -1;
    size_t i = find(m, key);
    if (m->slots[i].key == LM_HASHMAP_EMPTY) {
        m->slots[i].key = key;
        m->count++;
    }
    m->slots[i].value = value;
    return 0;
}

void *lm_hashmap_remove(lm_hashmap *m, int key)
{
    if (m->count == 0 || key == LM_HASHMAP_EMPTY) return NULL;
    size_t i = find(m, key);
    if (m->slots[i].key != key) return NULL;
    void *value = m->slots[i].value;
    size_t mask = m->capacity - 1;
    /* Backward shift: pull later entries of the probe run into the hole
     * unless that would move one before its home slot. */
    for (size_t j = (i + 1) & mask; m->slots[j].key != LM_HASHMAP_EMPTY; j = (j + 1) & mask) {
        size_t home = slot_of(m->slots[j].key, m->capacity);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->slots[i] = m->slots[j];
            i = j;
        }
    }
    m->slots[i].key = LM_HASHMAP_EMPTY;
    m->slots[i].value = NULL;
    m->count--;
    return value;
}

void lm_hashmap_foreach(const lm_hashmap *m, void (*fn)(int key, void *value, void *arg), void *arg)
{
    for (size_t i = 0; i < m->capacity; i++)
        if (m->slots[i].key != LM_HASHMAP_EMPTY) fn(m->slots[i].key, m->slots[i].value, arg);
}
