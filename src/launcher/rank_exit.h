/* How a rank of this node ended: its wait status, with what its control
 * block and the node segment's abort record say. The same record serves
 * mpirun on one node and the launch agents of a job across nodes, so both
 * judge an ending by the same rules. */
#ifndef LM_LAUNCHER_RANK_EXIT_H
#define LM_LAUNCHER_RANK_EXIT_H
#include "agent_link.h"
#include "boot/node_segment.h"

#include <sys/types.h>

void lm_rank_exit_read(lm_node_segment *seg, int local_rank, pid_t pid, int wait_status, lm_exit_wire *x);

#endif
