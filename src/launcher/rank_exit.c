/* Reading how a rank ended from the node segment. */
#include "rank_exit.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

void lm_rank_exit_read(lm_node_segment *seg, int local_rank, pid_t pid, int wait_status, lm_exit_wire *x)
{
    memset(x, 0, sizeof *x);
    x->wait_status = wait_status;
    x->pid = (int32_t)pid;
    x->state = atomic_load(&lm_node_segment_rank(seg, local_rank)->state);
    /* The aborting rank writes the record before it exits, but a different
     * rank may be reaped first; wait briefly for the writer to finish. */
    lm_abort_record *ar = &seg->abort_record;
    int c = atomic_load_explicit(&ar->claimed, memory_order_acquire);
    for (int i = 0; c == 1 && i < 200; i++) {
        nanosleep(&(struct timespec){0, 1000000}, NULL);
        c = atomic_load_explicit(&ar->claimed, memory_order_acquire);
    }
    x->abort_claimed = c;
    if (c == 2) {
        x->abort_rank = ar->world_rank;
        x->abort_code = ar->errorcode;
        memcpy(x->abort_message, ar->message, sizeof x->abort_message);
        x->abort_message[sizeof x->abort_message - 1] = '\0';
    }
}
