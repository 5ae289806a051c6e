/* Synchronization: fence, passive-target locks (MCS-RW-RP on each rank's
 * lock word in the node segment), lock_all taken once per node, flushes,
 * MPI_Win_sync, and post/start/complete/wait; for ranks on other nodes,
 * the same steps carried out by the target on its own control block.
 *
 * Data moved to DIRECT and CMA targets is in place when the call that
 * moved it returns; MSG operations are complete when their replies are
 * in (lm_osc_flush). So closing an epoch is: flush what went through MSG,
 * then release (a lock, a complete counter) with a sequentially
 * consistent atomic that orders every store before it. */
#include "rma/rma.h"
#include "coll/coll_basic.h"
#include "obj/group.h"
#include "pt2pt/pt2pt.h"
#include "transport/transport.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "util/lm_state.h"
#include "api/impl_gen.h"
#include <sched.h>
#include <string.h>

void lm_rma_wait(unsigned *idle) { lm_progress_wait(idle); }

/* ---- window set-up ---- */

int lm_win_rma_setup(lm_win *w)
{
    lm_comm *c = w->comm;
    int private_memory = w->flavor == MPI_WIN_FLAVOR_CREATE || w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
    /* memory the program gave is reached with single copies when every
     * process may copy from every other; otherwise its owner carries the
     * operations out (the same choice everywhere) */
    int cma = 1;
    for (int r = 0; private_memory && r < c->size && cma; r++)
        if (r != c->rank && !lm_win_remote(w, r) && !lm_transport_single_copy(lm_comm_world_rank(c, r))) cma = 0;
    int rc = private_memory ? lm_coll_allreduce(&cma, 1, sizeof cma, lm_win_and_int, NULL, c) : MPI_SUCCESS;
    if (rc) return rc;
    w->private_reach = cma ? LM_OSC_CMA : LM_OSC_MSG;
    w->mcs = (lm_mcs_space){w->shared->qnodes, lm_rma_wait, lm_oversubscribed() ? 0 : LM_MCS_TIGHT_SPINS};
    /* ranks on other nodes reach this process's memory and control block
     * through its owner in any flavor */
    return lm_osc_channel_new(c, w, (private_memory && !cma) || w->spread, &w->ch);
}

void lm_win_rma_free(lm_win *w)
{
    lm_osc_channel_free(w->ch);
    w->ch = NULL;
    lm_free(LM_MEM_RMA, w->held);
    w->held = NULL;
    if (w->start_group) lm_group_release(w->start_group);
    if (w->post_group) lm_group_release(w->post_group);
    w->start_group = w->post_group = NULL;
}

/* ---- ranks on other nodes ----
 * Their lock words, post slots and complete counters lie in their own
 * node's segment, which no process here maps: the owner applies each step
 * to its own control block (lm_rma_call_sync, a MSG call, carried out in
 * its progress) with the atomics the ranks of its node use. A lock is
 * tried there, never waited for: a shared one is granted while no writer
 * is active or interested, an exclusive one while the lock is free and no
 * writer is queued; refused, the origin takes a wait step and asks again.
 * The target node's own ranks keep their queue: a process of another node
 * can be overtaken by them, as it does not queue, but never blocks them.
 * Post slots are tried the same way; a complete is one fetch-and-add. */
enum {
    SYNC_TRY_SHARED = 1,
    SYNC_TRY_EXCLUSIVE,
    SYNC_UNLOCK_SHARED,
    SYNC_UNLOCK_EXCLUSIVE,
    SYNC_POST,     /* a: the poster's rank + 1 */
    SYNC_COMPLETE, /* one more complete */
    SYNC_ATTACHED  /* [a, b) inside what a dynamic window has attached */
};

typedef struct sync_arg {
    uint32_t op, pad;
    uint64_t a, b;
} sync_arg;

/* Put the poster into a free post slot: 1 when there was one. */
static int post_into(uint32_t *slots, uint32_t poster)
{
    for (int k = 0; k < LM_WIN_POST_SLOTS; k++)
        if (!__atomic_load_n(&slots[k], __ATOMIC_RELAXED) && lm_osc_cas32(&slots[k], 0, poster, NULL)) return 1;
    return 0;
}

int lm_rma_call_sync(void *owner, int origin, const void *arg, size_t arg_len, const void *data, size_t data_len,
                     void *out, size_t out_len)
{
    (void)origin;
    (void)data;
    (void)data_len;
    lm_win *w = owner;
    sync_arg a;
    if (arg_len != sizeof a || out_len != sizeof(uint32_t)) return MPI_ERR_INTERN;
    memcpy(&a, arg, sizeof a);
    lm_win_ctl *ctl = lm_win_ctl_of(w, w->comm->rank);
    lm_mcs_rwlock *l = &ctl->lock;
    uint32_t yes = 1;
    switch (a.op) {
    case SYNC_TRY_SHARED: {
        uint64_t v = __atomic_load_n(&l->state, __ATOMIC_RELAXED);
        yes = !(v & (LM_MCS_WAFLAG | LM_MCS_WIFLAG)) && lm_osc_cas64(&l->state, v, v + LM_MCS_RC_INCR, NULL);
        if (yes) lm_mcs_count.acquisitions++;
        break;
    }
    case SYNC_TRY_EXCLUSIVE: yes = (uint32_t)lm_mcs_write_try_once(l); break;
    case SYNC_UNLOCK_SHARED: lm_mcs_read_unlock(&w->mcs, l); break;
    case SYNC_UNLOCK_EXCLUSIVE: lm_mcs_write_unlock_direct(&w->mcs, l); break;
    case SYNC_POST: yes = (uint32_t)post_into(ctl->posts, (uint32_t)a.a); break;
    case SYNC_COMPLETE: lm_osc_fetch_add64(&ctl->completes, 1); break;
    case SYNC_ATTACHED: yes = (uint32_t)lm_rma_in_attached(w, w->comm->rank, (int64_t)a.a, (int64_t)a.b); break;
    default: return MPI_ERR_INTERN;
    }
    memcpy(out, &yes, sizeof yes);
    return MPI_SUCCESS;
}

typedef struct sync_wait {
    int done, err;
} sync_wait;

static void sync_done(void *arg, int err)
{
    sync_wait *x = arg;
    x->err = err;
    x->done = 1;
}

/* One step at rank (on another node), waited for; *yes: its answer. */
static int sync_call(const lm_win *w, int rank, uint32_t op, uint64_t a, uint64_t b, uint32_t *yes)
{
    lm_osc_target t = {.reach = LM_OSC_MSG, .rank = rank, .world = w->shared->table[rank].world};
    sync_arg arg = {.op = op, .a = a, .b = b};
    sync_wait x = {0, MPI_SUCCESS};
    int rc = lm_osc_call(w->ch, &t, LM_RMA_CALL_SYNC, &arg, sizeof arg, NULL, 0, yes, sizeof *yes, sync_done, &x);
    unsigned idle = 0;
    while (!rc && !x.done) lm_progress_wait(&idle);
    return rc ? rc : x.err;
}

/* A step tried until rank grants it (a lock, a post slot). */
static int sync_until_granted(const lm_win *w, int rank, uint32_t op, uint64_t a)
{
    unsigned idle = 0;
    for (;;) {
        uint32_t yes = 0;
        int rc = sync_call(w, rank, op, a, 0, &yes);
        if (rc || yes) return rc;
        lm_rma_wait(&idle);
    }
}

/* ---- targets ---- */

int lm_rma_in_attached(const lm_win *w, int rank, int64_t lo, int64_t hi)
{
    if (lm_win_remote(w, rank)) {
        /* what is attached is known to its owner only: ask it */
        uint32_t inside = 0;
        return sync_call(w, rank, SYNC_ATTACHED, (uint64_t)lo, (uint64_t)hi, &inside) == MPI_SUCCESS && inside;
    }
    /* the owner's attached regions, read consistently (seqlock) */
    const lm_win_ctl *ctl = lm_win_ctl_of(w, rank);
    for (;;) {
        uint64_t seq = __atomic_load_n(&ctl->dyn_seq, __ATOMIC_ACQUIRE);
        if (seq & 1) continue;
        int inside = 0;
        uint32_t n = __atomic_load_n(&ctl->dyn_count, __ATOMIC_RELAXED);
        for (uint32_t i = 0; i < n && i < LM_WIN_DYN_REGIONS && !inside; i++) {
            uint64_t b = ctl->dyn[i].base, e = b + ctl->dyn[i].size;
            inside = (uint64_t)lo >= b && (uint64_t)hi <= e;
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&ctl->dyn_seq, __ATOMIC_RELAXED) == seq) return inside;
    }
}

void lm_rma_acc_lock(const lm_win *w, int rank)
{
    uint32_t *l = &lm_win_ctl_of(w, rank)->acc_lock;
    unsigned idle = 0;
    for (;;) {
        if (!__atomic_load_n(l, __ATOMIC_RELAXED) && !lm_osc_swap32(l, 1)) return;
        /* the holder only computes and copies: spin without serving
         * requests, which could need this very lock */
        if (++idle > 64) sched_yield();
    }
}

void lm_rma_acc_unlock(const lm_win *w, int rank)
{
    __atomic_store_n(&lm_win_ctl_of(w, rank)->acc_lock, 0, __ATOMIC_RELEASE);
}

static int in_start_group(const lm_win *w, int rank)
{
    return w->start_group && lm_group_rank_of(w->start_group, lm_comm_world_rank(w->comm, rank)) >= 0;
}

int lm_rma_held_access(const lm_win *w, int rank)
{
    for (int i = 0; i < w->nheld; i++)
        if (w->held[i].rank == rank) return 1;
    return in_start_group(w, rank);
}

static lm_win_held *held_lock(lm_win *w, int rank)
{
    for (int i = 0; i < w->nheld; i++)
        if (w->held[i].rank == rank) return &w->held[i];
    return NULL;
}

/* Takes h off the held list (the last entry moves into its place). */
static inline void drop_held(lm_win *w, lm_win_held *h)
{
    lm_win_held *last = &w->held[--w->nheld];
    if (h != last) *h = *last;
}

int lm_rma_holds_exclusive(const lm_win *w, int rank)
{
    for (int i = 0; i < w->nheld; i++)
        if (w->held[i].rank == rank) return w->held[i].type == MPI_LOCK_EXCLUSIVE;
    return 0;
}

static inline lm_win *window(MPI_Win win, const char *fname, int *rc)
{
    lm_win *w = lm_win_get(win);
    *rc = w ? MPI_SUCCESS : lm_err_win(win, MPI_ERR_WIN, fname, "invalid window");
    return w;
}

static int check_assert(MPI_Win win, int assert, int allowed, const char *fname)
{
    if (assert & ~allowed)
        return lm_err_win(win, MPI_ERR_ASSERT, fname, "assert 0x%x has bits this call does not take", assert);
    return MPI_SUCCESS;
}

/* ---- fence ---- */

int impl_MPI_Win_fence(int assert, MPI_Win win)
{
    int rc;
    lm_win *w = window(win, "MPI_Win_fence", &rc);
    if (!w) return rc;
    rc = check_assert(win, assert, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED,
                      "MPI_Win_fence");
    if (rc) return rc;
    if (w->lockall || w->nheld || w->start_group || w->post_group)
        return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_fence",
                          "a lock, lock_all, start or post epoch is open on this window");
    /* our operations are done, then everyone's: afterwards every
     * operation of the epoch is in place everywhere */
    rc = lm_osc_flush(w->ch, -1);
    int rc2 = lm_coll_barrier(w->comm);
    if (rc2) return lm_err_win(win, rc2, "MPI_Win_fence", "communication failed");
    w->fence_open = !(assert &MPI_MODE_NOSUCCEED);
    if (rc) return lm_err_win(win, rc, "MPI_Win_fence", "an operation of the epoch failed at its target");
    return MPI_SUCCESS;
}

/* ---- passive target ---- */

/* MPI_Win_lock and MPI_Win_unlock check a valid call in one condition and
 * leave the error messages to the refusals below, kept out of line: the
 * lock and unlock of a valid call carry none of their weight. */

/* Why MPI_Win_lock refuses its arguments (MPI_SUCCESS for MPI_PROC_NULL,
 * which locks nothing). */
static __attribute__((noinline)) int lock_refused(int lock_type, int rank, int assert, MPI_Win win)
{
    int rc;
    lm_win *w = window(win, "MPI_Win_lock", &rc);
    if (!w) return rc;
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return lm_err_win(win, MPI_ERR_LOCKTYPE, "MPI_Win_lock",
                          "lock_type %d is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE", lock_type);
    if ((rc = check_assert(win, assert, MPI_MODE_NOCHECK, "MPI_Win_lock"))) return rc;
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (rank < 0 || rank >= w->comm->size)
        return lm_err_win(win, MPI_ERR_RANK, "MPI_Win_lock", "rank %d is not in the window's group of %d", rank,
                          w->comm->size);
    if (held_lock(w, rank))
        return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_lock", "this process already holds a lock on rank %d", rank);
    if (w->lockall || w->start_group)
        return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_lock", "a lock_all or start epoch is open on this window");
    return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_lock",
                      "this process holds %d exclusive locks on this window, the most it can hold at once",
                      LM_WIN_READER_QNODE);
}

/* MPI_Win_lock with a full held list: grow it, then lock. */
static __attribute__((noinline)) int lock_growing(int lock_type, int rank, int assert, MPI_Win win, lm_win *w)
{
    int cap = w->capheld ? 2 * w->capheld : 4;
    lm_win_held *p = lm_realloc(LM_MEM_RMA, w->held, (size_t)cap * sizeof *p);
    if (!p) return lm_err_win(w->obj.handle, MPI_ERR_NO_MEM, "MPI_Win_lock", "out of memory");
    w->held = p;
    w->capheld = cap;
    return impl_MPI_Win_lock(lock_type, rank, assert, win);
}

/* The waits, out of line so that the uncontended cases keep nothing
 * around a call: an exclusive lock not free at the first try (h in the
 * held list with its queue node), a shared one that found a writer. */
static __attribute__((noinline)) int lock_exclusive(lm_win *w, lm_win_held *h)
{
    lm_mcs_rwlock *l = &lm_win_ctl_of(w, h->rank)->lock;
    h->unqueued = (uint8_t)lm_mcs_write_trylock(&w->mcs, l);
    if (h->unqueued) return MPI_SUCCESS;
    /* a queue node of its own while it holds the lock; one is free, as
     * lock_on admits fewer exclusive locks than there are nodes */
    h->qnode = (int8_t)__builtin_ctz(~w->qnodes_used & ((1u << LM_WIN_READER_QNODE) - 1));
    w->qnodes_used |= 1u << h->qnode;
    lm_mcs_write_lock(&w->mcs, l, lm_win_qnode_id(w->comm->rank, h->qnode));
    return MPI_SUCCESS;
}

static __attribute__((noinline)) int lock_shared_waiting(lm_win *w, lm_mcs_rwlock *l)
{
    /* a reader's queue node serves only while it waits */
    lm_mcs_read_wait(&w->mcs, l, lm_win_qnode_id(w->comm->rank, LM_WIN_READER_QNODE));
    return MPI_SUCCESS;
}

/* A lock on a rank of another node (h in the held list, without a queue
 * node): tried at its owner until granted. */
static __attribute__((noinline)) int lock_remote(lm_win *w, lm_win_held *h, MPI_Win win)
{
    int rank = h->rank;
    int rc = sync_until_granted(w, rank, h->type == MPI_LOCK_SHARED ? SYNC_TRY_SHARED : SYNC_TRY_EXCLUSIVE, 0);
    if (!rc) return MPI_SUCCESS;
    drop_held(w, h);
    return lm_err_win(win, rc, "MPI_Win_lock", "cannot reach rank %d for its lock", rank);
}

/* May this process add a lock on rank (type as given, nocheck or not)?
 * Not a second one on the same rank, nor more exclusive locks than
 * there are queue nodes to wait with: an exclusive lock counts even when
 * taken without queueing, so that the limit does not depend on timing. */
static inline int lock_admissible(const lm_win *w, int rank, int lock_type, int nocheck)
{
    int exclusive = 0;
    for (int i = 0; i < w->nheld; i++) {
        if (w->held[i].rank == rank) return 0;
        exclusive += w->held[i].type == MPI_LOCK_EXCLUSIVE && !w->held[i].nocheck;
    }
    return lock_type == MPI_LOCK_SHARED ||
           (lock_type == MPI_LOCK_EXCLUSIVE && (nocheck || exclusive < LM_WIN_READER_QNODE));
}

static inline int lock_on(lm_win *w, int lock_type, int rank, int assert, MPI_Win win)
{
    int nocheck = assert == MPI_MODE_NOCHECK;
    if (!w || (assert && !nocheck) || (unsigned)rank >= (unsigned)w->comm->size || w->lockall || w->start_group ||
        !lock_admissible(w, rank, lock_type, nocheck))
        return lock_refused(lock_type, rank, assert, win);
    if (w->nheld == w->capheld) return lock_growing(lock_type, rank, assert, win, w);
    if (w->fence_open) w->fence_open = 0;
    lm_win_held *h = &w->held[w->nheld++];
    if (nocheck || lm_win_remote(w, rank)) {
        *h = (lm_win_held){.rank = rank, .type = lock_type, .nocheck = (uint8_t)nocheck, .qnode = -1};
        return nocheck ? MPI_SUCCESS : lock_remote(w, h, win);
    }
    /* the first atomic before the bookkeeping: a locked instruction waits
     * for the stores before it to drain */
    lm_mcs_rwlock *l = &lm_win_ctl_of(w, rank)->lock;
    if (lock_type == MPI_LOCK_SHARED) {
        int granted = lm_mcs_read_enter(l);
        *h = (lm_win_held){.rank = rank, .type = lock_type, .qnode = -1};
        return granted ? MPI_SUCCESS : lock_shared_waiting(w, l);
    }
    int unqueued = lm_mcs_write_try_once(l);
    *h = (lm_win_held){.rank = rank, .type = lock_type, .unqueued = (uint8_t)unqueued, .qnode = -1};
    return unqueued ? MPI_SUCCESS : lock_exclusive(w, h);
}

static __attribute__((noinline)) int lock_looking_up(int lock_type, int rank, int assert, MPI_Win win)
{
    return lock_on(lm_win_get(win), lock_type, rank, assert, win);
}

/* The window of the last call (the memo) in line; any other is looked up
 * out of line, so that the common case makes no call but the atomic. */
int impl_MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    lm_win *w = lm_object_memo(win, LM_KIND_WIN);
    return w ? lock_on(w, lock_type, rank, assert, win) : lock_looking_up(lock_type, rank, assert, win);
}

/* Why MPI_Win_unlock refuses its arguments (MPI_SUCCESS for MPI_PROC_NULL). */
static __attribute__((noinline)) int unlock_refused(int rank, MPI_Win win)
{
    int rc;
    lm_win *w = window(win, "MPI_Win_unlock", &rc);
    if (!w) return rc;
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (rank < 0 || rank >= w->comm->size)
        return lm_err_win(win, MPI_ERR_RANK, "MPI_Win_unlock", "rank %d is not in the window's group of %d", rank,
                          w->comm->size);
    return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_unlock", "this process holds no lock on rank %d", rank);
}

/* Every unlock but the uncontended ones unlock_on does in line: a flush
 * with work, MPI_MODE_NOCHECK, a writer that queued. */
static __attribute__((noinline)) int unlock_releasing(lm_win *w, lm_win_held *h, int rank, MPI_Win win)
{
    int rc = lm_osc_flush(w->ch, rank);
    if (!h->nocheck && lm_win_remote(w, rank)) {
        uint32_t yes;
        int rc2 = sync_call(w, rank, h->type == MPI_LOCK_SHARED ? SYNC_UNLOCK_SHARED : SYNC_UNLOCK_EXCLUSIVE, 0, 0,
                            &yes);
        if (!rc) rc = rc2;
    } else if (!h->nocheck) {
        lm_mcs_rwlock *l = &lm_win_ctl_of(w, rank)->lock;
        if (h->type == MPI_LOCK_SHARED) {
            lm_mcs_read_unlock(&w->mcs, l);
        } else {
            if (h->unqueued) {
                lm_mcs_write_unlock_direct(&w->mcs, l);
            } else {
                lm_mcs_write_unlock(&w->mcs, l, lm_win_qnode_id(w->comm->rank, h->qnode));
                w->qnodes_used &= ~(1u << h->qnode);
            }
        }
    }
    drop_held(w, h);
    if (rc) return lm_err_win(win, rc, "MPI_Win_unlock", "an operation of the epoch failed at rank %d", rank);
    return MPI_SUCCESS;
}

static __attribute__((noinline)) int unlock_writer_leaving(lm_win *w, lm_mcs_rwlock *l)
{
    lm_mcs_write_unlock_direct(&w->mcs, l);
    return MPI_SUCCESS;
}

static __attribute__((noinline)) int unlock_handing_over(lm_win *w, lm_mcs_rwlock *l)
{
    lm_mcs_read_handover(&w->mcs, l);
    return MPI_SUCCESS;
}

static inline int unlock_on(lm_win *w, int rank, MPI_Win win)
{
    lm_win_held *h = w && (unsigned)rank < (unsigned)w->comm->size ? held_lock(w, rank) : NULL;
    if (!h) return unlock_refused(rank, win);
    if (h->nocheck || !lm_osc_idle(w->ch) || (h->type != MPI_LOCK_SHARED && !h->unqueued))
        return unlock_releasing(w, h, rank, win);
    /* the uncontended cases in line: one atomic */
    lm_mcs_rwlock *l = &lm_win_ctl_of(w, rank)->lock;
    if (h->type != MPI_LOCK_SHARED) {
        int released = lm_mcs_write_release_once(l);
        drop_held(w, h);
        return released ? MPI_SUCCESS : unlock_writer_leaving(w, l);
    }
    int last_with_writer = lm_mcs_read_leave(l);
    drop_held(w, h);
    return last_with_writer ? unlock_handing_over(w, l) : MPI_SUCCESS;
}

static __attribute__((noinline)) int unlock_looking_up(int rank, MPI_Win win)
{
    return unlock_on(lm_win_get(win), rank, win);
}

int impl_MPI_Win_unlock(int rank, MPI_Win win)
{
    lm_win *w = lm_object_memo(win, LM_KIND_WIN);
    return w ? unlock_on(w, rank, win) : unlock_looking_up(rank, win);
}

/* MPI_Win_lock_all is a shared lock on every rank. The processes of a
 * node take it once for all of them: the first to arrive (the node's
 * leader for this epoch) takes the shared lock of every rank, the others
 * only count themselves in, and the last to leave releases. Each rank's
 * lock word then sees one reader per node, not one per process. The
 * node's word: holders << 2 | state. */
enum { LOCKALL_FREE = 0, LOCKALL_ACQUIRING = 1, LOCKALL_HELD = 2, LOCKALL_RELEASING = 3 };

static void lockall_enter(lm_win *w)
{
    uint64_t *word = &w->shared->header->lockall;
    unsigned idle = 0;
    for (;;) {
        uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
        if ((v & 3) == LOCKALL_HELD) {
            if (lm_osc_cas64(word, v, v + 4, NULL)) return;
            continue;
        }
        if (v == LOCKALL_FREE && lm_osc_cas64(word, 0, LOCKALL_ACQUIRING, NULL)) {
            for (int r = 0; r < w->comm->size; r++)
                if (lm_win_remote(w, r)) (void)sync_until_granted(w, r, SYNC_TRY_SHARED, 0);
                else
                    lm_mcs_read_lock(&w->mcs, &lm_win_ctl_of(w, r)->lock,
                                     lm_win_qnode_id(w->comm->rank, LM_WIN_READER_QNODE));
            __atomic_store_n(word, (uint64_t)4 | LOCKALL_HELD, __ATOMIC_RELEASE);
            return;
        }
        lm_rma_wait(&idle);
    }
}

static void lockall_leave(lm_win *w)
{
    uint64_t *word = &w->shared->header->lockall;
    for (;;) {
        uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
        if ((v >> 2) > 1) {
            if (lm_osc_cas64(word, v, v - 4, NULL)) return;
            continue;
        }
        if (lm_osc_cas64(word, v, LOCKALL_RELEASING, NULL)) {
            uint32_t yes;
            for (int r = 0; r < w->comm->size; r++)
                if (lm_win_remote(w, r)) (void)sync_call(w, r, SYNC_UNLOCK_SHARED, 0, 0, &yes);
                else lm_mcs_read_unlock(&w->mcs, &lm_win_ctl_of(w, r)->lock);
            __atomic_store_n(word, LOCKALL_FREE, __ATOMIC_RELEASE);
            return;
        }
    }
}

/* Why MPI_Win_lock_all refuses its arguments. */
static __attribute__((noinline)) int lock_all_refused(int assert, MPI_Win win)
{
    int rc;
    lm_win *w = window(win, "MPI_Win_lock_all", &rc);
    if (!w) return rc;
    if ((rc = check_assert(win, assert, MPI_MODE_NOCHECK, "MPI_Win_lock_all"))) return rc;
    return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all",
                      "a lock, lock_all or start epoch is already open on this window");
}

/* The entry points of lock_all and unlock_all check nothing but
 * initialization (IMPL_VALIDATES in tools/gen/rules.py): a valid call is
 * recognised in one condition, a refusal explained out of line. */
int impl_MPI_Win_lock_all(int assert, MPI_Win win)
{
    lm_win *w = lm_win_get(win);
    if (!w || (assert & ~MPI_MODE_NOCHECK) || w->lockall || w->nheld || w->start_group)
        return lock_all_refused(assert, win);
    w->fence_open = 0;
    w->lockall_nocheck = !!(assert &MPI_MODE_NOCHECK);
    if (!w->lockall_nocheck) lockall_enter(w);
    w->lockall = 1;
    return MPI_SUCCESS;
}

static __attribute__((noinline)) int unlock_all_refused(MPI_Win win)
{
    int rc;
    lm_win *w = window(win, "MPI_Win_unlock_all", &rc);
    if (!w) return rc;
    return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all", "no lock_all epoch is open");
}

int impl_MPI_Win_unlock_all(MPI_Win win)
{
    lm_win *w = lm_win_get(win);
    if (!w || !w->lockall) return unlock_all_refused(win);
    int rc = lm_osc_flush(w->ch, -1);
    if (!w->lockall_nocheck) lockall_leave(w);
    w->lockall = 0;
    if (rc) return lm_err_win(win, rc, "MPI_Win_unlock_all", "an operation of the epoch failed at its target");
    return MPI_SUCCESS;
}

/* Why a flush refuses its arguments, kept out of line like lock_refused
 * (MPI_SUCCESS for MPI_PROC_NULL inside an epoch). all: every target. */
static __attribute__((noinline)) int flush_refused(MPI_Win win, int rank, int all, const char *fname)
{
    int rc;
    lm_win *w = window(win, fname, &rc);
    if (!w) return rc;
    if (!all && rank != MPI_PROC_NULL && (rank < 0 || rank >= w->comm->size))
        return lm_err_win(win, MPI_ERR_RANK, fname, "rank %d is not in the window's group of %d", rank, w->comm->size);
    if (!w->lockall && !w->nheld)
        return lm_err_win(win, MPI_ERR_RMA_SYNC, fname, "no passive-target epoch is open on this window");
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    return lm_err_win(win, MPI_ERR_RMA_SYNC, fname, "no passive-target epoch is open to rank %d", rank);
}

/* The entry points check nothing but initialization before this (their
 * wrappers leave the arguments to it, tools/gen/rules.py IMPL_VALIDATES):
 * a valid call is recognised in one condition. */
static inline int flush(MPI_Win win, int rank, int all, const char *fname)
{
    lm_win *w = lm_win_get(win);
    if (!w || (all ? !w->lockall && !w->nheld
                   : (unsigned)rank >= (unsigned)w->comm->size || (!w->lockall && !held_lock(w, rank))))
        return flush_refused(win, rank, all, fname);
    int rc = lm_osc_flush(w->ch, all ? -1 : rank);
    /* DIRECT and CMA data is in place already; what follows (a store that
     * tells someone, another operation) must not pass it */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (rc) return lm_err_win(win, rc, fname, "an operation failed at its target");
    return MPI_SUCCESS;
}

/* Local completion waits for the replies too: a get's data is only here
 * then, and a put's buffer was copied when the call returned. */
int impl_MPI_Win_flush(int rank, MPI_Win win) { return flush(win, rank, 0, "MPI_Win_flush"); }
int impl_MPI_Win_flush_local(int rank, MPI_Win win) { return flush(win, rank, 0, "MPI_Win_flush_local"); }
int impl_MPI_Win_flush_all(MPI_Win win) { return flush(win, 0, 1, "MPI_Win_flush_all"); }
int impl_MPI_Win_flush_local_all(MPI_Win win) { return flush(win, 0, 1, "MPI_Win_flush_local_all"); }

int impl_MPI_Win_sync(MPI_Win win)
{
    int rc;
    lm_win *w = window(win, "MPI_Win_sync", &rc);
    if (!w) return rc;
    /* one copy of the memory (unified model): ordering is all there is */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

/* ---- active target: post/start/complete/wait ----
 * MPI_Win_post writes the poster's rank into a free slot of each origin's
 * post slots; MPI_Win_start waits until it finds a post from each of its
 * targets and clears it. MPI_Win_complete adds one to each target's
 * completes; MPI_Win_wait waits until its count has grown by the size of
 * the posted group. A post from a target outside the start group (meant
 * for a later epoch) stays in its slot. */

static int group_ranks_ok(const lm_win *w, const lm_group *g)
{
    for (int i = 0; i < lm_group_size(g); i++)
        if (lm_group_rank_of(w->comm->group, lm_group_world_rank(g, i)) < 0) return 0;
    return 1;
}

static int win_rank_of(const lm_win *w, const lm_group *g, int i)
{
    return lm_group_rank_of(w->comm->group, lm_group_world_rank(g, i));
}

/* The checks MPI_Win_post and MPI_Win_start share: the window, the
 * assert bits the call takes, a group inside the window. */
static int pscw_args(MPI_Win win, MPI_Group group, int assert, int allowed, const char *fname, lm_win **w, lm_group **g)
{
    int rc;
    if (!(*w = window(win, fname, &rc))) return rc;
    if ((rc = check_assert(win, assert, allowed, fname))) return rc;
    if (!(*g = lm_group_get(group))) return lm_err_win(win, MPI_ERR_GROUP, fname, "invalid group");
    if (!group_ranks_ok(*w, *g))
        return lm_err_win(win, MPI_ERR_GROUP, fname, "the group has processes outside the window");
    return MPI_SUCCESS;
}

int impl_MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    lm_win *w;
    lm_group *g;
    int rc = pscw_args(win, group, assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, "MPI_Win_post", &w,
                       &g);
    if (rc) return rc;
    if (w->post_group || w->post_unfinished)
        return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_post", "an exposure epoch is already open");
    if (w->fence_open) w->fence_open = 0;
    uint32_t me = (uint32_t)w->comm->rank + 1;
    for (int i = 0; i < lm_group_size(g); i++) {
        int origin = win_rank_of(w, g, i);
        if (lm_win_remote(w, origin)) {
            if ((rc = sync_until_granted(w, origin, SYNC_POST, me)))
                return lm_err_win(win, rc, "MPI_Win_post", "cannot reach rank %d", origin);
            continue;
        }
        uint32_t *slots = lm_win_ctl_of(w, origin)->posts;
        unsigned idle = 0;
        for (int k = 0;; k = (k + 1) % LM_WIN_POST_SLOTS) {
            if (!__atomic_load_n(&slots[k], __ATOMIC_RELAXED) && lm_osc_cas32(&slots[k], 0, me, NULL)) break;
            if (k == LM_WIN_POST_SLOTS - 1) lm_rma_wait(&idle);
        }
    }
    lm_group_retain(g);
    w->post_group = g;
    w->post_unfinished = 1;
    return MPI_SUCCESS;
}

int impl_MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    lm_win *w;
    lm_group *g;
    int rc = pscw_args(win, group, assert, MPI_MODE_NOCHECK, "MPI_Win_start", &w, &g);
    if (rc) return rc;
    if (w->start_group || w->lockall || w->nheld)
        return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_start", "an access epoch is already open");
    w->fence_open = 0;
    /* take the posts of the group's processes in whatever order they are
     * found: more posters than slots wait for room, which only taking
     * posts (any of ours) makes. MPI_MODE_NOCHECK: the targets have posted
     * already, and their posts are taken all the same (they must not
     * linger for a later epoch). */
    int n = lm_group_size(g), found = 0;
    unsigned char *got = n ? lm_calloc(LM_MEM_RMA, (size_t)n, 1) : NULL;
    if (n && !got) return lm_err_win(win, MPI_ERR_NO_MEM, "MPI_Win_start", "out of memory");
    uint32_t *slots = lm_win_ctl_of(w, w->comm->rank)->posts;
    unsigned idle = 0;
    while (found < n) {
        int progress = 0;
        for (int k = 0; k < LM_WIN_POST_SLOTS; k++) {
            uint32_t v = __atomic_load_n(&slots[k], __ATOMIC_ACQUIRE);
            if (!v) continue;
            int i = lm_group_rank_of(g, lm_comm_world_rank(w->comm, (int)v - 1));
            if (i < 0 || got[i] || !lm_osc_cas32(&slots[k], v, 0, NULL)) continue;
            got[i] = 1;
            found++;
            progress = 1;
        }
        if (!progress && found < n) lm_rma_wait(&idle);
    }
    lm_free(LM_MEM_RMA, got);
    lm_group_retain(g);
    w->start_group = g;
    return MPI_SUCCESS;
}

int impl_MPI_Win_complete(MPI_Win win)
{
    int rc;
    lm_win *w = window(win, "MPI_Win_complete", &rc);
    if (!w) return rc;
    if (!w->start_group) return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_complete", "no start epoch is open");
    rc = lm_osc_flush(w->ch, -1);
    int rc2;
    lm_group *g = w->start_group;
    for (int i = 0; i < lm_group_size(g); i++) {
        int target = win_rank_of(w, g, i);
        uint32_t yes;
        if (!lm_win_remote(w, target)) lm_osc_fetch_add64(&lm_win_ctl_of(w, target)->completes, 1);
        else if ((rc2 = sync_call(w, target, SYNC_COMPLETE, 0, 0, &yes)) && !rc) rc = rc2;
    }
    w->start_group = NULL;
    lm_group_release(g);
    if (rc) return lm_err_win(win, rc, "MPI_Win_complete", "an operation of the epoch failed at its target");
    return MPI_SUCCESS;
}

/* Has every origin of the posted group completed? Then the exposure
 * epoch ends. */
static int exposure_over(lm_win *w)
{
    uint64_t want = w->completes_expected + (uint64_t)lm_group_size(w->post_group);
    if (__atomic_load_n(&lm_win_ctl_of(w, w->comm->rank)->completes, __ATOMIC_ACQUIRE) < want) return 0;
    w->completes_expected = want;
    lm_group_release(w->post_group);
    w->post_group = NULL;
    w->post_unfinished = 0;
    return 1;
}

int impl_MPI_Win_wait(MPI_Win win)
{
    int rc;
    lm_win *w = window(win, "MPI_Win_wait", &rc);
    if (!w) return rc;
    if (!w->post_group) return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_wait", "no post epoch is open");
    unsigned idle = 0;
    while (!exposure_over(w)) lm_rma_wait(&idle);
    return MPI_SUCCESS;
}

int impl_MPI_Win_test(MPI_Win win, int *flag)
{
    int rc;
    lm_win *w = window(win, "MPI_Win_test", &rc);
    if (!w) return rc;
    if (!w->post_group) return lm_err_win(win, MPI_ERR_RMA_SYNC, "MPI_Win_test", "no post epoch is open");
    lm_progress();
    *flag = exposure_over(w);
    return MPI_SUCCESS;
}
