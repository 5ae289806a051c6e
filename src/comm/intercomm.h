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
 * sides take the same lowest free id. Duplicates carry no payload: their
 * agreement is comm/context_id.c's state machine with the leaders' swap
 * inside it, so that MPI_Comm_idup can run it without blocking. */
#ifndef LM_INTERCOMM_H
#define LM_INTERCOMM_H
#include "obj/comm.h"

/* MPI_Comm_dup of an intercommunicator (attributes are the caller's job).
 * Its ids come from lm_context_id_allocate_inter (comm/context_id.h), which
 * MPI_Comm_idup runs as a nonblocking agreement: the duplicate is made at
 * once with lm_intercomm_dup_pending (no ids yet) and given its ids, with
 * its hidden local communicator, by lm_intercomm_dup_settle (which gives
 * them back and returns MPI_ERR_NO_MEM when that fails). */
int lm_intercomm_dup(lm_comm *p, lm_comm **out);
lm_comm *lm_intercomm_dup_pending(lm_comm *p);
int lm_intercomm_dup_settle(lm_comm *c, const uint16_t ids[2]);
/* MPI_Comm_split of an intercommunicator: *out is NULL where the caller's
 * color is MPI_UNDEFINED or the remote group has no process of that color.
 * MPI_Comm_create on an intercommunicator is the split whose color is
 * membership of the group and whose key is the rank in it. */
int lm_intercomm_split(lm_comm *p, int color, int key, lm_comm **out);
/* For a construction on intercommunicator p (dup, split, create, merge)
 * whose arguments are invalid here (err, recorded): the local group agrees
 * on it and its leader tells the remote group, so that every process of
 * both sides fails instead of waiting; returns err. Nothing (err returned)
 * when p is not an intercommunicator. */
int lm_intercomm_abstain(lm_comm *p, int err);
/* The same for MPI_Intercomm_create on local_comm L: the remote group is
 * told when this process is the local leader and its peer_comm,
 * remote_leader and tag reach the remote leader (elsewhere nobody knows
 * the remote group). */
int lm_intercomm_create_abstain(lm_comm *L, int err, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag);
/* MPI_Comm_accept and MPI_Comm_connect (so also MPI_Comm_spawn's two sides
 * and MPI_Comm_join): collective over intracommunicator L, the
 * intercommunicator between L's group and a group whose leader L's leader
 * reaches only over a bridge (a two-process communicator on
 * LM_CONTEXT_BRIDGE, comm/context_id.h; peer: the remote leader's rank in
 * it, tag: the connection's tag, both from the launcher). bridge is
 * significant at the leader only. err is this member's verdict (the
 * leader's failed request to the launcher, say): when any member brings
 * one, no member builds anything and each returns the largest class
 * brought. The groups travel as universe names and become this process's
 * ids (boot.h). MPI_SUCCESS and *out, or an error class, with
 * *remote_failed set when it is the remote side's. */
int lm_intercomm_bridge(lm_comm *L, int leader, int err, lm_comm *bridge, int peer, int tag, lm_comm **out,
                        int *remote_failed);
/* Frees the hidden local communicator of an intercommunicator being freed. */
void lm_intercomm_release(lm_comm *c);

#endif
