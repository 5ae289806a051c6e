/* Duplicating a communicator, shared by MPI_Comm_dup and MPI_Comm_idup. */
#ifndef LM_COMM_DUP_H
#define LM_COMM_DUP_H
#include "obj/comm.h"

/* Give c (new, on p's group) what a duplicate of p takes at the call: the
 * topology, the attributes through their copy callbacks, and p's hints, or
 * info's when use_info. On failure c is freed and an error class returned,
 * with what failed in *what. */
int lm_comm_dup_contents(lm_comm *p, lm_comm *c, MPI_Info info, int use_info, const char **what);

#endif
