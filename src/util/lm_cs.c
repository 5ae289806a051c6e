/* The library's critical section (lm_cs.h): one mutex, a per-thread depth,
 * and a count of the threads waiting for it so that a blocking wait hands
 * it over only when someone wants it. */
#include "util/lm_cs.h"
#include <pthread.h>
#include <sched.h>

atomic_int lm_cs_on;

static pthread_mutex_t section = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local unsigned depth;
/* Threads blocked in lm_cs_enter, and how many times the section has been
 * taken: a handoff waits until another thread has had it. */
static atomic_uint waiting;
static atomic_uint taken;

void lm_cs_enable(void) { atomic_store_explicit(&lm_cs_on, 1, memory_order_relaxed); }

static void lock(void)
{
    if (pthread_mutex_trylock(&section) != 0) {
        atomic_fetch_add_explicit(&waiting, 1, memory_order_relaxed);
        pthread_mutex_lock(&section);
        atomic_fetch_sub_explicit(&waiting, 1, memory_order_relaxed);
    }
    /* only the holder writes it: no read-modify-write needed */
    atomic_store_explicit(&taken, atomic_load_explicit(&taken, memory_order_relaxed) + 1, memory_order_relaxed);
}

void lm_cs_enter(void)
{
    if (depth++ == 0) lock();
}

/* The mutex is not fair: a thread that releases it and takes it straight
 * back (a loop of MPI_Test or MPI_Iprobe, a blocking wait) would usually win
 * against the waiter it woke, which may be the thread that would send what
 * it polls for.  So a release with waiters returns only once another thread
 * has had the section. */
static void unlock(void)
{
    if (atomic_load_explicit(&waiting, memory_order_relaxed) == 0) {
        pthread_mutex_unlock(&section);
        return;
    }
    unsigned seen = atomic_load_explicit(&taken, memory_order_relaxed);
    pthread_mutex_unlock(&section);
    while (atomic_load_explicit(&waiting, memory_order_relaxed) != 0 &&
           atomic_load_explicit(&taken, memory_order_relaxed) == seen)
        sched_yield();
}

void lm_cs_exit(void)
{
    if (--depth == 0) unlock();
}

void lm_cs_handoff(void)
{
    if (depth == 0 || atomic_load_explicit(&waiting, memory_order_relaxed) == 0) return;
    /* Released completely, however deep the calls that hold it: a callback
     * that blocks must not keep the section either. */
    unsigned saved = depth;
    depth = 0;
    unlock();
    lock();
    depth = saved;
}

unsigned lm_cs_suspend(void)
{
    unsigned saved = depth;
    if (saved == 0) return 0;
    depth = 0;
    unlock();
    return saved;
}

void lm_cs_resume(unsigned saved)
{
    if (saved == 0) return;
    lock();
    depth = saved;
}
