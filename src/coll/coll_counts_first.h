/* Collectives whose schedule a node's first rank can finish only once its
 * members' counts are in (algorithms with counts_first: the v forms
 * across nodes, sched_hier_v.c), on an executor. */
#ifndef LM_COLL_COUNTS_FIRST_H
#define LM_COLL_COUNTS_FIRST_H
#include "coll/coll_alg.h"
#include "coll/sched_exec.h"

/* Generate g's schedule for the call on x (what the executor needs later
 * is owned by x); returns an MPI error class. */
int lm_coll_counts_first_generate(lm_coll_exec *x, const lm_coll_alg *g, const lm_coll_spec *a);

#endif
