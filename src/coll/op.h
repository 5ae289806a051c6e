/* Reduction operations: the predefined ops on the predefined types. */
#ifndef LM_OP_H
#define LM_OP_H
#include "mpi.h"
#include "datatype/datatype.h"

/* inout[i] = in[i] op inout[i]; returns MPI_ERR_OP if op does not apply to the type. */
int lm_op_apply(MPI_Op op, const void *in, void *inout, size_t count, const lm_datatype *t);
/* Can op be applied to type t? */
int lm_op_valid_for(MPI_Op op, const lm_datatype *t);
int lm_op_valid(MPI_Op op);

#endif
