/* Context ids: a fixed bitmap per process (its size does not depend on the
 * job or on how many communicators were ever created); a new communicator's
 * id is one free on every member. Each communicator takes an even id for
 * point-to-point and the next odd one for collectives.
 *
 * An agreement combines the members' free masks (bitwise AND), takes the
 * lowest id in the result as candidate, reserves it on every member where
 * it is still free, and votes: when every member could reserve it, it is
 * the id; otherwise those that did give it back and the agreement starts
 * over. Agreements in one process (nonblocking ones, or threads) may then
 * run at the same time in any order without ever waiting for each other. */
#ifndef LM_CONTEXT_ID_H
#define LM_CONTEXT_ID_H
#include "obj/comm.h"

/* Collective over parent: agree on a free id. */
int lm_context_id_allocate(lm_comm *parent, uint16_t *id);
/* The same, where each member brings its verdict on its own arguments
 * (MPI_SUCCESS or an error class): when any member brings an error, no id
 * is taken and every member finds the largest class brought in *bad (0
 * otherwise), so that a collective constructor with invalid arguments on
 * some processes fails on all of them instead of leaving the others
 * waiting. Returns MPI_SUCCESS or the class of a failed agreement. */
int lm_context_id_allocate_checked(lm_comm *parent, int local_err, uint16_t *id, int *bad);
/* For a collective constructor that found its arguments invalid (err,
 * recorded) before its agreement on an id: take part in the agreement with
 * that verdict, so that the other members fail too; returns err. On an
 * intercommunicator the remote group is told as well (lm_intercomm_abstain). */
int lm_context_id_abstain(lm_comm *parent, int err);
/* The same for the duplicates (MPI_Comm_dup, MPI_Comm_idup and their
 * _with_info forms), whose agreement on an intercommunicator spans both
 * groups (lm_context_id_allocate_inter): both groups fail. */
int lm_context_id_abstain_dup(lm_comm *parent, int err);
/* The error a member with valid arguments reports when another had not. */
int lm_context_id_peer_invalid(MPI_Comm comm, int bad, const char *fname);
/* Collective over the members of g only (a subgroup of parent's group, g->my_rank
 * defined): agree on a free id using point-to-point messages tagged by tag. */
int lm_context_id_allocate_group(lm_comm *parent, const lm_group *g, int tag, uint16_t *id);
/* The same with each member's verdict on its arguments, as in
 * lm_context_id_allocate_checked. */
int lm_context_id_allocate_group_checked(lm_comm *parent, const lm_group *g, int tag, int local_err, uint16_t *id,
                                         int *bad);
/* Collective over both groups of intercommunicator p: agree on two ids free
 * on every member of both (a duplicate's and its hidden local
 * communicator's). The members of each group agree over p's hidden local
 * communicator and the two leaders swap their groups' masks and votes, so
 * that both groups take the same ids. */
int lm_context_id_allocate_inter(lm_comm *p, uint16_t ids[2]);
/* Nonblocking, collective over parent: start an agreement that the progress
 * engine moves on; done(arg, rc, ids) runs once it has ended (rc an MPI
 * error class; ids valid when rc is MPI_SUCCESS: one id, or two when parent
 * is an intercommunicator, as lm_context_id_allocate_inter). Returns
 * MPI_SUCCESS or an error class (nothing started). */
typedef void (*lm_context_id_done)(void *arg, int rc, const uint16_t *ids);
int lm_context_id_iallocate(lm_comm *parent, lm_context_id_done done, void *arg);
void lm_context_id_release(uint16_t id);
/* The id of every bridge: the two-process communicator over which the
 * leaders of two groups that meet through the launcher (accept and
 * connect, spawn, join) build their intercommunicator. The same in every
 * process of the universe, never handed out, never released; bridges
 * alive at once differ by their tags. */
#define LM_CONTEXT_BRIDGE 6

/* The constructors' part of a communicator's lifetime: at runtime start,
 * the progress hook of nonblocking agreements and the destroy hook that
 * gives back a communicator's context id (and an intercommunicator's
 * hidden local communicator). */
int lm_comm_layer_init(void);

/* Pieces for agreements that span two groups (intercommunicators, which
 * run the same candidate-and-vote protocol through their leaders): this
 * process's free mask, the AND of two masks (an lm_reduce_fn over count
 * words), the lowest id in an agreed mask (-1 if none), and reserving an
 * id (1 when it was free here and is now taken, 0 when it was not free). */
#define LM_CONTEXT_MASK_WORDS 64
typedef struct lm_cid_agreement lm_cid_agreement;
void lm_context_id_free_mask(uint32_t *m);
void lm_context_id_mask_and(const void *in, void *inout, size_t count, void *arg);
int lm_context_id_candidate(const uint32_t *m);
int lm_context_id_reserve(uint16_t id);

#endif
