/* Sessions (MPI-4.1 section 11.3): objects of their own that share the one
 * runtime with the world model (src/runtime/init.c). */
#ifndef LM_SESSION_H
#define LM_SESSION_H
#include "mpi.h"

/* The error handler of a live session: 1 and *e set, or 0 if s is not one. */
int lm_session_errhandler(MPI_Session s, MPI_Errhandler *e);

/* The agreement state sessions keep while the runtime is up. */
int lm_sessions_init(void);
void lm_sessions_finalize(void);

#endif
