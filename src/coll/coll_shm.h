/* Node shared-memory mailboxes for collectives.
 *
 * When every rank of an intracommunicator shares this node, each rank can
 * own a mailbox in its node-shared arena: a ring of entries, each a stamp
 * (which call it holds) and up to LM_COLL_SHM_DATA bytes. A
 * schedule's POST step copies data into the rank's own entry and publishes
 * the stamp; FETCH steps of other ranks wait for that stamp and copy (or
 * reduce) straight from the entry, then count themselves in the entry's
 * reader counter. The writer reuses an entry only once every reader of its
 * previous contents has been counted, so a fast writer runs at most a few
 * calls ahead and nothing is ever overwritten unread. No matching, no
 * message headers, no system call: one copy in, one copy out.
 *
 * The mailboxes are set up by the first blocking collective on a
 * communicator that can have them (every member calls it at the same
 * point); they cost nothing before that, and communicators off one node
 * never have them. Whether a communicator has them is the same on every
 * rank, so every rank selects the same algorithms. */
#ifndef LM_COLL_SHM_H
#define LM_COLL_SHM_H
#include <stddef.h>
#include <stdint.h>
#include "coll/sched.h"
#include "obj/comm.h"

/* Bytes of a mailbox entry, and what one POST can carry (the rest is its
 * 16-byte stamp). */
#ifndef LM_COLL_SHM_ENTRY
#define LM_COLL_SHM_ENTRY 256
#endif
#define LM_COLL_SHM_DATA (LM_COLL_SHM_ENTRY - 16)
/* Largest communicator given mailboxes: the algorithms that use them are
 * flat (every rank reads each peer it needs directly), which beats trees of
 * messages up to about this many ranks. */
#define LM_COLL_SHM_MAX_PROCS 16

/* Collective over c, from a blocking collective: give c mailboxes if it has
 * none, was never tried, lies on this node and is allowed them
 * (LEANMPI_COLL_SHM). Failures (no arena space) leave c without them, on
 * every rank alike. */
void lm_coll_shm_setup(lm_comm *c);
static inline int lm_coll_shm_ready(const lm_comm *c) { return c->coll_shm != NULL; }
/* c is going away: its mailbox returns to the arena once every reader of
 * what it posted last has read it. */
void lm_coll_shm_release(lm_comm *c);
/* MPI_Finalize: nothing is read any more; give everything back. */
void lm_coll_shm_finalize(void);

/* Executor steps for collective call number `call` on c. post: 1 when
 * published, 0 when the entry still has readers (try again). peek: the
 * peer's data once published, else NULL; after using it, fetched(). */
int lm_coll_shm_post(lm_comm *c, uint32_t call, const lm_step *st, const void *src);
const void *lm_coll_shm_peek(lm_comm *c, uint32_t call, const lm_step *st);
void lm_coll_shm_fetched(lm_comm *c, uint32_t call, const lm_step *st);
/* The same by address (lm_step.by_address): the post publishes where its
 * bytes are (`at`), the peek answers where the step's bytes are in the
 * poster's memory, and read_by_all says whether every reader of this
 * rank's post of the call has counted itself. */
int lm_coll_shm_post_address(lm_comm *c, uint32_t call, const lm_step *st, const char *at);
const void *lm_coll_shm_peek_address(lm_comm *c, uint32_t call, const lm_step *st);
int lm_coll_shm_read_by_all(lm_comm *c, uint32_t call);
/* Every member of c shares this rank's address space (and c has
 * mailboxes): the same answer on every member. */
int lm_coll_shm_same_space(const lm_comm *c);

#endif
