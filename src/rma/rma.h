/* One-sided communication inside src/rma: what the communication calls
 * (rma_comm.c, rma_acc.c) and the synchronization calls (rma_sync.c)
 * share. */
#ifndef LM_RMA_H
#define LM_RMA_H
#include "rma/win.h"
#include "rma/win_segment.h"
#include "osc/osc.h"
#include "transport/transport.h"

/* Start of the one-sided calls: the engine and the call handlers. */
int lm_rma_calls_init(void);

/* The helpers below are inline: an 8-byte put runs through all of them. */

/* May this process access rank now (an access epoch that covers it)?
 * The fence and lock_all epochs cover every rank; otherwise a lock held on
 * rank or a start group that has it (lm_rma_held_access). */
int lm_rma_held_access(const lm_win *w, int rank);
static inline int lm_rma_may_access(const lm_win *w, int rank)
{
    return w->fence_open || w->lockall || lm_rma_held_access(w, rank);
}

/* How to reach rank's part: the target descriptor, its displacement unit
 * and size. For a dynamic window the part is the whole address space
 * (displacements are addresses). */
static inline void lm_rma_target(const lm_win *w, int rank, lm_osc_target *t, int64_t *unit, int64_t *size)
{
    const lm_win_entry *e = &w->shared->table[rank];
    t->rank = rank;
    t->world = e->world;
    *unit = e->disp_unit;
    *size = e->size;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        *unit = 1;
        *size = INT64_MAX;
    }
    if (e->in_segment) {
        t->reach = LM_OSC_DIRECT;
        t->mapped = w->shared->parts + e->offset;
        t->addr = 0;
    } else if (rank == w->comm->rank) {
        t->reach = LM_OSC_DIRECT;
        t->mapped = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? NULL : (char *)w->base;
        t->addr = 0;
    } else if (!e->remote && lm_transport_same_space(e->world)) {
        /* a rank of this address space (mpirun --address-space=shared): its
         * memory is here, at its own address */
        t->reach = LM_OSC_DIRECT;
        t->mapped = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? NULL : (char *)(uintptr_t)e->addr;
        t->addr = 0;
    } else {
        /* a rank on another node: the network's RMA where its part is
         * exposed to it, its owner carrying the operation out otherwise */
        t->reach = e->remote ? (e->net ? LM_OSC_NET : LM_OSC_MSG) : (lm_osc_reach)w->private_reach;
        t->mapped = NULL;
        t->addr = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : e->addr;
        t->net_addr = e->net_addr;
        t->rkey = e->rkey;
    }
}

/* Is [lo, hi) (bytes from the start of rank's part) inside it? For a
 * dynamic window: inside one region rank has attached
 * (lm_rma_in_attached). */
int lm_rma_in_attached(const lm_win *w, int rank, int64_t lo, int64_t hi);
static inline int lm_rma_in_range(const lm_win *w, int rank, int64_t lo, int64_t hi)
{
    if (lo > hi) return 0;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) return lm_rma_in_attached(w, rank, lo, hi);
    return lo >= 0 && hi <= w->shared->table[rank].size;
}

/* The common case of the communication calls, before their general
 * checks: bytes at displacement disp of rank's part, when the part lies
 * in node-shared memory (MPI_Win_allocate, MPI_Win_allocate_shared), an
 * access epoch covers rank and the bytes lie inside the part; NULL
 * otherwise (the call then takes its general path, which reports what is
 * wrong, if anything). */
static inline char *lm_rma_direct_bytes(const lm_win *w, int rank, MPI_Aint disp, int64_t bytes)
{
    if ((unsigned)rank >= (unsigned)w->comm->size || w->flavor == MPI_WIN_FLAVOR_DYNAMIC || disp < 0 || bytes <= 0)
        return NULL;
    const lm_win_entry *e = &w->shared->table[rank];
    int64_t lo;
    if (!e->in_segment || !lm_rma_may_access(w, rank) || __builtin_mul_overflow((int64_t)disp, e->disp_unit, &lo) ||
        lo > e->size - bytes)
        return NULL;
    return w->shared->parts + e->offset + lo;
}

/* Does this process hold an exclusive lock on rank (nobody else may
 * then touch rank's part, so its accumulates need no accumulate lock)? */
int lm_rma_holds_exclusive(const lm_win *w, int rank);

/* The accumulate lock of rank's part (held for the duration of one
 * accumulate-family operation carried out on DIRECT or CMA memory). */
void lm_rma_acc_lock(const lm_win *w, int rank);
void lm_rma_acc_unlock(const lm_win *w, int rank);

/* Wait step of every spin (progress, yield after a while). */
void lm_rma_wait(unsigned *idle);

/* The calls carried out by a target for MSG reach: the accumulate family
 * (rma_acc.c) and, for ranks on other nodes, the synchronization steps
 * on the target's own control block (rma_sync.c). */
enum { LM_RMA_CALL_ACC = 0, LM_RMA_CALL_SYNC = 1 };
int lm_rma_call_sync(void *owner, int origin, const void *arg, size_t arg_len, const void *data, size_t data_len,
                     void *out, size_t out_len);

#endif
