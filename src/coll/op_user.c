/* User-defined reduction operations: MPI_Op_create(_c), MPI_Op_free,
 * MPI_Op_commutative, and MPI_Reduce_local. */
#include "coll/op.h"
#include "util/lm_error.h"
#include "api/impl_gen.h"
#include <limits.h>

int lm_op_user_apply(const lm_user_op *u, const void *in, void *inout, size_t count, const lm_datatype *t)
{
    MPI_Datatype dt = t->obj.handle;
    if (u->large) {
        MPI_Count len = (MPI_Count)count;
        ((MPI_User_function_c *)(void (*)(void))u->fn)((void *)in, inout, &len, &dt);
        return MPI_SUCCESS;
    }
    /* an int length: more than INT_MAX elements go in several calls */
    const char *a = in;
    char *b = inout;
    while (count) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        ((MPI_User_function *)(void (*)(void))u->fn)((void *)a, b, &len, &dt);
        a += (size_t)len * (size_t)t->extent;
        b += (size_t)len * (size_t)t->extent;
        count -= (size_t)len;
    }
    return MPI_SUCCESS;
}

void lm_op_retain(MPI_Op op)
{
    lm_user_op *u = lm_op_user_get(op);
    if (u) u->obj.refcount++;
}

void lm_op_release(MPI_Op op)
{
    lm_user_op *u = lm_op_user_get(op);
    if (u && --u->obj.refcount == 0) lm_object_free(u);
}

static int create(void (*fn)(void), int large, int commute, MPI_Op *op, const char *fname)
{
    if (!fn) return lm_err_noobj(MPI_ERR_ARG, fname, "user_fn is NULL");
    if (!op) return lm_err_noobj(MPI_ERR_ARG, fname, "op is NULL");
    lm_user_op *u = lm_object_alloc(LM_KIND_OP, sizeof *u);
    if (!u) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    u->obj.refcount = 1;
    u->fn = fn;
    u->large = large;
    u->commute = commute != 0;
    *op = u->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return create((void (*)(void))user_fn, 0, commute, op, "MPI_Op_create");
}

int impl_MPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return create((void (*)(void))user_fn, 1, commute, op, "MPI_Op_create_c");
}

int impl_MPI_Op_free(MPI_Op *op)
{
    if (!op) return lm_err_noobj(MPI_ERR_ARG, "MPI_Op_free", "op is NULL");
    if (*op != MPI_OP_NULL && LM_HANDLE_TIER(*op) == LM_TIER_BUILTIN)
        return lm_err_noobj(MPI_ERR_OP, "MPI_Op_free", "a predefined operation cannot be freed");
    if (!lm_op_user_get(*op)) return lm_err_noobj(MPI_ERR_OP, "MPI_Op_free", "invalid operation");
    lm_op_release(*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int impl_MPI_Op_commutative(MPI_Op op, int *commute)
{
    if (!lm_op_valid(op)) return lm_err_noobj(MPI_ERR_OP, "MPI_Op_commutative", "invalid operation");
    if (!commute) return lm_err_noobj(MPI_ERR_ARG, "MPI_Op_commutative", "commute is NULL");
    *commute = lm_op_commutative(op);
    return MPI_SUCCESS;
}

static int reduce_local(const void *in, void *inout, MPI_Count count, MPI_Datatype dt, MPI_Op op, const char *fname)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    if (!lm_op_valid(op)) return lm_err_noobj(MPI_ERR_OP, fname, "invalid operation");
    if (!lm_op_valid_for(op, t))
        return lm_err_noobj(MPI_ERR_OP, fname, "operation not defined for datatype %s", t->name ? t->name : "");
    if (count && (in == MPI_IN_PLACE || inout == MPI_IN_PLACE))
        return lm_err_noobj(MPI_ERR_BUFFER, fname, "MPI_IN_PLACE is not allowed here");
    if (count && in == inout) return lm_err_noobj(MPI_ERR_BUFFER, fname, "inbuf and inoutbuf are the same buffer");
    if (!count) return MPI_SUCCESS;
    int rc = lm_op_apply(op, in, inout, (size_t)count, t);
    return rc == MPI_SUCCESS ? rc : lm_err_noobj(rc, fname, "operation failed");
}

int impl_MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
    return reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local");
}

int impl_MPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op)
{
    return reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local_c");
}
