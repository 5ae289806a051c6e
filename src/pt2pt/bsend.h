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
/* Release the blocks of buffered sends that have completed and complete
 * the flushes waiting for them; returns how many buffers fell idle. The
 * progress engine calls it while lm_bsend_busy is set. */
int lm_bsend_progress(void);
extern volatile int lm_bsend_busy;
/* A communicator's or session's buffer when it goes away: waits for its
 * messages, then frees it (*pool becomes NULL; NULL is fine). */
void lm_bsend_pool_free(lm_bsend_pool **pool);
/* Where a session keeps its buffer (NULL for an invalid session);
 * core/session.c. */
lm_bsend_pool **lm_session_bsend(MPI_Session session);

#endif
