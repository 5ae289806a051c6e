/* Buffered sends through the buffer attached with MPI_Buffer_attach. */
#ifndef LM_BSEND_H
#define LM_BSEND_H
#include "mpi.h"

/* Copy the message into the attached buffer and start sending the copy. The
 * request returned (if request != NULL) is already complete. */
int lm_bsend_start(const char *fname, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
/* Release the blocks of buffered sends that have completed. */
void lm_bsend_progress(void);

#endif
