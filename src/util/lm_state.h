/* Process-wide facts every layer reads: whether MPI may be used, this
 * process's place in the world, the thread level. The runtime
 * (src/runtime/init.c) publishes them; the layers below it only read, so
 * none of them has to call up into the runtime to learn them. */
#ifndef LM_STATE_H
#define LM_STATE_H
#include <stdatomic.h>

/* LM_STATE_FORKED: this process is a child that fork() made of a process
 * that had MPI initialized; it shares that process's connections and node
 * memory, so it must not use them (every call but the few allowed at any
 * time ends the job with a message naming the cause). */
enum lm_init_state {
    LM_STATE_NOT_INITIALIZED = 0,
    LM_STATE_INITIALIZED = 1,
    LM_STATE_FINALIZED = 2,
    LM_STATE_FORKED = 3
};

/* LM_STATE_INITIALIZED while the world model is initialized or a session
 * is open (MPI may be used); otherwise the world model's own state. Read
 * at the start of every MPI call, hence inline. */
extern atomic_int lm_state_init;
static inline int lm_initialized_state(void) { return atomic_load_explicit(&lm_state_init, memory_order_acquire); }
int lm_world_rank(void);
int lm_world_size(void); /* ranks that really run */
/* Non-zero in a job started with mpirun --simulate-world-size: MPI_COMM_WORLD
 * then has more ranks than run, and no message may go to the others. */
extern int lm_world_simulated;
int lm_thread_level(void);
/* Node is oversubscribed (more local ranks than usable cores): idle waits
 * yield. Inline: every wait step and every lock asks. */
extern int lm_state_oversubscribed;
static inline int lm_oversubscribed(void) { return lm_state_oversubscribed; }

/* Written by the runtime only. */
void lm_state_publish_init(int state);
void lm_state_publish_world(int world_rank, int world_size, int simulated, int oversubscribed);
void lm_state_publish_thread_level(int level);

#endif
