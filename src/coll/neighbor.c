/* Neighbourhood collectives (MPI-4.1 section 8.6) on Cartesian, graph and
 * distributed graph communicators, blocking, nonblocking and persistent:
 * one schedule round with a message per block, run by the collective
 * executor (so their messages carry the collective's sequence number and
 * can never match another collective's). Blocks to or from MPI_PROC_NULL
 * move nothing and leave the buffer untouched. */
#include "coll/coll_args.h"
#include "coll/sched_exec.h"
#include "obj/topo.h"
#include "datatype/datatype.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <stdint.h>
#include <string.h>

typedef struct {
    lm_comm *c;
    lm_topo_nbrs nb;
    lm_coll_block *s, *r; /* outdeg send blocks, indeg receive blocks */
} plan;

static int begin(const char *fname, MPI_Comm comm, int mode, MPI_Request *request, plan *p)
{
    int rc;
    if (mode != LM_RUN_BLOCKING && !request) return lm_err_comm(comm, MPI_ERR_ARG, fname, "request is NULL");
    lm_topo *t = lm_topo_of(comm, 0, fname, &p->c, &rc);
    if (!t) return rc;
    rc = lm_topo_neighbors(p->c, t, &p->nb);
    if (rc) return lm_err_comm(comm, rc, fname, "out of memory");
    p->s = lm_calloc(LM_MEM_COLL, (size_t)(p->nb.indeg + p->nb.outdeg) + 1, sizeof *p->s);
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

/* Messages of one direction, in tag order: a Cartesian neighbour can be
 * the same rank twice (periodic, size 2), and both sides then order their
 * messages by the block's tag, so first-come matching pairs them right. */
static void post(lm_sched *s, int n, const int *peer, const int *tag, const size_t *len, const size_t *off, int is_send)
{
    int maxtag = 0;
    for (int k = 0; k < n; k++)
        if (tag[k] > maxtag) maxtag = tag[k];
    for (int t = 0; t <= maxtag; t++)
        for (int k = 0; k < n; k++) {
            if (tag[k] != t || peer[k] == MPI_PROC_NULL || !len[k]) continue;
            if (is_send) lm_sched_send(s, peer[k], LM_SLOT_SEND, off[k], len[k]);
            else lm_sched_recv(s, peer[k], LM_SLOT_RECV, off[k], len[k]);
        }
}

/* Whether a block that moves data would start at address 0 (a NULL
 * buffer; MPI_BOTTOM takes a type or displacement that points elsewhere). */
static int null_block(const lm_coll_block *b, const int *peer, int n)
{
    for (int k = 0; k < n; k++)
        if (b[k].count > 0 && peer[k] != MPI_PROC_NULL && (uintptr_t)b[k].buf + (uintptr_t)b[k].t->true_lb == 0)
            return 1;
    return 0;
}

/* Move the blocks of p (and end it): dense data straight from and to the
 * user's buffers, other layouts through packed copies. */
static int run(const char *fname, MPI_Comm comm, plan *p, int mode, MPI_Request *request)
{
    int in = p->nb.indeg, out = p->nb.outdeg, rc = MPI_SUCCESS;
    int null_send = null_block(p->s, p->nb.out, out);
    if (null_send || null_block(p->r, p->nb.in, in)) {
        end(p);
        return lm_err_comm(comm, MPI_ERR_BUFFER, fname, "argument %s is NULL with data to move",
                           null_send ? "sendbuf" : "recvbuf");
    }
    lm_coll_exec *x = lm_coll_exec_new(p->c);
    size_t *len = lm_calloc(LM_MEM_COLL, 2 * (size_t)(in + out) + 1, sizeof *len);
    if (!x || !len) {
        lm_coll_exec_free(x);
        lm_free(LM_MEM_COLL, len);
        end(p);
        return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    size_t *off = len + in + out;
    for (int k = 0; k < out; k++)
        if (p->nb.out[k] == MPI_PROC_NULL) p->s[k].count = 0;
    for (int k = 0; k < in; k++)
        if (p->nb.in[k] == MPI_PROC_NULL) p->r[k].count = 0;
    lm_coll_exec_blocks(x, LM_SLOT_SEND, out, p->s, 1, 0, len, off);
    lm_coll_exec_blocks(x, LM_SLOT_RECV, in, p->r, 0, 1, len + out, off + out);
    post(&x->sched, out, p->nb.out, p->nb.out_tag, len, off, 1);
    post(&x->sched, in, p->nb.in, p->nb.in_tag, len + out, off + out, 0);
    lm_sched_round(&x->sched);
    lm_free(LM_MEM_COLL, len);
    end(p);
    if (mode == LM_RUN_BLOCKING) {
        rc = lm_coll_exec_run(x);
        lm_coll_exec_free(x);
        return rc ? lm_err_comm(comm, rc, fname, "communication failed") : MPI_SUCCESS;
    }
    lm_request *r;
    rc = lm_coll_exec_start_request(x, mode == LM_RUN_PERSISTENT, &r);
    if (rc) return lm_err_comm(comm, rc, fname, "could not start");
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

/* Each collective is written once (a static function taking lm_arr arrays,
 * the run mode and the request) and given its six entry points: classic and
 * large-count, each blocking, nonblocking and persistent. */

/* Both datatypes resolved and the plan begun, or return the error. */
#define BEGIN_TWO_TYPES()                                \
    lm_datatype *st, *rt;                                \
    int rc = type_of(comm, sendtype, fname, &st);        \
    if (!rc) rc = type_of(comm, recvtype, fname, &rt);   \
    plan p;                                              \
    if (!rc) rc = begin(fname, comm, mode, request, &p); \
    if (rc) return rc

/* An entry of an alltoallw types array: valid and committed. */
static int entry_type(MPI_Comm comm, MPI_Datatype dt, const char *fname, const char *array, int k, lm_datatype **t)
{
    *t = lm_datatype_get(dt);
    if (!*t) return lm_err_comm(comm, MPI_ERR_TYPE, fname, "%s[%d] is not a valid datatype", array, k);
    if (!(*t)->committed) return lm_err_comm(comm, MPI_ERR_TYPE, fname, "%s[%d] has not been committed", array, k);
    return MPI_SUCCESS;
}

/* counts[k] for k < n: present and not negative */
static int check_counts(const char *fname, MPI_Comm comm, lm_arr counts, const void *displs, int n)
{
    if (n && (!counts.p || !displs))
        return lm_err_comm(comm, MPI_ERR_ARG, fname, "a counts or displacements array is NULL");
    for (int k = 0; k < n; k++)
        if (lm_arr_at(counts, k) < 0) return lm_err_comm(comm, MPI_ERR_COUNT, fname, "negative count at index %d", k);
    return MPI_SUCCESS;
}

static int allgather_any(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, int mode,
                         MPI_Request *request)
{
    BEGIN_TWO_TYPES();
    for (int k = 0; k < p.nb.outdeg; k++) p.s[k] = (lm_coll_block){sendbuf, sendcount, st};
    for (int k = 0; k < p.nb.indeg; k++)
        p.r[k] = (lm_coll_block){(char *)recvbuf + (MPI_Aint)k * recvcount * rt->extent, recvcount, rt};
    return run(fname, comm, &p, mode, request);
}

static int allgatherv_any(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, lm_arr recvcounts, lm_arr displs, MPI_Datatype recvtype, MPI_Comm comm,
                          int mode, MPI_Request *request)
{
    BEGIN_TWO_TYPES();
    if ((rc = check_counts(fname, comm, recvcounts, displs.p, p.nb.indeg))) {
        end(&p);
        return rc;
    }
    for (int k = 0; k < p.nb.outdeg; k++) p.s[k] = (lm_coll_block){sendbuf, sendcount, st};
    for (int k = 0; k < p.nb.indeg; k++)
        p.r[k] = (lm_coll_block){(char *)recvbuf + (MPI_Aint)lm_arr_at(displs, k) * rt->extent,
                                 lm_arr_at(recvcounts, k), rt};
    return run(fname, comm, &p, mode, request);
}

static int alltoall_any(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, int mode,
                        MPI_Request *request)
{
    BEGIN_TWO_TYPES();
    for (int k = 0; k < p.nb.outdeg; k++)
        p.s[k] = (lm_coll_block){(const char *)sendbuf + (MPI_Aint)k * sendcount * st->extent, sendcount, st};
    for (int k = 0; k < p.nb.indeg; k++)
        p.r[k] = (lm_coll_block){(char *)recvbuf + (MPI_Aint)k * recvcount * rt->extent, recvcount, rt};
    return run(fname, comm, &p, mode, request);
}

static int alltoallv_any(const char *fname, const void *sendbuf, lm_arr sendcounts, lm_arr sdispls,
                         MPI_Datatype sendtype, void *recvbuf, lm_arr recvcounts, lm_arr rdispls, MPI_Datatype recvtype,
                         MPI_Comm comm, int mode, MPI_Request *request)
{
    BEGIN_TWO_TYPES();
    if ((rc = check_counts(fname, comm, sendcounts, sdispls.p, p.nb.outdeg)) ||
        (rc = check_counts(fname, comm, recvcounts, rdispls.p, p.nb.indeg))) {
        end(&p);
        return rc;
    }
    for (int k = 0; k < p.nb.outdeg; k++)
        p.s[k] = (lm_coll_block){(const char *)sendbuf + (MPI_Aint)lm_arr_at(sdispls, k) * st->extent,
                                 lm_arr_at(sendcounts, k), st};
    for (int k = 0; k < p.nb.indeg; k++)
        p.r[k] = (lm_coll_block){(char *)recvbuf + (MPI_Aint)lm_arr_at(rdispls, k) * rt->extent,
                                 lm_arr_at(recvcounts, k), rt};
    return run(fname, comm, &p, mode, request);
}

static int alltoallw_any(const char *fname, const void *sendbuf, lm_arr sendcounts, const MPI_Aint sdispls[],
                         const MPI_Datatype sendtypes[], void *recvbuf, lm_arr recvcounts, const MPI_Aint rdispls[],
                         const MPI_Datatype recvtypes[], MPI_Comm comm, int mode, MPI_Request *request)
{
    plan p;
    int rc = begin(fname, comm, mode, request, &p);
    if (rc) return rc;
    if ((rc = check_counts(fname, comm, sendcounts, sdispls, p.nb.outdeg)) ||
        (rc = check_counts(fname, comm, recvcounts, rdispls, p.nb.indeg))) {
        end(&p);
        return rc;
    }
    if ((p.nb.outdeg && !sendtypes) || (p.nb.indeg && !recvtypes)) {
        end(&p);
        return lm_err_comm(comm, MPI_ERR_ARG, fname, "%s is NULL", sendtypes ? "recvtypes" : "sendtypes");
    }
    /* as in alltoallw, the type of an empty block is not looked at */
    for (int k = 0; k < p.nb.outdeg && !rc; k++) {
        p.s[k].buf = (const char *)sendbuf + sdispls[k];
        p.s[k].count = lm_arr_at(sendcounts, k);
        if (p.s[k].count) rc = entry_type(comm, sendtypes[k], fname, "sendtypes", k, &p.s[k].t);
    }
    for (int k = 0; k < p.nb.indeg && !rc; k++) {
        p.r[k].buf = (char *)recvbuf + rdispls[k];
        p.r[k].count = lm_arr_at(recvcounts, k);
        if (p.r[k].count) rc = entry_type(comm, recvtypes[k], fname, "recvtypes", k, &p.r[k].t);
    }
    if (rc) {
        end(&p);
        return rc;
    }
    return run(fname, comm, &p, mode, request);
}

/* The entry points: SUF is empty or _c, CT and DT the count and
 * displacement types of that form. */
#define NB LM_RUN_BLOCKING, NULL
#define NN LM_RUN_NONBLOCKING, request
#define NP LM_RUN_PERSISTENT, request

#define NEIGHBOR_ALLGATHER(SUF, CT)                                                                                    \
    int impl_MPI_Neighbor_allgather##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf,      \
                                         CT recvcount, MPI_Datatype recvtype, MPI_Comm comm)                           \
    {                                                                                                                  \
        return allgather_any("MPI_Neighbor_allgather" #SUF, sendbuf, sendcount, sendtype, recvbuf, recvcount,          \
                             recvtype, comm, NB);                                                                      \
    }                                                                                                                  \
    int impl_MPI_Ineighbor_allgather##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf,     \
                                          CT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)    \
    {                                                                                                                  \
        return allgather_any("MPI_Ineighbor_allgather" #SUF, sendbuf, sendcount, sendtype, recvbuf, recvcount,         \
                             recvtype, comm, NN);                                                                      \
    }                                                                                                                  \
    int impl_MPI_Neighbor_allgather_init##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf, \
                                              CT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,       \
                                              MPI_Request *request)                                                    \
    {                                                                                                                  \
        (void)info;                                                                                                    \
        return allgather_any("MPI_Neighbor_allgather_init" #SUF, sendbuf, sendcount, sendtype, recvbuf, recvcount,     \
                             recvtype, comm, NP);                                                                      \
    }

#define NEIGHBOR_ALLGATHERV(SUF, CT, DT)                                                                            \
    int impl_MPI_Neighbor_allgatherv##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf,  \
                                          const CT recvcounts[], const DT displs[], MPI_Datatype recvtype,          \
                                          MPI_Comm comm)                                                            \
    {                                                                                                               \
        return allgatherv_any("MPI_Neighbor_allgatherv" #SUF, sendbuf, sendcount, sendtype, recvbuf,                \
                              LM_ARR(recvcounts), LM_ARR(displs), recvtype, comm, NB);                              \
    }                                                                                                               \
    int impl_MPI_Ineighbor_allgatherv##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf, \
                                           const CT recvcounts[], const DT displs[], MPI_Datatype recvtype,         \
                                           MPI_Comm comm, MPI_Request *request)                                     \
    {                                                                                                               \
        return allgatherv_any("MPI_Ineighbor_allgatherv" #SUF, sendbuf, sendcount, sendtype, recvbuf,               \
                              LM_ARR(recvcounts), LM_ARR(displs), recvtype, comm, NN);                              \
    }                                                                                                               \
    int impl_MPI_Neighbor_allgatherv_init##SUF(                                                                     \
        const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf, const CT recvcounts[],             \
        const DT displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)               \
    {                                                                                                               \
        (void)info;                                                                                                 \
        return allgatherv_any("MPI_Neighbor_allgatherv_init" #SUF, sendbuf, sendcount, sendtype, recvbuf,           \
                              LM_ARR(recvcounts), LM_ARR(displs), recvtype, comm, NP);                              \
    }

#define NEIGHBOR_ALLTOALL(SUF, CT)                                                                                     \
    int impl_MPI_Neighbor_alltoall##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf,       \
                                        CT recvcount, MPI_Datatype recvtype, MPI_Comm comm)                            \
    {                                                                                                                  \
        return alltoall_any("MPI_Neighbor_alltoall" #SUF, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,  \
                            comm, NB);                                                                                 \
    }                                                                                                                  \
    int impl_MPI_Ineighbor_alltoall##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf,      \
                                         CT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)     \
    {                                                                                                                  \
        return alltoall_any("MPI_Ineighbor_alltoall" #SUF, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, \
                            comm, NN);                                                                                 \
    }                                                                                                                  \
    int impl_MPI_Neighbor_alltoall_init##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf,  \
                                             CT recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,        \
                                             MPI_Request *request)                                                     \
    {                                                                                                                  \
        (void)info;                                                                                                    \
        return alltoall_any("MPI_Neighbor_alltoall_init" #SUF, sendbuf, sendcount, sendtype, recvbuf, recvcount,       \
                            recvtype, comm, NP);                                                                       \
    }

#define NEIGHBOR_ALLTOALLV(SUF, CT, DT)                                                                                \
    int impl_MPI_Neighbor_alltoallv##SUF(const void *sendbuf, const CT sendcounts[], const DT sdispls[],               \
                                         MPI_Datatype sendtype, void *recvbuf, const CT recvcounts[],                  \
                                         const DT rdispls[], MPI_Datatype recvtype, MPI_Comm comm)                     \
    {                                                                                                                  \
        return alltoallv_any("MPI_Neighbor_alltoallv" #SUF, sendbuf, LM_ARR(sendcounts), LM_ARR(sdispls), sendtype,    \
                             recvbuf, LM_ARR(recvcounts), LM_ARR(rdispls), recvtype, comm, NB);                        \
    }                                                                                                                  \
    int impl_MPI_Ineighbor_alltoallv##SUF(                                                                             \
        const void *sendbuf, const CT sendcounts[], const DT sdispls[], MPI_Datatype sendtype, void *recvbuf,          \
        const CT recvcounts[], const DT rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)         \
    {                                                                                                                  \
        return alltoallv_any("MPI_Ineighbor_alltoallv" #SUF, sendbuf, LM_ARR(sendcounts), LM_ARR(sdispls), sendtype,   \
                             recvbuf, LM_ARR(recvcounts), LM_ARR(rdispls), recvtype, comm, NN);                        \
    }                                                                                                                  \
    int impl_MPI_Neighbor_alltoallv_init##SUF(const void *sendbuf, const CT sendcounts[], const DT sdispls[],          \
                                              MPI_Datatype sendtype, void *recvbuf, const CT recvcounts[],             \
                                              const DT rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, \
                                              MPI_Request *request)                                                    \
    {                                                                                                                  \
        (void)info;                                                                                                    \
        return alltoallv_any("MPI_Neighbor_alltoallv_init" #SUF, sendbuf, LM_ARR(sendcounts), LM_ARR(sdispls),         \
                             sendtype, recvbuf, LM_ARR(recvcounts), LM_ARR(rdispls), recvtype, comm, NP);              \
    }

#define NEIGHBOR_ALLTOALLW(SUF, CT)                                                                                    \
    int impl_MPI_Neighbor_alltoallw##SUF(const void *sendbuf, const CT sendcounts[], const MPI_Aint sdispls[],         \
                                         const MPI_Datatype sendtypes[], void *recvbuf, const CT recvcounts[],         \
                                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)      \
    {                                                                                                                  \
        return alltoallw_any("MPI_Neighbor_alltoallw" #SUF, sendbuf, LM_ARR(sendcounts), sdispls, sendtypes, recvbuf,  \
                             LM_ARR(recvcounts), rdispls, recvtypes, comm, NB);                                        \
    }                                                                                                                  \
    int impl_MPI_Ineighbor_alltoallw##SUF(const void *sendbuf, const CT sendcounts[], const MPI_Aint sdispls[],        \
                                          const MPI_Datatype sendtypes[], void *recvbuf, const CT recvcounts[],        \
                                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,     \
                                          MPI_Request *request)                                                        \
    {                                                                                                                  \
        return alltoallw_any("MPI_Ineighbor_alltoallw" #SUF, sendbuf, LM_ARR(sendcounts), sdispls, sendtypes, recvbuf, \
                             LM_ARR(recvcounts), rdispls, recvtypes, comm, NN);                                        \
    }                                                                                                                  \
    int impl_MPI_Neighbor_alltoallw_init##SUF(const void *sendbuf, const CT sendcounts[], const MPI_Aint sdispls[],    \
                                              const MPI_Datatype sendtypes[], void *recvbuf, const CT recvcounts[],    \
                                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, \
                                              MPI_Info info, MPI_Request *request)                                     \
    {                                                                                                                  \
        (void)info;                                                                                                    \
        return alltoallw_any("MPI_Neighbor_alltoallw_init" #SUF, sendbuf, LM_ARR(sendcounts), sdispls, sendtypes,      \
                             recvbuf, LM_ARR(recvcounts), rdispls, recvtypes, comm, NP);                               \
    }

NEIGHBOR_ALLGATHER(, int)
NEIGHBOR_ALLGATHER(_c, MPI_Count)
NEIGHBOR_ALLGATHERV(, int, int)
NEIGHBOR_ALLGATHERV(_c, MPI_Count, MPI_Aint)
NEIGHBOR_ALLTOALL(, int)
NEIGHBOR_ALLTOALL(_c, MPI_Count)
NEIGHBOR_ALLTOALLV(, int, int)
NEIGHBOR_ALLTOALLV(_c, MPI_Count, MPI_Aint)
NEIGHBOR_ALLTOALLW(, int)
NEIGHBOR_ALLTOALLW(_c, MPI_Count)
