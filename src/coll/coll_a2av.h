/* A hierarchical alltoallv or alltoallw (sched_hier_v.c) on an executor:
 * its schedule in two parts, the leader's second generated once its
 * members' counts are in. */
#ifndef LM_COLL_A2AV_H
#define LM_COLL_A2AV_H
#include "coll/coll_alg.h"
#include "coll/sched_exec.h"

/* The "hier" algorithm when the selection takes it for this call, else
 * NULL. The same answer on every rank (it depends on the communicator,
 * the kind and LEANMPI_ALLTOALLV/W_ALGORITHM only). */
const lm_coll_alg *lm_coll_a2av_selected(const lm_coll_spec *a);
/* Generate the call's schedule on x (what the executor needs later is
 * owned by x); returns an MPI error class. */
int lm_coll_a2av_generate(lm_coll_exec *x, const lm_coll_spec *a);

#endif
