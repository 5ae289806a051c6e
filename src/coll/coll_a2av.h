/* The counts exchange ahead of a hierarchical alltoallv or alltoallw
 * (sched_hier_v.c): run on every rank of the communicator before its data
 * schedule is generated. */
#ifndef LM_COLL_A2AV_H
#define LM_COLL_A2AV_H
#include "coll/coll_alg.h"
#include "obj/comm.h"

typedef struct lm_coll_a2av_plan {
    lm_coll_a2av a2av; /* what the data schedule reads (spec.a2av) */
    void *mem;         /* the rows, until lm_coll_a2av_plan_free */
} lm_coll_a2av_plan;

/* Would the selection take "hier" for this call if it had a plan? The
 * same answer on every rank (it depends on the communicator, the kind and
 * LEANMPI_ALLTOALLV/W_ALGORITHM only). */
int lm_coll_a2av_wanted(const lm_coll_spec *a);
/* Members send the leader their counts; returns an MPI error class. */
int lm_coll_a2av_plan_make(lm_comm *c, const lm_coll_spec *a, lm_coll_a2av_plan *p);
void lm_coll_a2av_plan_free(lm_coll_a2av_plan *p);

#endif
