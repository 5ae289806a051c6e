/* Intercommunicator collectives (coll/intercomm_coll.h). Result buffers
 * receive the remote group's data: an all-to-all operation combines, on the
 * local side, what the remote group contributed. */
#include "coll/intercomm_coll.h"
#include "coll/coll_basic.h"
#include "coll/op.h"
#include "pt2pt/pt2pt.h"
#include "core/lm_error.h"
#include "core/lm_mem.h"
#include <string.h>

#define TAG_BARRIER 1
#define TAG_BCAST 2
#define TAG_REDUCE 3
#define TAG_ALLGATHER 4
#define TAG_GATHER 5
#define TAG_SCATTER 6
#define TAG_ALLTOALL 7

static int ctx(lm_comm *c) { return c->context_id + 1; }
static int remote_size(lm_comm *c) { return c->remote_group->size; }

static int send(const void *b, size_t l, int dst, int tag, lm_comm *c)
{
    lm_request *s;
    int rc = lm_isend_bytes(b, l, dst, tag, c, ctx(c), &s);
    return rc ? rc : lm_wait_release(s, MPI_STATUS_IGNORE);
}

static int recv(void *b, size_t l, int src, int tag, lm_comm *c)
{
    lm_request *r;
    int rc = lm_irecv_bytes(b, l, src, tag, c, ctx(c), &r);
    return rc ? rc : lm_wait_release(r, MPI_STATUS_IGNORE);
}

/* The leaders' swap: sb goes to the remote leader, rb comes from it. */
static int leader_swap(const void *sb, size_t sl, void *rb, size_t rl, int tag, lm_comm *c)
{
    lm_request *s, *r;
    int rc = lm_irecv_bytes(rb, rl, 0, tag, c, ctx(c), &r);
    if (rc) return rc;
    rc = lm_isend_bytes(sb, sl, 0, tag, c, ctx(c), &s);
    int e1 = rc ? rc : lm_wait_release(s, MPI_STATUS_IGNORE);
    int e2 = lm_wait_release(r, MPI_STATUS_IGNORE);
    return e1 ? e1 : e2;
}

/* Bytes of count elements of dt (contiguous types only, as the
 * intracommunicator collectives). */
static int type_len(MPI_Comm comm, const char *fname, MPI_Datatype dt, int count, size_t *len)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (!t) return lm_err_comm(comm, MPI_ERR_TYPE, fname, "invalid datatype");
    if (!t->contiguous)
        return lm_err_comm(comm, MPI_ERR_UNSUPPORTED_OPERATION, fname,
                           "non-contiguous datatypes are not supported in this version");
    *len = (size_t)count * t->size;
    return MPI_SUCCESS;
}

static int no_in_place(MPI_Comm comm, const char *fname, const void *buf)
{
    if (buf != MPI_IN_PLACE) return MPI_SUCCESS;
    return lm_err_comm(comm, MPI_ERR_BUFFER, fname, "MPI_IN_PLACE is not allowed on an intercommunicator");
}

static int done(const char *fname, MPI_Comm comm, int rc)
{
    return rc == MPI_SUCCESS ? rc : lm_err_comm(comm, rc, fname, "communication failed");
}

int lm_inter_barrier(MPI_Comm comm, lm_comm *c)
{
    /* everyone here has entered, the leaders learn the same of the other
     * side, and the release goes round the local group */
    char x = 0, y = 0;
    int rc = lm_coll_barrier(c->local_comm);
    if (!rc && c->rank == 0) rc = leader_swap(&x, 1, &y, 1, TAG_BARRIER, c);
    if (!rc) rc = lm_coll_bcast(&y, 1, 0, c->local_comm);
    return done("MPI_Barrier", comm, rc);
}

int lm_inter_bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, lm_comm *c)
{
    const char *fname = "MPI_Bcast";
    if (root == MPI_PROC_NULL) return MPI_SUCCESS;
    size_t len;
    int rc = type_len(comm, fname, datatype, count, &len);
    if (rc) return rc;
    if (root == MPI_ROOT) return done(fname, comm, send(buffer, len, 0, TAG_BCAST, c));
    if (c->rank == 0) rc = recv(buffer, len, root, TAG_BCAST, c);
    if (!rc) rc = lm_coll_bcast(buffer, len, 0, c->local_comm);
    return done(fname, comm, rc);
}

typedef struct { MPI_Op op; const lm_datatype *t; } op_arg;

static void reduce_fn(const void *in, void *inout, size_t count, void *arg)
{
    op_arg *a = arg;
    lm_op_apply(a->op, in, inout, count, a->t);
}

int lm_inter_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                    int all, MPI_Comm comm, lm_comm *c)
{
    const char *fname = all ? "MPI_Allreduce" : "MPI_Reduce";
    if (!all && root == MPI_PROC_NULL) return MPI_SUCCESS;
    lm_datatype *t = lm_datatype_get(datatype);
    if (!t) return lm_err_comm(comm, MPI_ERR_TYPE, fname, "invalid datatype");
    if (!t->contiguous)
        return lm_err_comm(comm, MPI_ERR_UNSUPPORTED_OPERATION, fname,
                           "non-contiguous datatypes are not supported in this version");
    if (!lm_op_valid(op)) return lm_err_comm(comm, MPI_ERR_OP, fname, "invalid operation");
    if (!lm_op_valid_for(op, t))
        return lm_err_comm(comm, MPI_ERR_OP, fname, "operation not defined for datatype %s", t->name ? t->name : "");
    size_t len = (size_t)count * (size_t)t->extent;
    if (!all && root == MPI_ROOT) return done(fname, comm, recv(recvbuf, len, 0, TAG_REDUCE, c));
    int rc = no_in_place(comm, fname, sendbuf);
    if (rc) return rc;
    /* the local group's reduction gathers at the leader, which hands it to
     * the other side (its leader, or the root) */
    char *acc = NULL;
    if (c->rank == 0 && !(acc = lm_malloc(LM_MEM_COLL, len + 1)))
        return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    op_arg a = {op, t};
    rc = lm_coll_reduce(sendbuf, acc, (size_t)count, (size_t)t->extent, reduce_fn, &a, 0, c->local_comm);
    if (!rc && c->rank == 0)
        rc = all ? leader_swap(acc, len, recvbuf, len, TAG_REDUCE, c) : send(acc, len, root, TAG_REDUCE, c);
    lm_free(LM_MEM_COLL, acc);
    if (!rc && all) rc = lm_coll_bcast(recvbuf, len, 0, c->local_comm);
    return done(fname, comm, rc);
}

int lm_inter_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, lm_comm *c)
{
    const char *fname = "MPI_Allgather";
    size_t sl, rl;
    int rc = no_in_place(comm, fname, sendbuf);
    if (!rc) rc = type_len(comm, fname, sendtype, sendcount, &sl);
    if (!rc) rc = type_len(comm, fname, recvtype, recvcount, &rl);
    if (rc) return rc;
    size_t mine = sl * (size_t)c->size, theirs = rl * (size_t)remote_size(c);
    char *all = NULL;
    if (c->rank == 0 && !(all = lm_malloc(LM_MEM_COLL, mine + 1)))
        return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    rc = lm_coll_gather(sendbuf, sl, all, 0, c->local_comm);
    if (!rc && c->rank == 0) rc = leader_swap(all, mine, recvbuf, theirs, TAG_ALLGATHER, c);
    lm_free(LM_MEM_COLL, all);
    if (!rc) rc = lm_coll_bcast(recvbuf, theirs, 0, c->local_comm);
    return done(fname, comm, rc);
}

int lm_inter_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, lm_comm *c)
{
    const char *fname = "MPI_Gather";
    if (root == MPI_PROC_NULL) return MPI_SUCCESS;
    size_t len;
    int rc;
    if (root != MPI_ROOT) {
        rc = no_in_place(comm, fname, sendbuf);
        if (!rc) rc = type_len(comm, fname, sendtype, sendcount, &len);
        return rc ? rc : done(fname, comm, send(sendbuf, len, root, TAG_GATHER, c));
    }
    rc = type_len(comm, fname, recvtype, recvcount, &len);
    for (int i = 0; !rc && i < remote_size(c); i++) rc = recv((char *)recvbuf + (size_t)i * len, len, i, TAG_GATHER, c);
    return done(fname, comm, rc);
}

int lm_inter_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, lm_comm *c)
{
    const char *fname = "MPI_Scatter";
    if (root == MPI_PROC_NULL) return MPI_SUCCESS;
    size_t len;
    int rc;
    if (root != MPI_ROOT) {
        rc = no_in_place(comm, fname, recvbuf);
        if (!rc) rc = type_len(comm, fname, recvtype, recvcount, &len);
        return rc ? rc : done(fname, comm, recv(recvbuf, len, root, TAG_SCATTER, c));
    }
    rc = type_len(comm, fname, sendtype, sendcount, &len);
    for (int i = 0; !rc && i < remote_size(c); i++)
        rc = send((const char *)sendbuf + (size_t)i * len, len, i, TAG_SCATTER, c);
    return done(fname, comm, rc);
}

int lm_inter_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, lm_comm *c)
{
    const char *fname = "MPI_Alltoall";
    size_t sl, rl;
    int rc = no_in_place(comm, fname, sendbuf);
    if (!rc) rc = type_len(comm, fname, sendtype, sendcount, &sl);
    if (!rc) rc = type_len(comm, fname, recvtype, recvcount, &rl);
    if (rc) return rc;
    int n = remote_size(c), posted = 0;
    lm_request **r = lm_malloc(LM_MEM_COLL, 2 * (size_t)n * sizeof *r);
    if (!r) return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    /* every receive first, then the sends: nothing waits on anything else */
    for (int i = 0; !rc && i < n; i++)
        if (!(rc = lm_irecv_bytes((char *)recvbuf + (size_t)i * rl, rl, i, TAG_ALLTOALL, c, ctx(c), &r[posted])))
            posted++;
    for (int i = 0; !rc && i < n; i++)
        if (!(rc = lm_isend_bytes((const char *)sendbuf + (size_t)i * sl, sl, i, TAG_ALLTOALL, c, ctx(c),
                                  &r[posted])))
            posted++;
    for (int i = 0; i < posted; i++) {
        int e = lm_wait_release(r[i], MPI_STATUS_IGNORE);
        if (!rc) rc = e;
    }
    lm_free(LM_MEM_COLL, r);
    return done(fname, comm, rc);
}
