/* Buffered sends through an attached buffer: the process's
 * (MPI_Buffer_attach), a communicator's or a session's. */
#ifndef LM_BSEND_H
#define LM_BSEND_H
#include "mpi.h"

typedef struct lm_bsend_pool lm_bsend_pool;

/* Copy the message into the buffer the communicator uses and start sending
 * the copy. The request returned (if request != NULL) is already complete. */
int lm_bsend_start(const char *fname, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
/* At point-to-point start: registers the progress hook (on while a pool
 * has messages in flight or flushes waiting) and the communicator free
 * hook that frees a communicator's pool. */
int lm_bsend_init(void);
/* Release the blocks of buffered sends that have completed and complete
 * the flushes waiting for them; returns how many buffers fell idle. */
int lm_bsend_progress(void);
/* A communicator's or session's buffer when it goes away: waits for its
 * messages, then frees it (*pool becomes NULL; NULL is fine). */
void lm_bsend_pool_free(lm_bsend_pool **pool);
/* Sessions live above this layer (runtime/session.c): they register where
 * a session keeps its buffer (NULL for an invalid session). */
void lm_bsend_set_session_slots(lm_bsend_pool **(*slot_of)(MPI_Session session));

#endif
