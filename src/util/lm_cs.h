/* The library's one critical section, for MPI_THREAD_MULTIPLE.
 *
 * Below MPI_THREAD_MULTIPLE the caller serializes its MPI calls and the
 * section stays off: every MPI entry point pays one load and one predictable
 * branch.  Once a thread level of MPI_THREAD_MULTIPLE has been granted (by
 * MPI_Init_thread or MPI_T_init_thread) the section is on for the rest of
 * the process, and every MPI call runs inside it.  It is re-entrant (a
 * per-thread depth): callbacks the library calls (attribute copy/delete
 * functions, user reduction operations, error handlers) may call MPI.
 *
 * Blocking calls never hold it while they wait: lm_progress_wait hands it to
 * the threads waiting for it, so a thread blocked in MPI_Recv cannot keep
 * another thread of its process from sending the message it waits for. */
#ifndef LM_CS_H
#define LM_CS_H
#include <stdatomic.h>

extern atomic_int lm_cs_on;

void lm_cs_enter(void);
void lm_cs_exit(void);
/* Called while holding the section: when other threads wait for it, let one
 * of them have it, then take it back (at the same depth). */
void lm_cs_handoff(void);
/* Around a user callback that may block on a lock of its own (a Python
 * callback takes the interpreter lock, which another thread may hold while
 * it waits for the section): the section is released completely and taken
 * back at the same depth.  Only for callbacks whose caller looks its state
 * up again afterwards (attribute copy/delete, generalized requests). */
unsigned lm_cs_suspend(void);
void lm_cs_resume(unsigned saved);
/* Turn the section on (MPI_THREAD_MULTIPLE granted); never turned off. */
void lm_cs_enable(void);

static inline int lm_cs_active(void)
{
    return __builtin_expect(atomic_load_explicit(&lm_cs_on, memory_order_relaxed), 0);
}

/* Entry and exit of an MPI call: `held` remembers whether this call took the
 * section, so a call during which it was turned on leaves it balanced. */
static inline int lm_cs_call_enter(void)
{
    if (lm_cs_active()) {
        lm_cs_enter();
        return 1;
    }
    return 0;
}

static inline void lm_cs_call_exit(int held)
{
    if (held) lm_cs_exit();
}

#endif
