/* Library-wide state: init/finalize status and the facts every layer needs. */
#ifndef LM_STATE_H
#define LM_STATE_H

enum lm_init_state { LM_STATE_NOT_INITIALIZED = 0, LM_STATE_INITIALIZED = 1, LM_STATE_FINALIZED = 2 };

int lm_initialized_state(void);
int lm_world_rank(void);
int lm_world_size(void);   /* ranks that really run */
/* Non-zero in a job started with mpirun --simulate-world-size: MPI_COMM_WORLD
 * then has more ranks than run, and no message may go to the others. */
extern int lm_world_simulated;
int lm_thread_level(void);
/* Node is oversubscribed (more local ranks than usable cores): idle waits yield. */
int lm_oversubscribed(void);

/* The runtime is shared by the world model and the sessions (src/core/init.c):
 * acquire starts or wakes it for one more user (raising the error itself
 * and returning its code on failure), release lets one go. */
int lm_runtime_acquire(const char *fname, int required_thread_level, int *provided);
void lm_runtime_release(void);
/* State that lives as long as the runtime: sessions (src/core/session.c),
 * Fortran 90 parameterized types (src/datatype/f90_types.c). */
void lm_sessions_finalize(void);
void lm_f90_types_finalize(void);

#endif
