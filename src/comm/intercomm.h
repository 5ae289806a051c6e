/* Intercommunicators. An intercommunicator is an lm_comm with is_inter set:
 * group is the local group, remote_group the remote one (point-to-point
 * ranks name remote processes, translated through lm_comm_world_rank; a
 * sender's envelope carries its local rank, which is its rank in the
 * receiver's remote group, so matching needs nothing more), and local_comm
 * a hidden intracommunicator over the local group on its own context id.
 *
 * Every construction follows one pattern: the local group ANDs its context
 * id masks over the hidden communicator, the two leaders swap masks and a
 * small payload (group lists, split tables, merge order), and each leader
 * broadcasts the combined mask and the remote payload to its group, so both
 * sides take the same lowest free id. */
#ifndef LM_INTERCOMM_H
#define LM_INTERCOMM_H
#include "obj/comm.h"

/* MPI_Comm_dup of an intercommunicator (attributes are the caller's job). */
int lm_intercomm_dup(lm_comm *p, lm_comm **out);
/* MPI_Comm_split of an intercommunicator: *out is NULL where the caller's
 * color is MPI_UNDEFINED or the remote group has no process of that color.
 * MPI_Comm_create on an intercommunicator is the split whose color is
 * membership of the group and whose key is the rank in it. */
int lm_intercomm_split(lm_comm *p, int color, int key, lm_comm **out);
/* Frees the hidden local communicator of an intercommunicator being freed. */
void lm_intercomm_release(lm_comm *c);

#endif
