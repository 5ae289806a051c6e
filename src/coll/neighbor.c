/* Blocking neighbourhood collectives (MPI-4.1 section 8.6) on Cartesian,
 * graph and distributed graph communicators: every block is one message on
 * the collective context (so none can match user traffic), all receives
 * posted before the sends, then all waited for. Blocks to or from
 * MPI_PROC_NULL move nothing and leave the buffer untouched. */
#include "comm/topo.h"
#include "datatype/datatype.h"
#include "pt2pt/pt2pt.h"
#include "core/lm_error.h"
#include "core/lm_mem.h"
#include "binding/impl_gen.h"
#include <string.h>

/* tags on the collective context: above the basic collectives' and the
 * distributed graph exchange's; a Cartesian block adds its index */
#define TAG_NEIGHBOR 64

typedef struct { char *buf; MPI_Count count; lm_datatype *t; } blk;

typedef struct {
    lm_comm *c;
    lm_topo_nbrs nb;
    blk *s, *r;  /* outdeg send blocks, indeg receive blocks */
} plan;

static int begin(const char *fname, MPI_Comm comm, plan *p)
{
    int rc;
    lm_topo *t = lm_topo_of(comm, 0, fname, &p->c, &rc);
    if (!t) return rc;
    rc = lm_topo_neighbors(p->c, t, &p->nb);
    if (rc) return lm_err_comm(comm, rc, fname, "out of memory");
    p->s = lm_calloc(LM_MEM_COLL, (size_t)(p->nb.indeg + p->nb.outdeg) + 1, sizeof(blk));
    if (!p->s) {
        lm_topo_neighbors_free(&p->nb);
        return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    p->r = p->s + p->nb.outdeg;
    return MPI_SUCCESS;
}

static void end(plan *p)
{
    lm_free(LM_MEM_COLL, p->s);
    lm_topo_neighbors_free(&p->nb);
}

static int type_of(MPI_Comm comm, MPI_Datatype dt, const char *fname, lm_datatype **t)
{
    *t = lm_datatype_get(dt);
    if (!*t) return lm_err_comm(comm, MPI_ERR_TYPE, fname, "invalid datatype");
    return MPI_SUCCESS;
}

/* Move the blocks of p; dense data goes straight from and to the user's
 * buffers, other layouts through packed copies. */
static int run(const char *fname, MPI_Comm comm, plan *p)
{
    int in = p->nb.indeg, out = p->nb.outdeg, ctx = p->c->context_id + 1, rc = MPI_SUCCESS, nreq = 0;
    lm_request **reqs = lm_calloc(LM_MEM_COLL, (size_t)(in + out) + 1, sizeof *reqs);
    char **tmp = lm_calloc(LM_MEM_COLL, (size_t)(in + out) + 1, sizeof *tmp);
    if (!reqs || !tmp) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    for (int k = 0; k < in + out && !rc; k++) {
        int recv = k < in;
        blk *b = recv ? &p->r[k] : &p->s[k - in];
        int peer = recv ? p->nb.in[k] : p->nb.out[k - in];
        int tag = TAG_NEIGHBOR + (recv ? p->nb.in_tag[k] : p->nb.out_tag[k - in]);
        if (peer == MPI_PROC_NULL) continue;
        size_t len = (size_t)(b->count * b->t->size);
        char *data = b->buf + b->t->true_lb;
        if (!lm_datatype_dense(b->t) && len) {
            if (!(tmp[k] = lm_malloc(LM_MEM_COLL, len))) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
            if (!recv) lm_typemap_pack(b->t, b->buf, b->count, 0, tmp[k], len);
            data = tmp[k];
        }
        rc = recv ? lm_irecv_bytes(data, len, peer, tag, p->c, ctx, &reqs[nreq])
                  : lm_isend_bytes(data, len, peer, tag, p->c, ctx, &reqs[nreq]);
        if (!rc) nreq++;
    }
    for (int k = 0; k < nreq; k++) {
        int e = lm_wait_release(reqs[k], MPI_STATUS_IGNORE);
        if (!rc) rc = e;
    }
    for (int k = 0; k < in && !rc; k++)
        if (tmp[k]) lm_typemap_unpack(p->r[k].t, p->r[k].buf, p->r[k].count, 0, tmp[k],
                                      (size_t)(p->r[k].count * p->r[k].t->size));
out:
    if (tmp)
        for (int k = 0; k < in + out; k++) lm_free(LM_MEM_COLL, tmp[k]);
    lm_free(LM_MEM_COLL, tmp);
    lm_free(LM_MEM_COLL, reqs);
    end(p);
    return rc ? lm_err_comm(comm, rc, fname, "communication failed") : MPI_SUCCESS;
}

/* Each collective is written once and instantiated for the int counts of the
 * classic form and the MPI_Count counts (MPI_Aint displacements) of the
 * large-count form: CT is the count type, DT the displacement type. */

/* Both datatypes resolved and the plan begun, or return the error. */
#define BEGIN_TWO_TYPES(FNAME)                                  \
    lm_datatype *st, *rt;                                       \
    int rc = type_of(comm, sendtype, FNAME, &st);               \
    if (!rc) rc = type_of(comm, recvtype, FNAME, &rt);          \
    plan p;                                                     \
    if (!rc) rc = begin(FNAME, comm, &p);                       \
    if (rc) return rc

#define NEIGHBOR_ALLGATHER(NAME, CT)                                                                      \
    int impl_MPI_##NAME(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf,          \
                        CT recvcount, MPI_Datatype recvtype, MPI_Comm comm)                               \
    {                                                                                                     \
        BEGIN_TWO_TYPES("MPI_" #NAME);                                                                    \
        for (int k = 0; k < p.nb.outdeg; k++) p.s[k] = (blk){(char *)sendbuf, sendcount, st};            \
        for (int k = 0; k < p.nb.indeg; k++)                                                              \
            p.r[k] = (blk){(char *)recvbuf + (MPI_Aint)k * recvcount * rt->extent, recvcount, rt};        \
        return run("MPI_" #NAME, comm, &p);                                                               \
    }

#define NEIGHBOR_ALLGATHERV(NAME, CT, DT)                                                                 \
    int impl_MPI_##NAME(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf,          \
                        const CT recvcounts[], const DT displs[], MPI_Datatype recvtype, MPI_Comm comm)   \
    {                                                                                                     \
        BEGIN_TWO_TYPES("MPI_" #NAME);                                                                    \
        for (int k = 0; k < p.nb.outdeg; k++) p.s[k] = (blk){(char *)sendbuf, sendcount, st};            \
        for (int k = 0; k < p.nb.indeg; k++)                                                              \
            p.r[k] = (blk){(char *)recvbuf + (MPI_Aint)displs[k] * rt->extent, recvcounts[k], rt};        \
        return run("MPI_" #NAME, comm, &p);                                                               \
    }

#define NEIGHBOR_ALLTOALL(NAME, CT)                                                                       \
    int impl_MPI_##NAME(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf,          \
                        CT recvcount, MPI_Datatype recvtype, MPI_Comm comm)                               \
    {                                                                                                     \
        BEGIN_TWO_TYPES("MPI_" #NAME);                                                                    \
        for (int k = 0; k < p.nb.outdeg; k++)                                                             \
            p.s[k] = (blk){(char *)sendbuf + (MPI_Aint)k * sendcount * st->extent, sendcount, st};        \
        for (int k = 0; k < p.nb.indeg; k++)                                                              \
            p.r[k] = (blk){(char *)recvbuf + (MPI_Aint)k * recvcount * rt->extent, recvcount, rt};        \
        return run("MPI_" #NAME, comm, &p);                                                               \
    }

#define NEIGHBOR_ALLTOALLV(NAME, CT, DT)                                                                  \
    int impl_MPI_##NAME(const void *sendbuf, const CT sendcounts[], const DT sdispls[],                   \
                        MPI_Datatype sendtype, void *recvbuf, const CT recvcounts[], const DT rdispls[],  \
                        MPI_Datatype recvtype, MPI_Comm comm)                                             \
    {                                                                                                     \
        BEGIN_TWO_TYPES("MPI_" #NAME);                                                                    \
        for (int k = 0; k < p.nb.outdeg; k++)                                                             \
            p.s[k] = (blk){(char *)sendbuf + (MPI_Aint)sdispls[k] * st->extent, sendcounts[k], st};       \
        for (int k = 0; k < p.nb.indeg; k++)                                                              \
            p.r[k] = (blk){(char *)recvbuf + (MPI_Aint)rdispls[k] * rt->extent, recvcounts[k], rt};       \
        return run("MPI_" #NAME, comm, &p);                                                               \
    }

#define NEIGHBOR_ALLTOALLW(NAME, CT)                                                                      \
    int impl_MPI_##NAME(const void *sendbuf, const CT sendcounts[], const MPI_Aint sdispls[],             \
                        const MPI_Datatype sendtypes[], void *recvbuf, const CT recvcounts[],             \
                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)          \
    {                                                                                                     \
        const char *fname = "MPI_" #NAME;                                                                 \
        plan p;                                                                                           \
        int rc = begin(fname, comm, &p);                                                                  \
        if (rc) return rc;                                                                                \
        for (int k = 0; k < p.nb.outdeg && !rc; k++) {                                                    \
            rc = type_of(comm, sendtypes[k], fname, &p.s[k].t);                                           \
            p.s[k].buf = (char *)sendbuf + sdispls[k];                                                    \
            p.s[k].count = sendcounts[k];                                                                 \
        }                                                                                                 \
        for (int k = 0; k < p.nb.indeg && !rc; k++) {                                                     \
            rc = type_of(comm, recvtypes[k], fname, &p.r[k].t);                                           \
            p.r[k].buf = (char *)recvbuf + rdispls[k];                                                    \
            p.r[k].count = recvcounts[k];                                                                 \
        }                                                                                                 \
        if (rc) {                                                                                         \
            end(&p);                                                                                      \
            return rc;                                                                                    \
        }                                                                                                 \
        return run(fname, comm, &p);                                                                      \
    }

NEIGHBOR_ALLGATHER(Neighbor_allgather, int)
NEIGHBOR_ALLGATHER(Neighbor_allgather_c, MPI_Count)
NEIGHBOR_ALLGATHERV(Neighbor_allgatherv, int, int)
NEIGHBOR_ALLGATHERV(Neighbor_allgatherv_c, MPI_Count, MPI_Aint)
NEIGHBOR_ALLTOALL(Neighbor_alltoall, int)
NEIGHBOR_ALLTOALL(Neighbor_alltoall_c, MPI_Count)
NEIGHBOR_ALLTOALLV(Neighbor_alltoallv, int, int)
NEIGHBOR_ALLTOALLV(Neighbor_alltoallv_c, MPI_Count, MPI_Aint)
NEIGHBOR_ALLTOALLW(Neighbor_alltoallw, int)
NEIGHBOR_ALLTOALLW(Neighbor_alltoallw_c, MPI_Count)
