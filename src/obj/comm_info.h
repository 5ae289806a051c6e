/* Hints attached to a communicator (MPI_Comm_set_info/get_info): kept as an
 * info object of the communicator's own, copied by MPI_Comm_dup and replaced
 * by MPI_Comm_dup_with_info. */
#ifndef LM_COMM_INFO_H
#define LM_COMM_INFO_H
#include "obj/comm.h"

/* Add info's keys to c's hints (values of keys set before are replaced).
 * MPI_SUCCESS or MPI_ERR_NO_MEM; raises nothing. */
int lm_comm_info_set(lm_comm *c, MPI_Info info);
/* Drop c's hints. */
void lm_comm_info_free(lm_comm *c);

#endif
