/* The passive-target lock (src/osc/mcs_rwlock.c) between threads, which
 * share memory as the processes of a node share the window segment:
 *  1. hand-overs that must happen, step by step: a reader that arrives
 *     while a writer holds the lock without queueing waits and gets in at
 *     its release; so does a writer that queues meanwhile; a writer that
 *     finds readers in queues and is promoted by the last of them;
 *  2. stress: threads take shared and exclusive locks (queued and direct)
 *     in a pseudo-random mix; an exclusive holder checks that nobody else
 *     is inside and bumps a counter, a shared holder checks that no writer
 *     is inside; at the end the counter equals the exclusive epochs. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "osc/mcs_rwlock.h"
#include "osc/osc.h"

lm_osc_counters lm_osc_count; /* the engine's counters (osc.c is not linked) */

#include "unit_check.h"

#define THREADS 4
#define ROUNDS 20000

static lm_mcs_rwlock lock;
static lm_mcs_qnode nodes[THREADS * 2];
static void yield_wait(unsigned *idle)
{
    (void)idle;
    sched_yield();
}
static const lm_mcs_space space = {nodes, yield_wait, LM_MCS_TIGHT_SPINS};

static int readers_in, writers_in; /* atomics: who is inside */
static long counter;               /* changed by exclusive holders only */
static int stage;                  /* part 1: how far the helper thread got */

static void at(int v) { __atomic_store_n(&stage, v, __ATOMIC_SEQ_CST); }
static void wait_for(int v)
{
    while (__atomic_load_n(&stage, __ATOMIC_SEQ_CST) < v) sched_yield();
}
/* Give a waiter time to reach its spin (it must not get in meanwhile). */
static void settle(void) { usleep(20000); }

static void *reader_arrives(void *arg)
{
    (void)arg;
    at(1);
    lm_mcs_read_lock(&space, &lock, 2);
    at(2);
    lm_mcs_read_unlock(&space, &lock);
    return NULL;
}

static void *writer_arrives(void *arg)
{
    (void)arg;
    at(1);
    lm_mcs_write_lock(&space, &lock, 2);
    at(2);
    lm_mcs_write_unlock(&space, &lock, 2);
    return NULL;
}

/* The lock is held here; a thread arrives (arrive) and must wait until
 * release() lets it in, after which the lock is free again. */
static void waits_for_release(void *(*arrive)(void *), void (*release)(void))
{
    pthread_t t;
    at(0);
    pthread_create(&t, NULL, arrive, NULL);
    wait_for(1);
    settle();
    CHECK(__atomic_load_n(&stage, __ATOMIC_SEQ_CST) == 1);
    release();
    pthread_join(t, NULL);
    CHECK(stage == 2 && lock.state == 0 && lock.writer_tail == 0 && lock.reader_head == 0);
}

static void release_direct(void) { lm_mcs_write_unlock_direct(&space, &lock); }
static void release_read(void)
{
    CHECK(!lm_mcs_write_trylock(&space, &lock)); /* a writer queued: no direct entry */
    lm_mcs_read_unlock(&space, &lock);
}

static void handovers(void)
{
    /* a reader waits for a direct writer */
    CHECK(lm_mcs_write_trylock(&space, &lock));
    CHECK(!lm_mcs_write_trylock(&space, &lock)); /* held: a second writer must queue */
    waits_for_release(reader_arrives, release_direct);
    /* a queued writer waits for a direct writer */
    CHECK(lm_mcs_write_trylock(&space, &lock));
    waits_for_release(writer_arrives, release_direct);
    /* a queued writer waits for a reader, whose release promotes it */
    lm_mcs_read_lock(&space, &lock, 1);
    waits_for_release(writer_arrives, release_read);

    /* uncontended costs: two atomics each */
    uint64_t a0 = lm_osc_count.atomics;
    CHECK(lm_mcs_write_trylock(&space, &lock));
    lm_mcs_write_unlock_direct(&space, &lock);
    CHECK(lm_osc_count.atomics - a0 == 2);
    a0 = lm_osc_count.atomics;
    lm_mcs_read_lock(&space, &lock, 1);
    lm_mcs_read_unlock(&space, &lock);
    CHECK(lm_osc_count.atomics - a0 == 2);
}

static void *stress(void *arg)
{
    int me = (int)(long)arg;
    uint32_t qnode = (uint32_t)(2 * me + 1), x = (uint32_t)me * 2654435761u + 1;
    long mine = 0;
    for (int i = 0; i < ROUNDS; i++) {
        x = x * 1103515245u + 12345u;
        int kind = (x >> 16) % 3; /* shared, exclusive queued, exclusive direct if free */
        if (kind == 0) {
            lm_mcs_read_lock(&space, &lock, qnode);
            __atomic_fetch_add(&readers_in, 1, __ATOMIC_SEQ_CST);
            CHECK(__atomic_load_n(&writers_in, __ATOMIC_SEQ_CST) == 0);
            __atomic_fetch_sub(&readers_in, 1, __ATOMIC_SEQ_CST);
            lm_mcs_read_unlock(&space, &lock);
            continue;
        }
        int direct = kind == 2 && lm_mcs_write_trylock(&space, &lock);
        if (!direct) lm_mcs_write_lock(&space, &lock, qnode + 1);
        CHECK(__atomic_fetch_add(&writers_in, 1, __ATOMIC_SEQ_CST) == 0);
        CHECK(__atomic_load_n(&readers_in, __ATOMIC_SEQ_CST) == 0);
        long c = counter;
        if ((i & 7) == 0) sched_yield(); /* let the others pile up behind us */
        counter = c + 1;
        mine++;
        __atomic_fetch_sub(&writers_in, 1, __ATOMIC_SEQ_CST);
        if (direct) lm_mcs_write_unlock_direct(&space, &lock);
        else lm_mcs_write_unlock(&space, &lock, qnode + 1);
    }
    return (void *)mine;
}

int main(void)
{
    alarm(120);
    handovers();
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, stress, (void *)i);
    long total = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    CHECK(counter == total);
    CHECK(lock.state == 0 && lock.writer_tail == 0 && lock.reader_head == 0);
    printf("PASS mcs_rwlock: hand-overs, and %ld exclusive epochs of %d\n", total, THREADS * ROUNDS);
    return 0;
}
