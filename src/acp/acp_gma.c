/* ACP global memory access: acp_copy, the atomics, acp_complete and
 * acp_inquire.
 *
 * Each GMA is carried out by the caller through the one-sided engine:
 * memory this process can load and store (its own, and the starter memory
 * of the node's processes, mapped from the node's ACP area) directly, other
 * processes' registered memory with single copies. A copy between two
 * other processes (neither address is the caller's) goes through a bounded
 * buffer of the caller's, a chunk at a time. Every such GMA is complete
 * when its call returns, so handles complete in issue order by
 * construction and an order handle has nothing left to wait for once it
 * is checked; acp_complete still flushes the engine, which holds any
 * operation carried out by an owner.
 *
 * Atomics: on starter memory, which every process that reaches it maps,
 * they are CPU atomics; on registered memory, which others reach with
 * single copies, every atomic (the owner's own included) reads, applies
 * and writes under the owner's atomic lock in its control block, so that
 * atomics are atomic with respect to each other whoever issues them. */
#include "acp/acp_internal.h"
#include "util/lm_mem.h"
#include "util/lm_state.h"
#include <sched.h>
#include <string.h>

#define BOUNCE_CHUNK (64u << 10)

/* ---- handles ---- */

LM_ACP_API void acp_complete(acp_handle_t handle)
{
    if (!lm_acp_ready("acp_complete") || handle == (acp_handle_t)ACP_HANDLE_NULL) return;
    if (lm_osc_flush(lm_acp.ch, -1) != MPI_SUCCESS)
        lm_acp_error("acp_complete", "an operation carried out by another process failed");
}

LM_ACP_API int acp_inquire(acp_handle_t handle)
{
    if (!lm_acp_ready("acp_inquire") || handle == (acp_handle_t)ACP_HANDLE_NULL) return 0;
    if (handle != (acp_handle_t)ACP_HANDLE_ALL && (handle < 0 || handle > lm_acp.issued)) return 0;
    return lm_osc_pending(lm_acp.ch, -1) > 0;
}

/* A GMA may start once its order handle is complete: 1, or 0 for a handle
 * that was never issued. ACP_HANDLE_CONT waits like ACP_HANDLE_ALL, which
 * the ACP documentation allows. */
static int ordered(const char *fn, acp_handle_t order)
{
    if (order == (acp_handle_t)ACP_HANDLE_NULL) return 1;
    if (order != (acp_handle_t)ACP_HANDLE_ALL && order != (acp_handle_t)ACP_HANDLE_CONT &&
        (order < 0 || order > lm_acp.issued)) {
        lm_acp_error(fn, "order handle %lld was never issued (the last one issued is %lld)", (long long)order,
                     (long long)lm_acp.issued);
        return 0;
    }
    acp_complete(order);
    return 1;
}

/* ---- copies ---- */

static int put_from(const lm_acp_place *dst, const void *src, size_t size)
{
    if (dst->here) {
        memmove(dst->here, src, size);
        return MPI_SUCCESS;
    }
    return lm_osc_put(lm_acp.ch, &dst->target, 0, size, 1, (int64_t)size, src, NULL, NULL);
}

static int get_into(void *dst, const lm_acp_place *src, uint64_t off, size_t size)
{
    if (src->here) {
        memmove(dst, src->here + off, size);
        return MPI_SUCCESS;
    }
    return lm_osc_get(lm_acp.ch, &src->target, off, size, 1, (int64_t)size, dst, NULL, NULL);
}

/* Neither side can be loaded or stored here: a chunk at a time through a
 * buffer of at most BOUNCE_CHUNK bytes. */
static int relay(lm_acp_place *dst, const lm_acp_place *src, size_t size)
{
    size_t chunk = size < BOUNCE_CHUNK ? size : BOUNCE_CHUNK;
    char *buf = lm_malloc(LM_MEM_RMA, chunk);
    if (!buf) return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (size_t done = 0; done < size && rc == MPI_SUCCESS; done += chunk) {
        size_t n = size - done < chunk ? size - done : chunk;
        rc = get_into(buf, src, done, n);
        if (rc == MPI_SUCCESS) rc = lm_osc_put(lm_acp.ch, &dst->target, done, n, 1, (int64_t)n, buf, NULL, NULL);
    }
    lm_free(LM_MEM_RMA, buf);
    return rc;
}

LM_ACP_API acp_handle_t acp_copy(acp_ga_t dst, acp_ga_t src, size_t size, acp_handle_t order)
{
    static const char fn[] = "acp_copy";
    lm_acp_place d, s;
    if (!lm_acp_ready(fn) || !ordered(fn, order) || !lm_acp_locate(fn, "destination", dst, size, 1, &d) ||
        !lm_acp_locate(fn, "source", src, size, 1, &s))
        return ACP_HANDLE_NULL;
    int rc = MPI_SUCCESS;
    if (size == 0) rc = MPI_SUCCESS;
    else if (s.here) rc = put_from(&d, s.here, size);
    else if (d.here) rc = get_into(d.here, &s, 0, size);
    else rc = relay(&d, &s, size);
    if (rc != MPI_SUCCESS) {
        lm_acp_error(fn, "copying %zu bytes from rank %d to rank %d failed (%s)", size, s.rank, d.rank,
                     rc == MPI_ERR_NO_MEM ? "out of memory" : "the kernel refused the single copy");
        return ACP_HANDLE_NULL;
    }
    return ++lm_acp.issued;
}

/* ---- atomics ---- */

enum atomic_op { OP_CAS, OP_SWAP, OP_ADD, OP_XOR, OP_OR, OP_AND };

static uint64_t apply(enum atomic_op op, uint64_t old, uint64_t value, uint64_t compare, uint64_t mask)
{
    switch (op) {
    case OP_CAS: return old == compare ? value : old;
    case OP_SWAP: return value;
    case OP_ADD: return (old + value) & mask;
    case OP_XOR: return old ^ value;
    case OP_OR: return old | value;
    case OP_AND: return old & value;
    }
    return old;
}

/* A CPU atomic on memory mapped here; the value it held before. */
static uint64_t cpu_atomic(char *at, int width, enum atomic_op op, uint64_t value, uint64_t compare)
{
    if (width == 4) {
        uint32_t *p = (uint32_t *)(void *)at, v = (uint32_t)value, old = 0;
        switch (op) {
        case OP_CAS: lm_osc_cas32(p, (uint32_t)compare, v, &old); return old;
        case OP_SWAP: return lm_osc_swap32(p, v);
        case OP_ADD: return lm_osc_fetch_add32(p, v);
        case OP_XOR: return lm_osc_fetch_xor32(p, v);
        case OP_OR: return lm_osc_fetch_or32(p, v);
        case OP_AND: return lm_osc_fetch_and32(p, v);
        }
        return old;
    }
    uint64_t *p = (uint64_t *)(void *)at, old = 0;
    switch (op) {
    case OP_CAS: lm_osc_cas64(p, compare, value, &old); return old;
    case OP_SWAP: return lm_osc_swap64(p, value);
    case OP_ADD: return lm_osc_fetch_add64(p, value);
    case OP_XOR: return lm_osc_fetch_xor64(p, value);
    case OP_OR: return lm_osc_fetch_or64(p, value);
    case OP_AND: return lm_osc_fetch_and64(p, value);
    }
    return old;
}

static void lock_owner(lm_acp_ctl *owner)
{
    for (unsigned tries = 0; !lm_osc_cas32(&owner->atomic_lock, 0, 1, NULL); tries++) {
        if (lm_oversubscribed() || tries > 64) sched_yield();
        else __builtin_ia32_pause();
    }
}

static void unlock_owner(lm_acp_ctl *owner) { __atomic_store_n(&owner->atomic_lock, 0, __ATOMIC_RELEASE); }

/* Read, apply and write back under the owner's atomic lock: *old gets the
 * value before. */
static int locked_atomic(lm_acp_place *at, int width, enum atomic_op op, uint64_t value, uint64_t compare,
                         uint64_t *old)
{
    uint64_t mask = width == 4 ? UINT32_MAX : UINT64_MAX, before = 0;
    lock_owner(at->owner);
    int rc = get_into(&before, at, 0, (size_t)width);
    uint64_t after = apply(op, before, value & mask, compare & mask, mask);
    if (rc == MPI_SUCCESS && after != before) rc = put_from(at, &after, (size_t)width);
    unlock_owner(at->owner);
    *old = before;
    return rc;
}

static acp_handle_t atomic(const char *fn, acp_ga_t dst, acp_ga_t src, int width, enum atomic_op op, uint64_t value,
                           uint64_t compare, acp_handle_t order)
{
    lm_acp_place d, s;
    if (!lm_acp_ready(fn) || !ordered(fn, order) || !lm_acp_locate(fn, "result", dst, (size_t)width, (size_t)width, &d))
        return ACP_HANDLE_NULL;
    if (d.rank != lm_acp.comm->rank || !d.here) {
        lm_acp_error(fn, "the result address must be this process's memory (rank %d), not rank %d's", lm_acp.comm->rank,
                     d.rank);
        return ACP_HANDLE_NULL;
    }
    if (!lm_acp_locate(fn, "target", src, (size_t)width, (size_t)width, &s)) return ACP_HANDLE_NULL;
    uint64_t old = 0;
    if (!s.registered) {
        old = cpu_atomic(s.here, width, op, value, compare);
    } else if (locked_atomic(&s, width, op, value, compare, &old) != MPI_SUCCESS) {
        lm_acp_error(fn, "the single copy to rank %d's memory was refused", s.rank);
        return ACP_HANDLE_NULL;
    }
    if (width == 4) {
        uint32_t v = (uint32_t)old;
        memcpy(d.here, &v, 4);
    } else {
        memcpy(d.here, &old, 8);
    }
    return ++lm_acp.issued;
}

#define ACP_ATOMIC(name, width, type, op)                                                    \
    LM_ACP_API acp_handle_t name(acp_ga_t dst, acp_ga_t src, type value, acp_handle_t order) \
    {                                                                                        \
        return atomic(#name, dst, src, width, op, value, 0, order);                          \
    }
ACP_ATOMIC(acp_swap4, 4, uint32_t, OP_SWAP)
ACP_ATOMIC(acp_swap8, 8, uint64_t, OP_SWAP)
ACP_ATOMIC(acp_add4, 4, uint32_t, OP_ADD)
ACP_ATOMIC(acp_add8, 8, uint64_t, OP_ADD)
ACP_ATOMIC(acp_xor4, 4, uint32_t, OP_XOR)
ACP_ATOMIC(acp_xor8, 8, uint64_t, OP_XOR)
ACP_ATOMIC(acp_or4, 4, uint32_t, OP_OR)
ACP_ATOMIC(acp_or8, 8, uint64_t, OP_OR)
ACP_ATOMIC(acp_and4, 4, uint32_t, OP_AND)
ACP_ATOMIC(acp_and8, 8, uint64_t, OP_AND)
#undef ACP_ATOMIC

LM_ACP_API acp_handle_t acp_cas4(acp_ga_t dst, acp_ga_t src, uint32_t oldval, uint32_t newval, acp_handle_t order)
{
    return atomic("acp_cas4", dst, src, 4, OP_CAS, newval, oldval, order);
}

LM_ACP_API acp_handle_t acp_cas8(acp_ga_t dst, acp_ga_t src, uint64_t oldval, uint64_t newval, acp_handle_t order)
{
    return atomic("acp_cas8", dst, src, 8, OP_CAS, newval, oldval, order);
}
