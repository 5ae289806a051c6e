/* One-sided operations on node-shared arenas: the target's memory is mapped
 * here, so put/get are memcpy and atomics are C11 atomics on the mapping
 * (lock-free 32/64-bit atomics are address-free on the platforms we build
 * for, so they are atomic across processes). Everything completes before
 * the call returns; flush is only a fence. */
#include "shm.h"
#include "transport.h"
#include "transport_env.h"
#include <stdatomic.h>
#include <string.h>

void *lm_transport_shared_alloc(size_t len, lm_rkey *key) { return lm_shm_arena_alloc(len, key); }

void lm_transport_shared_free(void *p) { lm_shm_arena_free(p); }

static int resolve(int world_rank, lm_rkey key, size_t offset, size_t len, size_t align, void **out)
{
    int local = lm_transport_local_rank(world_rank);
    if (local < 0) return LM_EPEER;
    void *p = lm_shm_arena_resolve(local, key, offset, len);
    if (!p || ((uintptr_t)p & (align - 1))) return LM_EINVAL;
    *out = p;
    return LM_OK;
}

void *lm_transport_shared_ptr(int world_rank, lm_rkey key, size_t len)
{
    void *p;
    return resolve(world_rank, key, 0, len, 1, &p) == LM_OK ? p : NULL;
}

int lm_transport_put(int dst, lm_rkey key, size_t offset, const void *src, size_t len)
{
    void *p;
    int rc = resolve(dst, key, offset, len, 1, &p);
    if (rc == LM_OK) memcpy(p, src, len);
    return rc;
}

int lm_transport_get(int src, lm_rkey key, size_t offset, void *dst, size_t len)
{
    void *p;
    int rc = resolve(src, key, offset, len, 1, &p);
    if (rc == LM_OK) memcpy(dst, p, len);
    return rc;
}

#define ATOMIC_OPS(bits)                                                                                              \
    int lm_transport_atomic_fadd##bits(int rank, lm_rkey key, size_t offset, uint##bits##_t add, uint##bits##_t *old) \
    {                                                                                                                 \
        void *p;                                                                                                      \
        int rc = resolve(rank, key, offset, bits / 8, bits / 8, &p);                                                  \
        if (rc != LM_OK) return rc;                                                                                   \
        uint##bits##_t v = atomic_fetch_add((_Atomic uint##bits##_t *)p, add);                                        \
        if (old) *old = v;                                                                                            \
        return LM_OK;                                                                                                 \
    }                                                                                                                 \
    int lm_transport_atomic_swap##bits(int rank, lm_rkey key, size_t offset, uint##bits##_t val, uint##bits##_t *old) \
    {                                                                                                                 \
        void *p;                                                                                                      \
        int rc = resolve(rank, key, offset, bits / 8, bits / 8, &p);                                                  \
        if (rc != LM_OK) return rc;                                                                                   \
        uint##bits##_t v = atomic_exchange((_Atomic uint##bits##_t *)p, val);                                         \
        if (old) *old = v;                                                                                            \
        return LM_OK;                                                                                                 \
    }                                                                                                                 \
    int lm_transport_atomic_cas##bits(int rank, lm_rkey key, size_t offset, uint##bits##_t expected,                  \
                                      uint##bits##_t desired, uint##bits##_t *old)                                    \
    {                                                                                                                 \
        void *p;                                                                                                      \
        int rc = resolve(rank, key, offset, bits / 8, bits / 8, &p);                                                  \
        if (rc != LM_OK) return rc;                                                                                   \
        atomic_compare_exchange_strong((_Atomic uint##bits##_t *)p, &expected, desired);                              \
        if (old) *old = expected;                                                                                     \
        return LM_OK;                                                                                                 \
    }

ATOMIC_OPS(64)
ATOMIC_OPS(32)

int lm_transport_flush(int rank)
{
    atomic_thread_fence(memory_order_seq_cst);
    return LM_OK;
}
