/* ACP global memory access: acp_copy, the atomics, acp_complete and
 * acp_inquire.
 *
 * Each GMA goes through the one-sided engine: memory this process can
 * load and store (its own, and the starter memory of the node's processes,
 * mapped from the node's ACP area) directly, other processes' registered
 * memory on this node with single copies, both complete when the call
 * returns; memory on another host through its owner (acp_serve.c), complete
 * once the owner's answer is in (acp_complete). A copy between two other
 * processes (neither address is the caller's) goes through a bounded
 * buffer of the caller's, a chunk at a time. An order handle is honoured
 * by completing everything issued before the new GMA starts, which keeps
 * completion in issue order.
 *
 * Atomics: on starter memory, which every process that reaches it maps,
 * they are CPU atomics; on registered memory, which others reach with
 * single copies, every atomic (the owner's own included) reads, applies
 * and writes under the owner's atomic lock in its control block, so that
 * atomics are atomic with respect to each other whoever issues them. */
#include "acp/acp_internal.h"
#include "util/lm_mem.h"
#include "util/lm_state.h"
#include "pt2pt/pt2pt.h"
#include <sched.h>
#include <string.h>

#define BOUNCE_CHUNK (64u << 10)

/* ---- handles ---- */

/* ACP_HANDLE_NULL and a handle never issued name no GMA (acp_complete and
 * acp_inquire return at once for them, as documented). */
static int names_no_gma(acp_handle_t handle)
{
    return handle == (acp_handle_t)ACP_HANDLE_NULL ||
           (handle != (acp_handle_t)ACP_HANDLE_ALL && handle != (acp_handle_t)ACP_HANDLE_CONT &&
            (handle < 0 || handle > lm_acp.issued));
}

/* Completing a GMA completes the ones before it: everything in flight is
 * flushed (a handle already complete finds nothing to wait for). */
LM_ACP_API void acp_complete(acp_handle_t handle)
{
    if (!lm_acp_ready("acp_complete") || names_no_gma(handle)) return;
    /* failures were said by remote_done, naming the call */
    (void)lm_osc_flush(lm_acp.ch, -1);
}

/* Also the call a process that waits for data by polling its memory makes
 * in its loop: it serves the requests of other hosts' processes. */
LM_ACP_API int acp_inquire(acp_handle_t handle)
{
    if (!lm_acp_ready("acp_inquire")) return 0;
    lm_progress();
    return !names_no_gma(handle) && lm_osc_pending(lm_acp.ch, -1) > 0;
}

/* ---- GMAs carried out by an owner on another host ---- */

/* What a failed remote GMA says when its answer comes: the call and the
 * owner travel in the done argument. */
static void remote_done(void *arg, int err)
{
    if (err == MPI_SUCCESS) return;
    uintptr_t v = (uintptr_t)arg;
    lm_acp_error((v & 7) == LM_ACP_ATOMIC ? "an ACP atomic" : "acp_copy",
                 "rank %d refused it: the registration is gone or too small (found there)", (int)(v >> 3));
}

static int remote(const lm_acp_place *p, lm_acp_call_arg *a, const void *data, size_t data_len, void *out,
                  size_t out_len)
{
    a->entry = (uint32_t)p->entry;
    a->gen = p->gen;
    a->off += p->off;
    void *note = (void *)((uintptr_t)p->rank << 3 | a->what);
    return lm_osc_call(lm_acp.ch, &p->target, LM_ACP_CALL, a, sizeof *a, data, data_len, out, out_len, remote_done,
                       note);
}

/* A GMA may start once its order handle is complete: 1, or 0 for a handle
 * that was never issued. ACP_HANDLE_CONT waits like ACP_HANDLE_ALL, which
 * the ACP documentation allows. */
static int ordered(const char *fn, acp_handle_t order)
{
    if (order == (acp_handle_t)ACP_HANDLE_NULL) return 1;
    if (names_no_gma(order)) {
        lm_acp_error(fn, "order handle %lld was never issued (the last one issued is %lld)", (long long)order,
                     (long long)lm_acp.issued);
        return 0;
    }
    acp_complete(order);
    return 1;
}

/* ---- copies ---- */

/* size bytes from src to off bytes into dst; on another host src may be
 * reused at once (the request carries a copy) */
static int put_from(const lm_acp_place *dst, uint64_t off, const void *src, size_t size)
{
    if (dst->here) {
        memmove(dst->here + off, src, size);
        return MPI_SUCCESS;
    }
    if (dst->target.reach == LM_OSC_MSG) {
        lm_acp_call_arg a = {.what = LM_ACP_PUT, .off = off, .len = size};
        return remote(dst, &a, src, size, NULL, 0);
    }
    return lm_osc_put(lm_acp.ch, &dst->target, off, size, 1, (int64_t)size, src, NULL, NULL);
}

/* size bytes from off bytes into src to dst; from another host dst is
 * filled when the answer comes (a flush) */
static int get_into(void *dst, const lm_acp_place *src, uint64_t off, size_t size)
{
    if (src->here) {
        memmove(dst, src->here + off, size);
        return MPI_SUCCESS;
    }
    if (src->target.reach == LM_OSC_MSG) {
        lm_acp_call_arg a = {.what = LM_ACP_GET, .off = off, .len = size};
        return remote(src, &a, NULL, 0, dst, size);
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
        /* from another host the chunk is here once the answer is */
        if (rc == MPI_SUCCESS && src->target.reach == LM_OSC_MSG) rc = lm_osc_flush(lm_acp.ch, src->rank);
        if (rc == MPI_SUCCESS) rc = put_from(dst, done, buf, n);
    }
    lm_free(LM_MEM_RMA, buf);
    return rc;
}

LM_ACP_API acp_handle_t acp_copy(acp_ga_t dst, acp_ga_t src, size_t size, acp_handle_t order)
{
    static const char fn[] = "acp_copy";
    lm_acp_place d, s;
    if (!lm_acp_ready(fn) || !ordered(fn, order) || !lm_acp_find(fn, "destination", dst, size, 1, &d) ||
        !lm_acp_find(fn, "source", src, size, 1, &s))
        return ACP_HANDLE_NULL;
    int rc = MPI_SUCCESS;
    if (size == 8 && s.here && d.here) memcpy(d.here, s.here, 8); /* a word: in line */
    else if (size == 0) rc = MPI_SUCCESS;
    else if (s.here) rc = put_from(&d, 0, s.here, size);
    else if (d.here) rc = get_into(d.here, &s, 0, size);
    else rc = relay(&d, &s, size);
    if (rc != MPI_SUCCESS) {
        lm_acp_error(fn, "copying %zu bytes from rank %d to rank %d failed (%s)", size, s.rank, d.rank,
                     rc == MPI_ERR_NO_MEM ? "out of memory" : "refused by the kernel or by the owner");
        return ACP_HANDLE_NULL;
    }
    return ++lm_acp.issued;
}

/* ---- atomics ---- */

static uint64_t apply(int op, uint64_t old, uint64_t value, uint64_t compare, uint64_t mask)
{
    switch (op) {
    case LM_ACP_CAS: return old == compare ? value : old;
    case LM_ACP_SWAP: return value;
    case LM_ACP_ADD: return (old + value) & mask;
    case LM_ACP_XOR: return old ^ value;
    case LM_ACP_OR: return old | value;
    case LM_ACP_AND: return old & value;
    }
    return old;
}

/* A CPU atomic on memory mapped here; the value it held before. */
static uint64_t cpu_atomic(char *at, int width, int op, uint64_t value, uint64_t compare)
{
    if (width == 4) {
        uint32_t *p = (uint32_t *)(void *)at, v = (uint32_t)value, old = 0;
        switch (op) {
        case LM_ACP_CAS: lm_osc_cas32(p, (uint32_t)compare, v, &old); return old;
        case LM_ACP_SWAP: return lm_osc_swap32(p, v);
        case LM_ACP_ADD: return lm_osc_fetch_add32(p, v);
        case LM_ACP_XOR: return lm_osc_fetch_xor32(p, v);
        case LM_ACP_OR: return lm_osc_fetch_or32(p, v);
        case LM_ACP_AND: return lm_osc_fetch_and32(p, v);
        }
        return old;
    }
    uint64_t *p = (uint64_t *)(void *)at, old = 0;
    switch (op) {
    case LM_ACP_CAS: lm_osc_cas64(p, compare, value, &old); return old;
    case LM_ACP_SWAP: return lm_osc_swap64(p, value);
    case LM_ACP_ADD: return lm_osc_fetch_add64(p, value);
    case LM_ACP_XOR: return lm_osc_fetch_xor64(p, value);
    case LM_ACP_OR: return lm_osc_fetch_or64(p, value);
    case LM_ACP_AND: return lm_osc_fetch_and64(p, value);
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

/* Read, apply and write back under the owner's atomic lock, at a place
 * this process reaches by loads and stores or by single copies. */
static int locked_atomic(const lm_acp_place *at, int width, int op, uint64_t value, uint64_t compare, uint64_t *old)
{
    uint64_t mask = width == 4 ? UINT32_MAX : UINT64_MAX, before = 0;
    lock_owner(at->owner);
    int rc = get_into(&before, at, 0, (size_t)width);
    uint64_t after = apply(op, before, value & mask, compare & mask, mask);
    if (rc == MPI_SUCCESS && after != before) rc = put_from(at, 0, &after, (size_t)width);
    unlock_owner(at->owner);
    *old = before;
    return rc;
}

uint64_t lm_acp_atomic_here(char *at, int width, int op, uint64_t value, uint64_t compare, lm_acp_ctl *lock)
{
    if (!lock) return cpu_atomic(at, width, op, value, compare);
    lm_acp_place p = {.here = at, .owner = lock};
    uint64_t old = 0;
    locked_atomic(&p, width, op, value, compare, &old);
    return old;
}

static acp_handle_t atomic(const char *fn, acp_ga_t dst, acp_ga_t src, int width, int op, uint64_t value,
                           uint64_t compare, acp_handle_t order)
{
    lm_acp_place d, s;
    if (!lm_acp_ready(fn) || !ordered(fn, order) || !lm_acp_find(fn, "result", dst, (size_t)width, (size_t)width, &d))
        return ACP_HANDLE_NULL;
    if (d.rank != lm_acp.comm->rank || !d.here) {
        lm_acp_error(fn, "the result address must be this process's memory (rank %d), not rank %d's", lm_acp.comm->rank,
                     d.rank);
        return ACP_HANDLE_NULL;
    }
    if (!lm_acp_find(fn, "target", src, (size_t)width, (size_t)width, &s)) return ACP_HANDLE_NULL;
    uint64_t old = 0;
    if (s.target.reach == LM_OSC_MSG && !s.here) {
        /* on another host: the owner writes the old value into the result
         * when its answer comes */
        lm_acp_call_arg a = {
            .what = LM_ACP_ATOMIC, .width = (uint32_t)width, .op = (uint32_t)op, .value = value, .compare = compare};
        if (remote(&s, &a, NULL, 0, d.here, (size_t)width) != MPI_SUCCESS) {
            lm_acp_error(fn, "cannot send the atomic to rank %d", s.rank);
            return ACP_HANDLE_NULL;
        }
        return ++lm_acp.issued;
    }
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
ACP_ATOMIC(acp_swap4, 4, uint32_t, LM_ACP_SWAP)
ACP_ATOMIC(acp_swap8, 8, uint64_t, LM_ACP_SWAP)
ACP_ATOMIC(acp_add4, 4, uint32_t, LM_ACP_ADD)
ACP_ATOMIC(acp_add8, 8, uint64_t, LM_ACP_ADD)
ACP_ATOMIC(acp_xor4, 4, uint32_t, LM_ACP_XOR)
ACP_ATOMIC(acp_xor8, 8, uint64_t, LM_ACP_XOR)
ACP_ATOMIC(acp_or4, 4, uint32_t, LM_ACP_OR)
ACP_ATOMIC(acp_or8, 8, uint64_t, LM_ACP_OR)
ACP_ATOMIC(acp_and4, 4, uint32_t, LM_ACP_AND)
ACP_ATOMIC(acp_and8, 8, uint64_t, LM_ACP_AND)
#undef ACP_ATOMIC

LM_ACP_API acp_handle_t acp_cas4(acp_ga_t dst, acp_ga_t src, uint32_t oldval, uint32_t newval, acp_handle_t order)
{
    return atomic("acp_cas4", dst, src, 4, LM_ACP_CAS, newval, oldval, order);
}

LM_ACP_API acp_handle_t acp_cas8(acp_ga_t dst, acp_ga_t src, uint64_t oldval, uint64_t newval, acp_handle_t order)
{
    return atomic("acp_cas8", dst, src, 8, LM_ACP_CAS, newval, oldval, order);
}
