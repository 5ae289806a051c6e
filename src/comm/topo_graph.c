/* General graph topologies (MPI-4.1 sections 8.5.3, 8.5.5, 8.5.7). The
 * whole graph is kept because MPI_Graph_get returns it; with reorder, the
 * ranks of a job across hosts are permuted so that more edges lie within a
 * host (topo_map.c). */
#include "comm/topo_create.h"
#include "comm/topo_map.h"
#include "util/lm_mem.h"
#include "util/lm_error.h"
#include "api/impl_gen.h"

#define INDEX(t) ((t)->data)
#define EDGES(t) ((t)->data + (t)->a)

static int check_graph(MPI_Comm comm, int size, int nnodes, const int index[], const int edges[], const char *fname)
{
    if (nnodes < 0) return lm_err_comm(comm, MPI_ERR_ARG, fname, "nnodes %d is negative", nnodes);
    if (nnodes > size)
        return lm_err_comm(comm, MPI_ERR_ARG, fname, "nnodes %d exceeds the communicator size %d", nnodes, size);
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return lm_err_comm(comm, MPI_ERR_ARG, fname, "index[%d] = %d is smaller than the one before", i, index[i]);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    int rc = lm_topo_check_array(comm, edges, nedges, "edges", fname);
    if (rc) return rc;
    for (int e = 0; e < nedges; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return lm_err_comm(comm, MPI_ERR_ARG, fname, "edges[%d] = %d is not a node", e, edges[e]);
    return MPI_SUCCESS;
}

/* The graph's edges from both ends (self loops left out) as
 * lm_topo_map_key takes them, and this process's key from it: its own rank
 * where there is no memory for them. */
static int graph_key(lm_comm *p, int nnodes, const int index[], const int edges[])
{
    int key = p->rank;
    if (!lm_topo_map_wanted(p, nnodes)) return key;
    int nedges = index[nnodes - 1];
    int *xadj = lm_calloc(LM_MEM_COMM, (size_t)nnodes + 1 + 2 * (size_t)nedges + (size_t)nnodes, sizeof(int));
    if (!xadj) return key;
    int *adj = xadj + nnodes + 1, *fill = adj + 2 * (size_t)nedges;
    for (int u = 0; u < nnodes; u++)
        for (int e = u ? index[u - 1] : 0; e < index[u]; e++)
            if (edges[e] != u) {
                xadj[u + 1]++;
                xadj[edges[e] + 1]++;
            }
    for (int u = 0; u < nnodes; u++) xadj[u + 1] += xadj[u];
    for (int u = 0; u < nnodes; u++)
        for (int e = u ? index[u - 1] : 0; e < index[u]; e++) {
            int v = edges[e];
            if (v == u) continue;
            adj[xadj[u] + fill[u]++] = v;
            adj[xadj[v] + fill[v]++] = u;
        }
    if (lm_topo_map_key(p, nnodes, xadj, adj, &key) != MPI_SUCCESS) key = p->rank;
    lm_free(LM_MEM_COMM, xadj);
    return key;
}

int impl_MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                          MPI_Comm *comm_graph)
{
    const char *fname = "MPI_Graph_create";
    lm_comm *p = lm_comm_get(comm_old);
    if (p->is_inter) return lm_err_comm(comm_old, MPI_ERR_COMM, fname, "topologies need an intracommunicator");
    int local_err = check_graph(comm_old, p->size, nnodes, index, edges, fname);
    int nedges = !local_err && nnodes ? index[nnodes - 1] : 0;
    uint64_t h = local_err ? 0 : lm_topo_hash(lm_topo_hash(0, index, nnodes, 0), edges, nedges, 0);
    int rc = lm_topo_same_everywhere(p, comm_old, h, local_err, fname);
    if (rc) return rc;
    lm_topo *t = lm_topo_new(MPI_GRAPH, nnodes, nedges, nnodes + nedges);
    if (t) {
        for (int i = 0; i < nnodes; i++) INDEX(t)[i] = index[i];
        for (int e = 0; e < nedges; e++) EDGES(t)[e] = edges[e];
    }
    int key = reorder && nnodes > 0 ? graph_key(p, nnodes, index, edges) : p->rank;
    return lm_topo_attach(comm_old, p->rank < nnodes ? 0 : MPI_UNDEFINED, key, t, comm_graph, fname);
}

int impl_MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    int rc;
    lm_topo *t = lm_topo_of(comm, MPI_GRAPH, "MPI_Graphdims_get", NULL, &rc);
    if (!t) return rc;
    *nnodes = t->a;
    *nedges = t->b;
    return MPI_SUCCESS;
}

int impl_MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    const char *fname = "MPI_Graph_get";
    int rc;
    lm_topo *t = lm_topo_of(comm, MPI_GRAPH, fname, NULL, &rc);
    if (!t) return rc;
    /* arrays shorter than the graph are an error, as for MPI_Cart_get:
     * filling a prefix would hand back a graph that is not this one */
    if (maxindex < t->a || maxedges < t->b)
        return lm_err_comm(comm, MPI_ERR_ARG, fname, "maxindex %d / maxedges %d below the graph's %d nodes / %d edges",
                           maxindex, maxedges, t->a, t->b);
    for (int i = 0; i < t->a; i++) index[i] = INDEX(t)[i];
    for (int e = 0; e < t->b; e++) edges[e] = EDGES(t)[e];
    return MPI_SUCCESS;
}

static lm_topo *node(MPI_Comm comm, int rank, const char *fname, int *rc)
{
    lm_topo *t = lm_topo_of(comm, MPI_GRAPH, fname, NULL, rc);
    if (t && (rank < 0 || rank >= t->a)) {
        *rc = lm_err_comm(comm, MPI_ERR_RANK, fname, "invalid rank %d", rank);
        return NULL;
    }
    return t;
}

int impl_MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    int rc;
    lm_topo *t = node(comm, rank, "MPI_Graph_neighbors_count", &rc);
    if (!t) return rc;
    *nneighbors = INDEX(t)[rank] - (rank ? INDEX(t)[rank - 1] : 0);
    return MPI_SUCCESS;
}

int impl_MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    const char *fname = "MPI_Graph_neighbors";
    int rc;
    lm_topo *t = node(comm, rank, fname, &rc);
    if (!t) return rc;
    int lo = rank ? INDEX(t)[rank - 1] : 0, n = INDEX(t)[rank] - lo;
    if (maxneighbors < n)
        return lm_err_comm(comm, MPI_ERR_ARG, fname, "maxneighbors %d below rank %d's %d neighbours", maxneighbors,
                           rank, n);
    for (int k = 0; k < n; k++) neighbors[k] = EDGES(t)[lo + k];
    return MPI_SUCCESS;
}

int impl_MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    const char *fname = "MPI_Graph_map";
    lm_comm *c = lm_comm_get(comm);
    if (c->is_inter) return lm_err_comm(comm, MPI_ERR_COMM, fname, "topologies need an intracommunicator");
    int rc = check_graph(comm, c->size, nnodes, index, edges, fname);
    if (rc) return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
