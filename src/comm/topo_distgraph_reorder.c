/* Distributed graph constructors called with reorder = 1 (MPI-4.1 8.5.4:
 * the new communicator's rank v is the process that plays vertex v, the
 * graph's vertices being comm_old's ranks). Where placement can gain
 * (lm_topo_map_wanted: several hosts, a graph within the mapper's limit)
 * every process's part of the graph is gathered on every process for the
 * call, the vertices are placed by topo_map.c from the edges, and each
 * process builds the neighbour lists of the vertex it plays from the
 * gathered parts: in the order the non-reordered constructors give them
 * (MPI_Dist_graph_create: by declaring process, then in its order; the
 * adjacent form: the lists as that vertex's process passed them). Memory:
 * O(processes + edges) for the call, freed before returning; the record
 * kept is the vertex's own lists, as without reorder. */
#include "comm/topo_distgraph_reorder.h"
#include "coll/coll_basic.h"
#include "comm/topo_map.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <limits.h>
#include <string.h>

/* The worst of every process's rc: what all then return alike. */
static int worst_of(lm_comm *p, int rc)
{
    int worst = rc;
    int e = lm_coll_allreduce_max_int(&worst, p);
    return e ? e : worst;
}

/* Every process's record (ints) on every process: all[displ[q] ..
 * displ[q] + count[q] - 1] is process q's. mine NULL: this process could
 * not make its record; then, or where any process lacks memory for the
 * whole, every process returns MPI_ERR_NO_MEM before the exchange. The
 * caller frees *all and *displ (count lies after displ in the same
 * block). */
static int gather_records(lm_comm *p, MPI_Comm comm, const int *mine, int len, int **all, int **displ)
{
    int np = p->size, rc = MPI_SUCCESS;
    *all = NULL;
    *displ = lm_malloc(LM_MEM_COMM, 2 * (size_t)np * sizeof(int));
    int *count = *displ ? *displ + np : NULL, slot = mine ? len : -1;
    if (count) rc = lm_coll_allgather(&slot, sizeof slot, count, p);
    long long total = 0;
    for (int q = 0; q < np && count && !rc; q++) {
        (*displ)[q] = (int)total;
        total += count[q];
        if (count[q] < 0) rc = MPI_ERR_NO_MEM;
    }
    if (!rc && total > INT_MAX) rc = MPI_ERR_ARG;
    if (!rc && !(*all = lm_malloc(LM_MEM_COMM, (size_t)total * sizeof(int) + 1))) rc = MPI_ERR_NO_MEM;
    rc = worst_of(p, count ? rc : MPI_ERR_NO_MEM);
    if (!rc) rc = impl_MPI_Allgatherv(mine, len, MPI_INT, *all, count, *displ, MPI_INT, comm);
    return rc;
}

/* The vertex this process plays, placed from the directed edges (esrc[e],
 * edst[e]) taken both ways; self loops carry no traffic between processes. */
static int map_edges(lm_comm *p, long nedges, const int *esrc, const int *edst, int *key)
{
    int n = p->size;
    long arcs = 0;
    for (long e = 0; e < nedges; e++) arcs += 2 * (esrc[e] != edst[e]);
    int *xadj = lm_calloc(LM_MEM_COMM, (size_t)(2 * n + 1) + (size_t)arcs, sizeof(int));
    if (!xadj) return MPI_ERR_NO_MEM;
    int *fill = xadj + n + 1, *adj = fill + n;
    for (long e = 0; e < nedges; e++)
        if (esrc[e] != edst[e]) {
            xadj[esrc[e] + 1]++;
            xadj[edst[e] + 1]++;
        }
    for (int u = 0; u < n; u++) xadj[u + 1] += xadj[u];
    for (long e = 0; e < nedges; e++) {
        int u = esrc[e], v = edst[e];
        if (u == v) continue;
        adj[xadj[u] + fill[u]++] = v;
        adj[xadj[v] + fill[v]++] = u;
    }
    int rc = lm_topo_map_key(p, n, xadj, adj, key);
    lm_free(LM_MEM_COMM, xadj);
    return rc;
}

/* Records of MPI_Dist_graph_create: n, then n (source, degree) pairs, then
 * the destinations and, weighted, their weights. */
static int create_edges(const int *rec, int *esrc, int *edst)
{
    int n = rec[0], e = 0;
    const int *pairs = rec + 1, *dst = pairs + 2 * n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < pairs[2 * i + 1]; j++, e++)
            if (esrc) {
                esrc[e] = pairs[2 * i];
                edst[e] = dst[e];
            }
    return e;
}

/* Records of the adjacent form: weighted, in, out, sources, destinations,
 * then (weighted) source and destination weights; the record's process is
 * the source of its out-edges. */
static int adjacent_edges_of(int q, const int *rec, int *esrc, int *edst)
{
    int in = rec[1], out = rec[2];
    const int *dst = rec + 3 + in;
    for (int j = 0; esrc && j < out; j++) {
        esrc[j] = q;
        edst[j] = dst[j];
    }
    return out;
}

/* The placement of the gathered graph; *key stays this rank where it
 * gains nothing. */
static int key_of(lm_comm *p, const int *all, const int *displ, int adjacent, int *key)
{
    int np = p->size;
    long nedges = 0;
    for (int q = 0; q < np; q++)
        nedges += adjacent ? adjacent_edges_of(q, all + displ[q], NULL, NULL)
                           : create_edges(all + displ[q], NULL, NULL);
    int *e = lm_malloc(LM_MEM_COMM, 2 * (size_t)nedges * sizeof(int) + 1);
    if (!e) return MPI_ERR_NO_MEM;
    long at = 0;
    for (int q = 0; q < np; q++)
        at += adjacent ? adjacent_edges_of(q, all + displ[q], e + at, e + nedges + at)
                       : create_edges(all + displ[q], e + at, e + nedges + at);
    int rc = map_edges(p, nedges, e, e + nedges, key);
    lm_free(LM_MEM_COMM, e);
    return rc;
}

/* Vertex v's lists from MPI_Dist_graph_create's records: its in- and
 * out-edges in order of declaring process, then of declaration. */
static lm_topo *create_lists(int np, const int *all, const int *displ, int v, int weighted)
{
    int in = 0, out = 0;
    for (int pass = 0; pass < 2; pass++) {
        lm_topo *t = NULL;
        int *src = NULL, *dst = NULL, *sw = NULL, *dw = NULL, a = 0, b = 0;
        if (pass == 1) {
            t = lm_topo_new(MPI_DIST_GRAPH, in, out, (in + out) * (weighted ? 2 : 1));
            if (!t) return NULL;
            t->weighted = weighted;
            src = t->data, dst = src + in, sw = dst + out, dw = sw + in;
        }
        for (int q = 0; q < np; q++) {
            const int *rec = all + displ[q];
            int n = rec[0], e = 0, total = 0;
            const int *pairs = rec + 1, *d = pairs + 2 * n;
            for (int i = 0; i < n; i++) total += pairs[2 * i + 1];
            const int *w = d + total;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < pairs[2 * i + 1]; j++, e++) {
                    int s = pairs[2 * i], wt = weighted ? w[e] : 1;
                    if (pass == 0) {
                        in += d[e] == v;
                        out += s == v;
                        continue;
                    }
                    if (d[e] == v) {
                        if (weighted) sw[a] = wt;
                        src[a++] = s;
                    }
                    if (s == v) {
                        if (weighted) dw[b] = wt;
                        dst[b++] = d[e];
                    }
                }
        }
        if (pass == 1) return t;
    }
    return NULL;
}

/* Vertex v's lists as its process passed them to the adjacent form. */
static lm_topo *adjacent_lists(const int *rec)
{
    int weighted = rec[0], in = rec[1], out = rec[2];
    lm_topo *t = lm_topo_new(MPI_DIST_GRAPH, in, out, (in + out) * (weighted ? 2 : 1));
    if (!t) return NULL;
    t->weighted = weighted;
    memcpy(t->data, rec + 3, (size_t)(in + out) * (weighted ? 2 : 1) * sizeof(int));
    return t;
}

/* One verdict for all: a process that failed (out of memory) would play a
 * vertex the others do not expect, so all fail alike. */
static int agree(lm_comm *p, int rc, lm_topo **t)
{
    rc = worst_of(p, rc);
    if (rc && *t) {
        lm_topo_free(*t);
        *t = NULL;
    }
    return rc;
}

int lm_distgraph_reorder_wanted(const lm_comm *p) { return lm_topo_map_wanted(p, p->size); }

int lm_distgraph_create_reordered(lm_comm *p, MPI_Comm comm, int n, const int sources[], const int degrees[],
                                  const int destinations[], const int weights[], int weighted, lm_topo **t, int *key)
{
    long long total = 0;
    for (int i = 0; i < n; i++) total += degrees[i];
    long long len = 1 + 2 * (long long)n + total * (weighted ? 2 : 1);
    if (len > INT_MAX) return MPI_ERR_ARG;
    int *mine = lm_malloc(LM_MEM_COMM, (size_t)len * sizeof(int)), *all = NULL, *displ = NULL;
    if (mine) {
        mine[0] = n;
        for (int i = 0; i < n; i++) {
            mine[1 + 2 * i] = sources[i];
            mine[2 + 2 * i] = degrees[i];
        }
        int *d = mine + 1 + 2 * n;
        memcpy(d, destinations, (size_t)total * sizeof(int));
        for (long long e = 0; weighted && e < total; e++)
            d[total + e] = weights == MPI_WEIGHTS_EMPTY || weights == MPI_UNWEIGHTED ? 1 : weights[e];
    }
    *key = p->rank;
    *t = NULL;
    int rc = gather_records(p, comm, mine, (int)len, &all, &displ);
    if (!rc) rc = key_of(p, all, displ, 0, key);
    if (!rc && !(*t = create_lists(p->size, all, displ, *key, weighted))) rc = MPI_ERR_NO_MEM;
    rc = agree(p, rc, t);
    lm_free(LM_MEM_COMM, all);
    lm_free(LM_MEM_COMM, displ);
    lm_free(LM_MEM_COMM, mine);
    return rc;
}

int lm_distgraph_adjacent_reordered(lm_comm *p, MPI_Comm comm, const lm_topo *own, lm_topo **t, int *key)
{
    /* a process without its record (out of memory) still takes part, with
     * no edges, and makes every process fail alike */
    int in = own ? own->a : 0, out = own ? own->b : 0, weighted = own ? own->weighted : 0;
    int body = (in + out) * (weighted ? 2 : 1);
    int *mine = own ? lm_malloc(LM_MEM_COMM, (size_t)(3 + body) * sizeof(int)) : NULL, *all = NULL, *displ = NULL;
    if (mine) {
        mine[0] = weighted;
        mine[1] = in;
        mine[2] = out;
        memcpy(mine + 3, own->data, (size_t)body * sizeof(int));
    }
    *key = p->rank;
    *t = NULL;
    int rc = gather_records(p, comm, mine, 3 + body, &all, &displ);
    if (!rc) rc = key_of(p, all, displ, 1, key);
    if (!rc && !(*t = adjacent_lists(all + displ[*key]))) rc = MPI_ERR_NO_MEM;
    rc = agree(p, rc, t);
    lm_free(LM_MEM_COMM, all);
    lm_free(LM_MEM_COMM, displ);
    lm_free(LM_MEM_COMM, mine);
    return rc;
}
