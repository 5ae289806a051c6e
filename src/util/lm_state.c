/* The published process state (see lm_state.h). The init state is atomic:
 * MPI_Initialized and MPI_Finalized may be called from any thread at any
 * time, also while another thread is in MPI_Init_thread. */
#include "util/lm_state.h"
#include "mpi.h"
#include <stdatomic.h>

atomic_int lm_state_init = LM_STATE_NOT_INITIALIZED;
static int world_rank, world_size = 1, thread_level = MPI_THREAD_SINGLE;
int lm_state_oversubscribed;
int lm_world_simulated;

int lm_world_rank(void) { return world_rank; }
int lm_world_size(void) { return world_size; }
int lm_thread_level(void) { return thread_level; }

void lm_state_publish_init(int state) { atomic_store_explicit(&lm_state_init, state, memory_order_release); }

void lm_state_publish_world(int rank, int size, int simulated, int over)
{
    world_rank = rank;
    world_size = size;
    lm_world_simulated = simulated;
    lm_state_oversubscribed = over;
}

void lm_state_publish_thread_level(int level) { thread_level = level; }
