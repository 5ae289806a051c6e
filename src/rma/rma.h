/* One-sided communication inside src/rma: what the communication calls
 * (rma_comm.c, rma_acc.c) and the synchronization calls (rma_sync.c)
 * share. */
#ifndef LM_RMA_H
#define LM_RMA_H
#include "rma/win.h"
#include "rma/win_segment.h"
#include "osc/osc.h"

/* Start of the one-sided calls: the engine and the call handlers. */
int lm_rma_calls_init(void);

/* May this process access rank now (an access epoch that covers it)? */
int lm_rma_may_access(const lm_win *w, int rank);

/* How to reach rank's part: the target descriptor, its displacement unit
 * and size. For a dynamic window the part is the whole address space
 * (displacements are addresses). */
void lm_rma_target(const lm_win *w, int rank, lm_osc_target *t, int64_t *unit, int64_t *size);

/* Is [lo, hi) (bytes from the start of rank's part) inside it? For a
 * dynamic window: inside one region rank has attached. */
int lm_rma_in_range(const lm_win *w, int rank, int64_t lo, int64_t hi);

/* Does this process hold an exclusive lock on rank (nobody else may
 * then touch rank's part, so its accumulates need no accumulate lock)? */
int lm_rma_holds_exclusive(const lm_win *w, int rank);

/* The accumulate lock of rank's part (held for the duration of one
 * accumulate-family operation carried out on DIRECT or CMA memory). */
void lm_rma_acc_lock(const lm_win *w, int rank);
void lm_rma_acc_unlock(const lm_win *w, int rank);

/* Wait step of every spin (progress, yield after a while). */
void lm_rma_wait(unsigned *idle);

/* The calls carried out by a target for MSG reach (rma_acc.c). */
enum { LM_RMA_CALL_ACC = 0 };

#endif
