/* The passive-target lock: a queue-based readers/writer lock with reader
 * preference (Mellor-Crummey and Scott, 1991, "MCS-RW-RP"), on the
 * engine's atomics over node-shared memory.
 *
 * Readers only count themselves in while no writer is active: an
 * uncontended shared lock plus unlock is two fetch-and-adds on the lock
 * word. Writers queue (MCS list through writer_tail); readers that find a
 * writer active push themselves on a stack (reader_head) and are woken
 * together when it leaves. Every waiter spins on its own queue node, never
 * on the lock word, so waiting costs the lock's home nothing.
 *
 * A writer that finds the lock free and nobody queued takes it with one
 * compare-and-swap of the lock word, without a queue node, and releases
 * it with another (lm_mcs_write_trylock): an uncontended exclusive lock
 * plus unlock is two atomics, as a shared one. Finding it taken, it keeps
 * trying for a short spin (4 pauses per tight spin of the space; where
 * processes share cores, tries between the space's waits instead, see
 * mcs_rwlock.c) before it queues: between two running
 * processes the release is then caught without the queue's hand-over,
 * which costs a round of cache-line transfers. Its tries back off (1, 2,
 * 4 ... 32 pauses apart): each try pulls the lock's line away from the
 * holder, whose release then waits for it, and a holder that can take
 * the lock again at once keeps the line and the data in its cache (2
 * ranks locking exclusively in turn, 11 alternating runs on the 2-core
 * machine: 0.142 against 0.168 us per lock, accumulate and unlock). Writers that queued are
 * handed the lock in order, and at most one unqueued writer gets in
 * ahead of them per hand-over (the queue's interest flag shuts the free
 * word).
 *
 * Queue nodes are named by 32-bit ids (0 = none) into a table of nodes
 * every process can reach; the caller owns the ids it passes. A writer's
 * node stays in use until its unlock; a reader's only while it waits. */
#ifndef LM_MCS_RWLOCK_H
#define LM_MCS_RWLOCK_H
#include <stdint.h>
#include "osc/osc.h"

typedef struct lm_mcs_rwlock {
    uint64_t state; /* readers * LM_MCS_RC_INCR | LM_MCS_WAFLAG | LM_MCS_WIFLAG */
    uint32_t reader_head, writer_tail, writer_head, pad;
} lm_mcs_rwlock;

#define LM_MCS_WIFLAG 0x1u  /* a writer is interested */
#define LM_MCS_WAFLAG 0x2u  /* a writer is active */
#define LM_MCS_RC_INCR 0x4u /* one reader */

/* A queue node, alone in its cache line: its owner spins on it. */
typedef struct lm_mcs_qnode {
    uint32_t next, blocked;
    char pad[56];
} lm_mcs_qnode;

/* Where the ids point: nodes[id - 1]. A waiter first spins tight_spins
 * times on its node alone (a hand-over between running processes takes a
 * few hundred cycles; LM_MCS_TIGHT_SPINS), then calls wait() at every
 * check (progress, then yield the core after a while; idle starts at 0).
 * Where processes share cores, tight spinning only delays the holder and
 * the next in line: 0 there. */
#define LM_MCS_TIGHT_SPINS 256
typedef struct lm_mcs_space {
    lm_mcs_qnode *nodes;
    void (*wait)(unsigned *idle);
    int tight_spins;
} lm_mcs_space;

/* Acquisitions and the time spent waiting for them (pvars). */
typedef struct lm_mcs_counters {
    uint64_t acquisitions, waits;
    double wait_seconds;
} lm_mcs_counters;
extern lm_mcs_counters lm_mcs_count;

/* The shared lock, inline up to its uncontended case (one fetch-and-add
 * each way); the waiting and the hand-over to a writer are out of line. */
void lm_mcs_read_wait(const lm_mcs_space *s, lm_mcs_rwlock *l, uint32_t me);
void lm_mcs_read_handover(const lm_mcs_space *s, lm_mcs_rwlock *l);
/* The shared lock's first step, for callers that keep the wait out of
 * line: 1 when the lock is held now, 0 when the caller, counted in
 * already, must lm_mcs_read_wait. */
static inline int lm_mcs_read_enter(lm_mcs_rwlock *l)
{
    lm_mcs_count.acquisitions++;
    return !(lm_osc_fetch_add64(&l->state, LM_MCS_RC_INCR) & LM_MCS_WAFLAG);
}
static inline void lm_mcs_read_lock(const lm_mcs_space *s, lm_mcs_rwlock *l, uint32_t me)
{
    if (!lm_mcs_read_enter(l)) lm_mcs_read_wait(s, l, me);
}
/* The shared unlock's first step: 1 when this was the last reader out
 * and a writer is interested, and the caller must lm_mcs_read_handover. */
static inline int lm_mcs_read_leave(lm_mcs_rwlock *l)
{
    return lm_osc_fetch_add64(&l->state, (uint64_t)0 - LM_MCS_RC_INCR) == (LM_MCS_RC_INCR | LM_MCS_WIFLAG);
}
static inline void lm_mcs_read_unlock(const lm_mcs_space *s, lm_mcs_rwlock *l)
{
    /* the last reader out hands the lock to an interested writer */
    if (lm_mcs_read_leave(l)) lm_mcs_read_handover(s, l);
}
void lm_mcs_write_lock(const lm_mcs_space *s, lm_mcs_rwlock *l, uint32_t me);
void lm_mcs_write_unlock(const lm_mcs_space *s, lm_mcs_rwlock *l, uint32_t me);
/* 1 when the lock was, or within the short spin became, free with no
 * writer queued and is now this writer's (release with
 * lm_mcs_write_unlock_direct); 0: queue with lm_mcs_write_lock. */
int lm_mcs_write_trylock(const lm_mcs_space *s, lm_mcs_rwlock *l);
void lm_mcs_write_unlock_direct(const lm_mcs_space *s, lm_mcs_rwlock *l);
/* The first try of lm_mcs_write_trylock, in line: 1 when the lock was free
 * with no writer queued and is now this writer's; 0: call it (it spins). */
static inline int lm_mcs_write_try_once(lm_mcs_rwlock *l)
{
    if (__atomic_load_n(&l->writer_tail, __ATOMIC_RELAXED) || __atomic_load_n(&l->state, __ATOMIC_RELAXED) ||
        !lm_osc_cas64(&l->state, 0, LM_MCS_WAFLAG, NULL))
        return 0;
    lm_mcs_count.acquisitions++;
    return 1;
}
/* The common case of lm_mcs_write_unlock_direct, in line: 1 when nobody
 * came while this writer held the lock and it is free now; 0: call it. */
static inline int lm_mcs_write_release_once(lm_mcs_rwlock *l)
{
    return lm_osc_cas64(&l->state, LM_MCS_WAFLAG, 0, NULL);
}

#endif
