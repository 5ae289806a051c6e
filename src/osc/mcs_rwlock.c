/* MCS-RW-RP, after Mellor-Crummey and Scott's reader-preference lock
 * (the pseudo-code of start_read/end_read/start_write/end_write). Every
 * read-modify-write on the lock goes through the engine's atomics, so the
 * remote-atomics pvar counts them; the plain loads and stores are the
 * "RDMA read/write" steps of a networked version. */
#include "osc/mcs_rwlock.h"
#include "osc/osc.h"
#include <time.h>

lm_mcs_counters lm_mcs_count;

static inline lm_mcs_qnode *node(const lm_mcs_space *s, uint32_t id) { return &s->nodes[id - 1]; }

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Spin on our own node until someone clears blocked: a short tight spin
 * first, then the caller's wait step (see lm_mcs_space). */

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void wait_unblocked(const lm_mcs_space *s, lm_mcs_qnode *q)
{
    double t0 = now();
    unsigned idle = 0;
    for (int k = 0; __atomic_load_n(&q->blocked, __ATOMIC_ACQUIRE); k++) {
        if (k < s->tight_spins) relax();
        else s->wait(&idle);
    }
    lm_mcs_count.waits++;
    lm_mcs_count.wait_seconds += now() - t0;
}

static inline void unblock(const lm_mcs_space *s, uint32_t id)
{
    __atomic_store_n(&node(s, id)->blocked, 0, __ATOMIC_RELEASE);
}

void lm_mcs_read_wait(const lm_mcs_space *s, lm_mcs_rwlock *l, uint32_t me)
{
    /* counted in while a writer is active: wait on the reader stack */
    lm_mcs_qnode *q = node(s, me);
    __atomic_store_n(&q->blocked, 1, __ATOMIC_RELAXED);
    uint32_t next = lm_osc_swap32(&l->reader_head, me);
    __atomic_store_n(&q->next, next, __ATOMIC_RELAXED);
    if (!(__atomic_load_n(&l->state, __ATOMIC_SEQ_CST) & LM_MCS_WAFLAG)) {
        /* the writer left between our increment and our push: wake the
         * stack ourselves (perhaps just us) */
        uint32_t head = lm_osc_swap32(&l->reader_head, 0);
        if (head) unblock(s, head);
    }
    wait_unblocked(s, q);
    next = __atomic_load_n(&q->next, __ATOMIC_RELAXED);
    if (next) unblock(s, next);
}

void lm_mcs_read_handover(const lm_mcs_space *s, lm_mcs_rwlock *l)
{
    if (lm_osc_cas64(&l->state, LM_MCS_WIFLAG, LM_MCS_WAFLAG, NULL))
        unblock(s, __atomic_load_n(&l->writer_head, __ATOMIC_ACQUIRE));
}

/* Take the active flag for a writer at the head of the queue: at once
 * when nobody holds the lock (the interested flag and its promotion with
 * nothing in between), else announce interest; the last reader out then
 * promotes it. Returns whether the writer is active now. */
static int writer_activate(lm_mcs_rwlock *l)
{
    if (lm_osc_cas64(&l->state, 0, LM_MCS_WAFLAG, NULL)) return 1;
    return lm_osc_fetch_or64(&l->state, LM_MCS_WIFLAG) == 0 &&
           lm_osc_cas64(&l->state, LM_MCS_WIFLAG, LM_MCS_WAFLAG, NULL);
}

void lm_mcs_write_lock(const lm_mcs_space *s, lm_mcs_rwlock *l, uint32_t me)
{
    lm_mcs_count.acquisitions++;
    lm_mcs_qnode *q = node(s, me);
    __atomic_store_n(&q->blocked, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&q->next, 0, __ATOMIC_RELAXED);
    uint32_t pred = lm_osc_swap32(&l->writer_tail, me);
    if (pred == 0) {
        __atomic_store_n(&l->writer_head, me, __ATOMIC_SEQ_CST);
        if (writer_activate(l)) return;
    } else {
        __atomic_store_n(&node(s, pred)->next, me, __ATOMIC_RELEASE);
    }
    wait_unblocked(s, q);
}

void lm_mcs_write_unlock(const lm_mcs_space *s, lm_mcs_rwlock *l, uint32_t me)
{
    lm_mcs_qnode *q = node(s, me);
    __atomic_store_n(&l->writer_head, 0, __ATOMIC_SEQ_CST);
    /* readers that came while we held it are waiting on the stack */
    if (lm_osc_fetch_and64(&l->state, ~(uint64_t)LM_MCS_WAFLAG) != LM_MCS_WAFLAG) {
        uint32_t head = lm_osc_swap32(&l->reader_head, 0);
        if (head) unblock(s, head);
    }
    uint32_t next = __atomic_load_n(&q->next, __ATOMIC_ACQUIRE);
    if (next == 0 && lm_osc_cas32(&l->writer_tail, me, 0, NULL)) return;
    /* a successor is enqueuing: wait for its link */
    unsigned idle = 0;
    for (int k = 0; (next = __atomic_load_n(&q->next, __ATOMIC_ACQUIRE)) == 0; k++) {
        if (k < s->tight_spins) relax();
        else s->wait(&idle);
    }
    __atomic_store_n(&l->writer_head, next, __ATOMIC_SEQ_CST);
    if (writer_activate(l)) unblock(s, next);
}

/* Where processes share cores (no tight spins), the queue hands the lock
 * to its next writer in order, and that writer is mostly not running:
 * every hand-over waits for the scheduler (8 ranks on 2 cores: 13 to 18
 * us per acquisition). A writer there tries the free word again between
 * the space's waits (which yield), so that whoever runs takes the lock
 * (0.2 us); after UNQUEUED_WAITS tries it queues, and once one has queued
 * every newcomer's try fails until the queue is empty: nobody starves. */
#define UNQUEUED_WAITS 64

int lm_mcs_write_trylock(const lm_mcs_space *s, lm_mcs_rwlock *l)
{
    if (!s->tight_spins) {
        unsigned idle = 0;
        for (int k = 0;; k++) {
            if (lm_mcs_write_try_once(l)) return 1;
            if (k >= UNQUEUED_WAITS) return 0;
            s->wait(&idle);
        }
    }
    int spun = 0;
    for (int k = 0;; k++) {
        /* read before the compare-and-swap: spinning on loads keeps the
         * line shared until it is worth taking */
        if (lm_mcs_write_try_once(l)) return 1;
        if (spun >= 4 * s->tight_spins) return 0;
        int pause = 1 << (k < 5 ? k : 5);
        for (int b = 0; b < pause; b++) relax();
        spun += pause;
    }
}

void lm_mcs_write_unlock_direct(const lm_mcs_space *s, lm_mcs_rwlock *l)
{
    if (lm_mcs_write_release_once(l)) return;
    /* others came while we held it: readers counted in and waiting on the
     * stack (woken here; a writer that queued meanwhile is promoted by the
     * last of them), or a queued writer's interest (promoted here) */
    uint64_t old = lm_osc_fetch_and64(&l->state, ~(uint64_t)LM_MCS_WAFLAG);
    if (old >= LM_MCS_RC_INCR) {
        uint32_t head = lm_osc_swap32(&l->reader_head, 0);
        if (head) unblock(s, head);
    } else if ((old & LM_MCS_WIFLAG) && lm_osc_cas64(&l->state, LM_MCS_WIFLAG, LM_MCS_WAFLAG, NULL)) {
        unblock(s, __atomic_load_n(&l->writer_head, __ATOMIC_ACQUIRE));
    }
}
