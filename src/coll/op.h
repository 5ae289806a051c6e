/* Reduction operations: the predefined ops on the predefined types (and on
 * derived types made of one of them), and user-defined ops.
 *
 * in and inout point where element 0 of type t starts (the address a user
 * would pass with t): displacements inside t apply from there. */
#ifndef LM_OP_H
#define LM_OP_H
#include "mpi.h"
#include "util/lm_handle.h"
#include "datatype/datatype.h"

/* inout[i] = in[i] op inout[i]; returns MPI_ERR_OP if op does not apply to the type. */
int lm_op_apply(MPI_Op op, const void *in, void *inout, size_t count, const lm_datatype *t);
/* Can op reduce type t in a reduction (collective or MPI_Reduce_local)?
 * MPI_REPLACE and MPI_NO_OP cannot: only the accumulate functions take them. */
int lm_op_valid_for(MPI_Op op, const lm_datatype *t);
int lm_op_valid(MPI_Op op);
/* Predefined ops are commutative; user ops say so at creation. */
int lm_op_commutative(MPI_Op op);

/* User-defined ops (op_user.c). A nonblocking collective holds a reference,
 * so MPI_Op_free during one is safe. */
typedef struct lm_user_op {
    lm_object obj;
    void (*fn)(void); /* MPI_User_function or MPI_User_function_c */
    int large;        /* created by MPI_Op_create_c */
    int commute;
} lm_user_op;
/* The user op for a handle, NULL for a predefined or invalid one (inline:
 * every reduction and accumulate asks first). */
static inline lm_user_op *lm_op_user_get(MPI_Op op)
{
    if (LM_HANDLE_TIER(op) == LM_TIER_BUILTIN) return NULL;
    return lm_object_lookup(op, LM_KIND_OP);
}
int lm_op_user_apply(const lm_user_op *u, const void *in, void *inout, size_t count, const lm_datatype *t);
void lm_op_retain(MPI_Op op);
void lm_op_release(MPI_Op op);

#endif
