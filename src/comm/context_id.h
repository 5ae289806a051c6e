/* Context ids: a fixed bitmap per process (its size does not depend on the
 * job or on how many communicators were ever created); a new communicator's
 * id is the lowest one free on every member, agreed by a bitwise-AND
 * allreduce over the parent. Each communicator takes an even id for
 * point-to-point and the next odd one for collectives. */
#ifndef LM_CONTEXT_ID_H
#define LM_CONTEXT_ID_H
#include "obj/comm.h"

/* Collective over parent: agree on a free id. */
int lm_context_id_allocate(lm_comm *parent, uint16_t *id);
/* Collective over the members of g only (a subgroup of parent's group, g->my_rank
 * defined): agree on a free id using point-to-point messages tagged by tag. */
int lm_context_id_allocate_group(lm_comm *parent, const lm_group *g, int tag, uint16_t *id);
void lm_context_id_release(uint16_t id);

/* The constructors' part of a communicator's lifetime: at runtime start,
 * the destroy hook that gives back its context id (and an
 * intercommunicator's hidden local communicator). */
int lm_comm_layer_init(void);

/* Pieces for agreements that span two groups (intercommunicators): this
 * process's free mask, the AND of two masks (an lm_reduce_fn over count
 * words), and taking the lowest id free in an agreed mask. */
#define LM_CONTEXT_MASK_WORDS 64
void lm_context_id_free_mask(uint32_t *m);
void lm_context_id_mask_and(const void *in, void *inout, size_t count, void *arg);
int lm_context_id_take(const uint32_t *m, uint16_t *id);

#endif
