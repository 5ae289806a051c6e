/* MPI collectives over the basic algorithms (contiguous data, predefined
 * ops, intracommunicators). */
#include "coll/coll_basic.h"
#include "coll/intercomm_coll.h"
#include "coll/op.h"
#include "core/lm_error.h"
#include "core/lm_mem.h"
#include "binding/impl_gen.h"
#include <string.h>

typedef struct { MPI_Op op; const lm_datatype *t; } op_arg;

static void reduce_fn(const void *in, void *inout, size_t count, void *arg)
{
    op_arg *a = arg;
    lm_op_apply(a->op, in, inout, count, a->t);
}

static int setup(const char *fname, MPI_Comm comm, lm_comm **c, MPI_Datatype dt, lm_datatype **t)
{
    *c = lm_comm_get(comm);
    if (!*c) return lm_err_comm(comm, MPI_ERR_COMM, fname, "invalid communicator");
    if ((*c)->is_inter)
        return lm_err_comm(comm, MPI_ERR_COMM, fname, "%s is not supported on intercommunicators", fname);
    if (t) {
        *t = lm_datatype_get(dt);
        if (!*t) return lm_err_comm(comm, MPI_ERR_TYPE, fname, "invalid datatype");
        if (!(*t)->contiguous)
            return lm_err_comm(comm, MPI_ERR_UNSUPPORTED_OPERATION, fname,
                               "non-contiguous datatypes are not supported in this version");
    }
    return MPI_SUCCESS;
}

/* Intercommunicators take their own path (coll/intercomm_coll.c). */
static inline lm_comm *inter(MPI_Comm comm)
{
    lm_comm *c = lm_comm_get(comm);
    return c && c->is_inter ? c : NULL;
}

static int done(const char *fname, MPI_Comm comm, int rc)
{
    return rc == MPI_SUCCESS ? rc : lm_err_comm(comm, rc, fname, "communication failed");
}

int impl_MPI_Barrier(MPI_Comm comm)
{
    lm_comm *ic = inter(comm);
    if (ic) return lm_inter_barrier(comm, ic);
    lm_comm *c;
    int rc = setup("MPI_Barrier", comm, &c, 0, NULL);
    return rc ? rc : done("MPI_Barrier", comm, lm_coll_barrier(c));
}

int impl_MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    lm_comm *ic = inter(comm);
    if (ic) return lm_inter_bcast(buffer, count, datatype, root, comm, ic);
    lm_comm *c;
    lm_datatype *t;
    int rc = setup("MPI_Bcast", comm, &c, datatype, &t);
    if (rc) return rc;
    if (root < 0 || root >= c->size) return lm_err_comm(comm, MPI_ERR_ROOT, "MPI_Bcast", "invalid root %d", root);
    return done("MPI_Bcast", comm, lm_coll_bcast(buffer, (size_t)count * t->size, root, c));
}

static int reduce_common(const char *fname, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                         int root, MPI_Comm comm, int all)
{
    lm_comm *ic = inter(comm);
    if (ic) return lm_inter_reduce(sbuf, rbuf, count, dt, op, root, all, comm, ic);
    lm_comm *c;
    lm_datatype *t;
    int rc = setup(fname, comm, &c, dt, &t);
    if (rc) return rc;
    if (!all && (root < 0 || root >= c->size)) return lm_err_comm(comm, MPI_ERR_ROOT, fname, "invalid root %d", root);
    if (!lm_op_valid(op)) return lm_err_comm(comm, MPI_ERR_OP, fname, "invalid operation");
    if (!lm_op_valid_for(op, t))
        return lm_err_comm(comm, MPI_ERR_OP, fname, "operation not defined for datatype %s", t->name ? t->name : "");
    size_t len = (size_t)count * (size_t)t->extent;
    int root_here = all || c->rank == root;
    const void *src = (sbuf == MPI_IN_PLACE && root_here) ? rbuf : sbuf;
    op_arg a = {op, t};
    if (all) {
        if (src != rbuf && len) memcpy(rbuf, src, len);
        return done(fname, comm, lm_coll_allreduce(rbuf, (size_t)count, (size_t)t->extent, reduce_fn, &a, c));
    }
    return done(fname, comm, lm_coll_reduce(src, rbuf, (size_t)count, (size_t)t->extent, reduce_fn, &a, root, c));
}

int impl_MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                    MPI_Comm comm)
{
    return reduce_common("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm, 0);
}

int impl_MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_common("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, 0, comm, 1);
}

int impl_MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm)
{
    lm_comm *ic = inter(comm);
    if (ic) return lm_inter_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ic);
    lm_comm *c;
    lm_datatype *t;
    int rc = setup("MPI_Allgather", comm, &c, recvtype, &t);
    if (rc) return rc;
    size_t len = (size_t)recvcount * t->size;
    const void *src = sendbuf == MPI_IN_PLACE ? (char *)recvbuf + (size_t)c->rank * len : sendbuf;
    (void)sendcount, (void)sendtype;
    return done("MPI_Allgather", comm, lm_coll_allgather(src, len, recvbuf, c));
}

int impl_MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    lm_comm *ic = inter(comm);
    if (ic) return lm_inter_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ic);
    lm_comm *c;
    lm_datatype *t;
    int rc = setup("MPI_Gather", comm, &c, sendtype, &t);
    if (rc) return rc;
    if (root < 0 || root >= c->size) return lm_err_comm(comm, MPI_ERR_ROOT, "MPI_Gather", "invalid root %d", root);
    size_t len = (size_t)sendcount * t->size;
    if (c->rank == root) {
        lm_datatype *rt = lm_datatype_get(recvtype);
        if (!rt) return lm_err_comm(comm, MPI_ERR_TYPE, "MPI_Gather", "invalid receive datatype");
        len = (size_t)recvcount * rt->size;
        if (sendbuf == MPI_IN_PLACE) sendbuf = (char *)recvbuf + (size_t)root * len;
    }
    return done("MPI_Gather", comm, lm_coll_gather(sendbuf, len, recvbuf, root, c));
}

int impl_MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    lm_comm *ic = inter(comm);
    if (ic) return lm_inter_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ic);
    lm_comm *c;
    lm_datatype *t;
    int rc = setup("MPI_Scatter", comm, &c, recvtype, &t);
    if (rc) return rc;
    if (root < 0 || root >= c->size) return lm_err_comm(comm, MPI_ERR_ROOT, "MPI_Scatter", "invalid root %d", root);
    size_t len = (size_t)recvcount * t->size;
    if (c->rank == root) {
        lm_datatype *st = lm_datatype_get(sendtype);
        if (!st) return lm_err_comm(comm, MPI_ERR_TYPE, "MPI_Scatter", "invalid send datatype");
        len = (size_t)sendcount * st->size;
        if (recvbuf == MPI_IN_PLACE) recvbuf = (char *)sendbuf + (size_t)root * len;
    }
    return done("MPI_Scatter", comm, lm_coll_scatter(sendbuf, len, recvbuf, root, c));
}

int impl_MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm)
{
    lm_comm *ic = inter(comm);
    if (ic) return lm_inter_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ic);
    lm_comm *c;
    lm_datatype *t;
    int rc = setup("MPI_Alltoall", comm, &c, recvtype, &t);
    if (rc) return rc;
    size_t len = (size_t)recvcount * t->size;
    (void)sendcount, (void)sendtype;
    if (sendbuf == MPI_IN_PLACE) {
        void *copy = lm_malloc(LM_MEM_COLL, len * (size_t)c->size + 1);
        if (!copy) return lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Alltoall", "out of memory");
        memcpy(copy, recvbuf, len * (size_t)c->size);
        rc = lm_coll_alltoall(copy, len, recvbuf, c);
        lm_free(LM_MEM_COLL, copy);
        return done("MPI_Alltoall", comm, rc);
    }
    return done("MPI_Alltoall", comm, lm_coll_alltoall(sendbuf, len, recvbuf, c));
}
