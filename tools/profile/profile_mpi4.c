/* leanmpi-profile: the MPI-4 forms, where the MPI library has them
 * (MPI_VERSION >= 4; Open MPI 4.1 is MPI-3.1 and gets none): large-count
 * (_c) sends and collectives, MPI_Isendrecv(_replace), and persistent
 * collectives, which count at each MPI_Start like persistent sends. */
#include "profile_records.h"
#include <stddef.h>

#if MPI_VERSION >= 4
#define SEND_C(name)                                                                                      \
    int MPI_##name(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) \
    {                                                                                                     \
        lmp_note_send(comm, dest, lmp_type_bytes(count, type));                                           \
        return PMPI_##name(buf, count, type, dest, tag, comm);                                            \
    }
SEND_C(Send_c)
SEND_C(Bsend_c)
SEND_C(Ssend_c)
SEND_C(Rsend_c)

#define ISEND_C(name)                                                                                     \
    int MPI_##name(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, \
                   MPI_Request *req)                                                                      \
    {                                                                                                     \
        lmp_note_send(comm, dest, lmp_type_bytes(count, type));                                           \
        return PMPI_##name(buf, count, type, dest, tag, comm, req);                                       \
    }
ISEND_C(Isend_c)
ISEND_C(Ibsend_c)
ISEND_C(Issend_c)
ISEND_C(Irsend_c)

int MPI_Sendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    lmp_note_send(comm, dest, lmp_type_bytes(scount, stype));
    return PMPI_Sendrecv_c(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}
int MPI_Isendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                  MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Request *req)
{
    lmp_note_send(comm, dest, lmp_type_bytes(scount, stype));
    return PMPI_Isendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, req);
}
int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int source, int rtag,
                          MPI_Comm comm, MPI_Request *req)
{
    lmp_note_send(comm, dest, lmp_type_bytes(count, type));
    return PMPI_Isendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, req);
}

/* Large-count collectives: blocks as their int forms count them. */
static uint64_t rooted(MPI_Comm comm, int root, MPI_Count sc, MPI_Datatype st, MPI_Count rc, MPI_Datatype rt,
                       int gather)
{
    int me = -1;
    PMPI_Comm_rank(comm, &me);
    if (gather) return me == root ? lmp_type_bytes(rc, rt) : lmp_type_bytes(sc, st);
    return me == root ? lmp_type_bytes(sc, st) : lmp_type_bytes(rc, rt);
}

int MPI_Bcast_c(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_BCAST, comm, root, lmp_type_bytes(count, type));
    return lmp_ran(PMPI_Bcast_c(buf, count, type, root, comm), comm, rec);
}
int MPI_Reduce_c(const void *s, void *r, MPI_Count count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_REDUCE, comm, root, lmp_type_bytes(count, type));
    return lmp_ran(PMPI_Reduce_c(s, r, count, type, op, root, comm), comm, rec);
}
int MPI_Allreduce_c(const void *s, void *r, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_ALLREDUCE, comm, -1, lmp_type_bytes(count, type));
    return lmp_ran(PMPI_Allreduce_c(s, r, count, type, op, comm), comm, rec);
}
int MPI_Gather_c(const void *s, MPI_Count sc, MPI_Datatype st, void *r, MPI_Count rc, MPI_Datatype rt, int root,
                 MPI_Comm comm)
{
    int rec = lmp_note_coll(C_GATHER, comm, root, rooted(comm, root, sc, st, rc, rt, 1));
    return lmp_ran(PMPI_Gather_c(s, sc, st, r, rc, rt, root, comm), comm, rec);
}
int MPI_Scatter_c(const void *s, MPI_Count sc, MPI_Datatype st, void *r, MPI_Count rc, MPI_Datatype rt, int root,
                  MPI_Comm comm)
{
    int rec = lmp_note_coll(C_SCATTER, comm, root, rooted(comm, root, sc, st, rc, rt, 0));
    return lmp_ran(PMPI_Scatter_c(s, sc, st, r, rc, rt, root, comm), comm, rec);
}
int MPI_Allgather_c(const void *s, MPI_Count sc, MPI_Datatype st, void *r, MPI_Count rc, MPI_Datatype rt, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_ALLGATHER, comm, -1, lmp_type_bytes(rc, rt));
    return lmp_ran(PMPI_Allgather_c(s, sc, st, r, rc, rt, comm), comm, rec);
}
int MPI_Allgatherv_c(const void *s, MPI_Count sc, MPI_Datatype st, void *r, const MPI_Count rcs[],
                     const MPI_Aint displs[], MPI_Datatype rt, MPI_Comm comm)
{
    int rec = lmp_note_coll_v(C_ALLGATHERV, comm, -1, NULL, rcs, rt, NULL);
    return lmp_ran(PMPI_Allgatherv_c(s, sc, st, r, rcs, displs, rt, comm), comm, rec);
}
int MPI_Alltoall_c(const void *s, MPI_Count sc, MPI_Datatype st, void *r, MPI_Count rc, MPI_Datatype rt, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_ALLTOALL, comm, -1, lmp_type_bytes(rc, rt));
    return lmp_ran(PMPI_Alltoall_c(s, sc, st, r, rc, rt, comm), comm, rec);
}
int MPI_Alltoallv_c(const void *s, const MPI_Count scs[], const MPI_Aint sds[], MPI_Datatype st, void *r,
                    const MPI_Count rcs[], const MPI_Aint rds[], MPI_Datatype rt, MPI_Comm comm)
{
    int rec = s == MPI_IN_PLACE ? lmp_note_coll_v(C_ALLTOALLV, comm, -1, NULL, rcs, rt, NULL)
                                : lmp_note_coll_v(C_ALLTOALLV, comm, -1, NULL, scs, st, NULL);
    return lmp_ran(PMPI_Alltoallv_c(s, scs, sds, st, r, rcs, rds, rt, comm), comm, rec);
}
int MPI_Reduce_scatter_block_c(const void *s, void *r, MPI_Count rc, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_REDUCE_SCATTER_BLOCK, comm, -1, lmp_type_bytes(rc, type));
    return lmp_ran(PMPI_Reduce_scatter_block_c(s, r, rc, type, op, comm), comm, rec);
}
int MPI_Scan_c(const void *s, void *r, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_SCAN, comm, -1, lmp_type_bytes(count, type));
    return lmp_ran(PMPI_Scan_c(s, r, count, type, op, comm), comm, rec);
}
int MPI_Exscan_c(const void *s, void *r, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_EXSCAN, comm, -1, lmp_type_bytes(count, type));
    return lmp_ran(PMPI_Exscan_c(s, r, count, type, op, comm), comm, rec);
}

/* Persistent collectives: remembered with what one start moves. */
static int remembered(int rc, MPI_Request *req, int kind, MPI_Comm comm, int root, uint64_t bytes)
{
    if (rc == MPI_SUCCESS && lmp_profiling()) lmp_remember_coll(*req, kind, comm, root, bytes);
    return rc;
}

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return remembered(PMPI_Barrier_init(comm, info, req), req, C_BARRIER, comm, -1, 0);
}
int MPI_Bcast_init(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return remembered(PMPI_Bcast_init(buf, count, type, root, comm, info, req), req, C_BCAST, comm, root,
                      lmp_type_bytes(count, type));
}
int MPI_Reduce_init(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *req)
{
    return remembered(PMPI_Reduce_init(s, r, count, type, op, root, comm, info, req), req, C_REDUCE, comm, root,
                      lmp_type_bytes(count, type));
}
int MPI_Allreduce_init(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,
                       MPI_Request *req)
{
    return remembered(PMPI_Allreduce_init(s, r, count, type, op, comm, info, req), req, C_ALLREDUCE, comm, -1,
                      lmp_type_bytes(count, type));
}
int MPI_Allgather_init(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                       MPI_Info info, MPI_Request *req)
{
    return remembered(PMPI_Allgather_init(s, sc, st, r, rc, rt, comm, info, req), req, C_ALLGATHER, comm, -1,
                      lmp_type_bytes(rc, rt));
}
int MPI_Alltoall_init(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                      MPI_Info info, MPI_Request *req)
{
    return remembered(PMPI_Alltoall_init(s, sc, st, r, rc, rt, comm, info, req), req, C_ALLTOALL, comm, -1,
                      lmp_type_bytes(rc, rt));
}
#endif
