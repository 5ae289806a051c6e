/* Building a derived type's flattened layout from copies of older types. */
#ifndef LM_TYPEMAP_H
#define LM_TYPEMAP_H
#include "datatype/datatype.h"

typedef struct lm_tm_builder {
    lm_block *blocks;
    MPI_Count nblocks, cap;
    lm_run *runs;
    MPI_Count nruns, rcap;
    MPI_Count size, nelems;
    MPI_Aint lb, ub, true_lb, true_ub;
    bool any, any_data, explicit_bounds, failed;
    int align;
} lm_tm_builder;

/* Append reps consecutive copies of old (each old->extent apart), the first
 * at byte displacement shift. */
void lm_tm_add(lm_tm_builder *b, const lm_datatype *old, MPI_Aint shift, MPI_Count reps);
/* Move the result into t (size, bounds, layout); MPI_ERR_NO_MEM if any
 * append failed. The builder is empty afterwards. */
int lm_tm_finish(lm_tm_builder *b, lm_datatype *t);
void lm_tm_discard(lm_tm_builder *b);

#endif
