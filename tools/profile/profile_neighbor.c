/* leanmpi-profile: neighbourhood collectives. Their messages are known
 * exactly from the communicator's topology (MPI-4.1 8.6: block i goes to
 * the i-th destination), so they are recorded as point-to-point sends to
 * each destination; the destinations are looked up once per communicator. */
#include "profile_records.h"
#include <stdlib.h>

/* The destinations in send-block order; -1 where the topology cannot be
 * read (no topology: the call fails in the library anyway). */
static int destinations(MPI_Comm comm, comm_info *ci)
{
    if (ci->ndests >= 0) return ci->ndests;
    int kind = MPI_UNDEFINED, n = 0, *d = NULL;
    PMPI_Topo_test(comm, &kind);
    if (kind == MPI_CART) {
        int ndims = 0;
        PMPI_Cartdim_get(comm, &ndims);
        d = malloc(sizeof *d * (size_t)(2 * ndims + 1));
        for (int i = 0; d && i < ndims; i++, n += 2) PMPI_Cart_shift(comm, i, 1, &d[n], &d[n + 1]);
    } else if (kind == MPI_GRAPH) {
        int me = 0;
        PMPI_Comm_rank(comm, &me);
        PMPI_Graph_neighbors_count(comm, me, &n);
        d = malloc(sizeof *d * (size_t)(n + 1));
        if (d) PMPI_Graph_neighbors(comm, me, n, d);
    } else if (kind == MPI_DIST_GRAPH) {
        int in = 0, out = 0, weighted = 0;
        PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
        /* weights too: a weighted graph's may not be left out everywhere */
        int *src = malloc(sizeof *src * (size_t)(2 * in + out + 1));
        d = malloc(sizeof *d * (size_t)(out + 1));
        if (src && d) PMPI_Dist_graph_neighbors(comm, in, src, src + in, out, d, src + 2 * in);
        if (!src) {
            free(d);
            d = NULL;
        }
        free(src);
        n = out;
    }
    if (!d) return -1;
    lmp_lock();
    if (ci->ndests < 0) {
        ci->dests = d;
        ci->ndests = n;
        d = NULL;
    }
    lmp_unlock();
    free(d);
    return ci->ndests;
}

/* bytes[i] (or `each` when bytes is NULL) to destination i */
static void note_neighbors(MPI_Comm comm, uint64_t each, const int *counts, MPI_Datatype type,
                           const MPI_Datatype *types)
{
    if (!lmp_profiling()) return;
    comm_info *ci = lmp_comm_info(comm);
    int n = ci ? destinations(comm, ci) : -1;
    for (int i = 0; i < n; i++)
        lmp_note_send(comm, ci->dests[i], counts ? lmp_type_bytes(counts[i], types ? types[i] : type) : each);
}

int MPI_Neighbor_allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm)
{
    note_neighbors(comm, lmp_type_bytes(sc, st), NULL, st, NULL);
    return PMPI_Neighbor_allgather(s, sc, st, r, rc, rt, comm);
}
int MPI_Ineighbor_allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                            MPI_Request *req)
{
    note_neighbors(comm, lmp_type_bytes(sc, st), NULL, st, NULL);
    return PMPI_Ineighbor_allgather(s, sc, st, r, rc, rt, comm, req);
}
int MPI_Neighbor_allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rcs[], const int displs[],
                            MPI_Datatype rt, MPI_Comm comm)
{
    note_neighbors(comm, lmp_type_bytes(sc, st), NULL, st, NULL);
    return PMPI_Neighbor_allgatherv(s, sc, st, r, rcs, displs, rt, comm);
}
int MPI_Ineighbor_allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rcs[], const int displs[],
                             MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    note_neighbors(comm, lmp_type_bytes(sc, st), NULL, st, NULL);
    return PMPI_Ineighbor_allgatherv(s, sc, st, r, rcs, displs, rt, comm, req);
}
int MPI_Neighbor_alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm)
{
    note_neighbors(comm, lmp_type_bytes(sc, st), NULL, st, NULL);
    return PMPI_Neighbor_alltoall(s, sc, st, r, rc, rt, comm);
}
int MPI_Ineighbor_alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                           MPI_Request *req)
{
    note_neighbors(comm, lmp_type_bytes(sc, st), NULL, st, NULL);
    return PMPI_Ineighbor_alltoall(s, sc, st, r, rc, rt, comm, req);
}
int MPI_Neighbor_alltoallv(const void *s, const int scs[], const int sds[], MPI_Datatype st, void *r, const int rcs[],
                           const int rds[], MPI_Datatype rt, MPI_Comm comm)
{
    note_neighbors(comm, 0, scs, st, NULL);
    return PMPI_Neighbor_alltoallv(s, scs, sds, st, r, rcs, rds, rt, comm);
}
int MPI_Ineighbor_alltoallv(const void *s, const int scs[], const int sds[], MPI_Datatype st, void *r, const int rcs[],
                            const int rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    note_neighbors(comm, 0, scs, st, NULL);
    return PMPI_Ineighbor_alltoallv(s, scs, sds, st, r, rcs, rds, rt, comm, req);
}
int MPI_Neighbor_alltoallw(const void *s, const int scs[], const MPI_Aint sds[], const MPI_Datatype sts[], void *r,
                           const int rcs[], const MPI_Aint rds[], const MPI_Datatype rts[], MPI_Comm comm)
{
    note_neighbors(comm, 0, scs, MPI_DATATYPE_NULL, sts);
    return PMPI_Neighbor_alltoallw(s, scs, sds, sts, r, rcs, rds, rts, comm);
}
int MPI_Ineighbor_alltoallw(const void *s, const int scs[], const MPI_Aint sds[], const MPI_Datatype sts[], void *r,
                            const int rcs[], const MPI_Aint rds[], const MPI_Datatype rts[], MPI_Comm comm,
                            MPI_Request *req)
{
    note_neighbors(comm, 0, scs, MPI_DATATYPE_NULL, sts);
    return PMPI_Ineighbor_alltoallw(s, scs, sds, sts, r, rcs, rds, rts, comm, req);
}
