/* Node KVS: lock-free open addressing (linear probing) in shared memory.
 *
 * Each slot's life is EMPTY -> WRITING -> READY and never goes back, which is
 * what makes a lock unnecessary: a writer claims a slot with one CAS, fills
 * it, and publishes it with a release store; a reader that sees READY (with
 * acquire) sees the whole entry. The slot's tag word carries the key's hash
 * next to the state, so a writer or reader that meets a slot still being
 * written only waits for it when the key might be its own.
 *
 * Write-once gives the -EEXIST rule without locks: two writers of one key
 * probe the same sequence, both pass the same non-empty slots, and the first
 * empty slot is won by exactly one CAS; the loser then meets the winner's
 * slot, waits for it to be READY and finds the key.
 *
 * The table must be formatted on zero-filled memory (a fresh mapping): the
 * format step writes only the header so that slot pages nobody uses are
 * never touched, hence never allocated. */
#include "boot/kvs.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define KVS_MAGIC 0x4c4d4b5653303031ull /* "LMKVS001" */

enum { SLOT_EMPTY = 0, SLOT_WRITING = 1, SLOT_READY = 2 };

struct kvs_slot {
    _Atomic uint64_t tag; /* hash << 32 | state */
    uint32_t value_len;
    uint32_t pad;
    char key[LM_KVS_KEY_MAX];
    char value[LM_KVS_VALUE_MAX];
};

struct lm_kvs {
    uint64_t magic;
    uint32_t nslots;
    uint32_t pad[13]; /* slots start on their own cache line */
    struct kvs_slot slots[];
};

size_t lm_kvs_size(unsigned nslots) { return sizeof(struct lm_kvs) + (size_t)nslots * sizeof(struct kvs_slot); }

lm_kvs *lm_kvs_format(void *mem, unsigned nslots)
{
    lm_kvs *kvs = mem;
    if (!mem || nslots == 0) return NULL;
    kvs->nslots = nslots;
    atomic_thread_fence(memory_order_release);
    kvs->magic = KVS_MAGIC;
    return kvs;
}

lm_kvs *lm_kvs_from(void *mem)
{
    lm_kvs *kvs = mem;
    return (kvs && kvs->magic == KVS_MAGIC) ? kvs : NULL;
}

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

static inline uint32_t tag_hash(uint64_t tag) { return (uint32_t)(tag >> 32); }
static inline unsigned tag_state(uint64_t tag) { return (unsigned)(tag & 3u); }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Wait until a WRITING slot becomes READY. A writer fills at most a few
 * hundred bytes, so this is normally a handful of spins; the limit only
 * matters if the writer died half-way, and then the slot stays unusable. */
static uint64_t wait_ready(struct kvs_slot *s, double limit_s)
{
    uint64_t tag = atomic_load_explicit(&s->tag, memory_order_acquire);
    double deadline = 0;
    for (unsigned spin = 0; tag_state(tag) == SLOT_WRITING; spin++) {
        if (spin < 256) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            if (deadline == 0) deadline = now_s() + limit_s;
            else if ((spin & 63) == 0 && now_s() > deadline) break;
            sched_yield();
        }
        tag = atomic_load_explicit(&s->tag, memory_order_acquire);
    }
    return tag;
}

int lm_kvs_put(lm_kvs *kvs, const char *key, const void *value, size_t len)
{
    if (!kvs || !key || (len && !value) || len > LM_KVS_VALUE_MAX) return -EINVAL;
    size_t klen = strlen(key);
    if (klen >= LM_KVS_KEY_MAX) return -EINVAL;
    uint32_t h = fnv1a(key);
    unsigned n = kvs->nslots;
    for (unsigned i = 0; i < n; i++) {
        struct kvs_slot *s = &kvs->slots[(h + i) % n];
        uint64_t tag = atomic_load_explicit(&s->tag, memory_order_acquire);
        if (tag == SLOT_EMPTY) {
            uint64_t mine = ((uint64_t)h << 32) | SLOT_WRITING;
            if (atomic_compare_exchange_strong_explicit(&s->tag, &tag, mine, memory_order_acquire,
                                                        memory_order_acquire)) {
                memcpy(s->key, key, klen + 1);
                if (len) memcpy(s->value, value, len);
                s->value_len = (uint32_t)len;
                atomic_store_explicit(&s->tag, ((uint64_t)h << 32) | SLOT_READY, memory_order_release);
                return 0;
            }
            /* Lost the race: tag now holds the winner's; examine it below. */
        }
        if (tag_hash(tag) != h) continue;
        tag = wait_ready(s, 2.0);
        if (tag_state(tag) != SLOT_READY) return -EBUSY; /* its writer died mid-write: the key is undecidable */
        if (strcmp(s->key, key) == 0) return -EEXIST;
    }
    return -ENOSPC;
}

long lm_kvs_get(lm_kvs *kvs, const char *key, void *value, size_t cap)
{
    if (!kvs || !key || (cap && !value)) return -EINVAL;
    if (strlen(key) >= LM_KVS_KEY_MAX) return -ENOENT;
    uint32_t h = fnv1a(key);
    unsigned n = kvs->nslots;
    for (unsigned i = 0; i < n; i++) {
        struct kvs_slot *s = &kvs->slots[(h + i) % n];
        uint64_t tag = atomic_load_explicit(&s->tag, memory_order_acquire);
        if (tag == SLOT_EMPTY) return -ENOENT;
        if (tag_hash(tag) != h) continue;
        if (tag_state(tag) == SLOT_WRITING) {
            /* Possibly our key, being written right now: wait a moment.
             * If it is still not READY, its put has not happened yet as far
             * as this reader can tell; and if it is our key, write-once
             * means no later slot holds it, so probing on stays correct. */
            tag = wait_ready(s, 0.001);
            if (tag_state(tag) != SLOT_READY) continue;
        }
        if (strcmp(s->key, key) == 0) {
            size_t len = s->value_len;
            if (cap) memcpy(value, s->value, len < cap ? len : cap);
            return (long)len;
        }
    }
    return -ENOENT;
}
