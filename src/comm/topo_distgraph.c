/* Distributed graph topologies (MPI-4.1 sections 8.5.4, 8.5.5). A process
 * keeps only its own sources and destinations (with weights if given), so
 * the record never grows with the job. */
#include "comm/topo_create.h"
#include "comm/topo_distgraph_reorder.h"
#include "coll/coll_basic.h"
#include "pt2pt/pt2pt.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <limits.h>
#include <string.h>

/* collective-context tag of the edge exchange; the basic collectives use 1-6 */
#define TAG_EDGES 40

/* The weight sentinels of mpi.h: objects of their own, compared by address. */
static int unweighted_sentinel, weights_empty_sentinel;
int *const MPI_UNWEIGHTED = &unweighted_sentinel;
int *const MPI_WEIGHTS_EMPTY = &weights_empty_sentinel;

static int check_ranks(MPI_Comm comm, int size, long long n, const int r[], const char *what, const char *fname)
{
    int rc = lm_topo_check_array(comm, r, n, what, fname);
    if (rc) return rc;
    for (long long i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= size)
            return lm_err_comm(comm, MPI_ERR_RANK, fname, "%s[%lld] = %d is not a rank", what, i, r[i]);
    return MPI_SUCCESS;
}

static int check_weights(MPI_Comm comm, long long n, const int w[], const char *what, const char *fname)
{
    if (w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY) return MPI_SUCCESS;
    int rc = lm_topo_check_array(comm, w, n, what, fname);
    if (rc) return rc;
    for (long long i = 0; i < n; i++)
        if (w[i] < 0) return lm_err_comm(comm, MPI_ERR_ARG, fname, "%s[%lld] = %d is negative", what, i, w[i]);
    return MPI_SUCCESS;
}

/* A record with sources then destinations, and their weights if weighted. */
static lm_topo *new_dist(int in, int out, int weighted)
{
    lm_topo *t = lm_topo_new(MPI_DIST_GRAPH, in, out, (in + out) * (weighted ? 2 : 1));
    if (t) t->weighted = weighted;
    return t;
}

int impl_MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                        int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                        int reorder, MPI_Comm *comm_dist_graph)
{
    const char *fname = "MPI_Dist_graph_create_adjacent";
    (void)info;
    lm_comm *p = lm_comm_get(comm_old);
    if (p->is_inter) return lm_err_comm(comm_old, MPI_ERR_COMM, fname, "topologies need an intracommunicator");
    int rc = MPI_SUCCESS;
    if (indegree < 0 || outdegree < 0)
        rc = lm_err_comm(comm_old, MPI_ERR_ARG, fname, "negative degree (%d in, %d out)", indegree, outdegree);
    if (!rc) rc = check_ranks(comm_old, p->size, indegree, sources, "sources", fname);
    if (!rc) rc = check_ranks(comm_old, p->size, outdegree, destinations, "destinations", fname);
    if (!rc) rc = check_weights(comm_old, indegree, sourceweights, "sourceweights", fname);
    if (!rc) rc = check_weights(comm_old, outdegree, destweights, "destweights", fname);
    /* each process brings its own graph: only the verdicts are compared */
    rc = lm_topo_same_everywhere(p, comm_old, 0, rc, fname);
    if (rc) return rc;
    int weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    lm_topo *t = new_dist(indegree, outdegree, weighted);
    if (t) {
        memcpy(t->data, sources, (size_t)indegree * sizeof(int));
        memcpy(t->data + indegree, destinations, (size_t)outdegree * sizeof(int));
        if (weighted) {
            int *w = t->data + indegree + outdegree;
            for (int i = 0; i < indegree; i++) w[i] = sourceweights == MPI_WEIGHTS_EMPTY ? 1 : sourceweights[i];
            for (int i = 0; i < outdegree; i++) w[indegree + i] = destweights == MPI_WEIGHTS_EMPTY ? 1 : destweights[i];
        }
    }
    int key = p->rank;
    if (reorder && lm_distgraph_reorder_wanted(p)) {
        lm_topo *own = t;
        t = NULL;
        rc = lm_distgraph_adjacent_reordered(p, comm_old, own, &t, &key);
        lm_topo_free(own);
        if (rc) return lm_err_comm(comm_old, rc, fname, "placing the graph's vertices (reorder) failed");
    }
    return lm_topo_attach(comm_old, 0, key, t, comm_dist_graph, fname);
}

enum { REC_IN, REC_OUT };
typedef struct {
    int kind, node, weight;
} edge_rec;

/* Every edge s -> d given anywhere becomes an out-record for s and an
 * in-record for d; each process sends every peer its records and builds its
 * lists from what it receives, in order of the sending rank. The per-peer
 * counts are temporary (an alltoall needs them) and freed before returning. */
static int exchange(lm_comm *p, int n, const int sources[], const int degrees[], const int destinations[],
                    const int weights[], int weighted, lm_topo **out)
{
    int np = p->size, rc = MPI_SUCCESS;
    int *scnt = lm_calloc(LM_MEM_COMM, 4 * (size_t)np, sizeof(int));
    if (!scnt) return MPI_ERR_NO_MEM;
    int *rcnt = scnt + np, *soff = rcnt + np, *roff = soff + np;
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            scnt[sources[i]]++;
            scnt[destinations[e]]++;
        }
    edge_rec *sbuf = NULL, *rbuf = NULL;
    lm_request **reqs = NULL;
    rc = lm_coll_alltoall(scnt, sizeof(int), rcnt, p);
    if (rc) goto out;
    size_t stot = 0, rtot = 0;
    for (int q = 0; q < np; q++) {
        soff[q] = (int)stot;
        roff[q] = (int)rtot;
        stot += (size_t)scnt[q];
        rtot += (size_t)rcnt[q];
    }
    sbuf = lm_malloc(LM_MEM_COMM, (stot + rtot) * sizeof(edge_rec) + 1);
    reqs = lm_malloc(LM_MEM_COMM, 2 * (size_t)np * sizeof *reqs);
    if (!sbuf || !reqs) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    rbuf = sbuf + stot;
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int s = sources[i], d = destinations[e],
                w = weighted && weights != MPI_UNWEIGHTED && weights != MPI_WEIGHTS_EMPTY ? weights[e] : 1;
            sbuf[soff[s]++] = (edge_rec){REC_OUT, d, w};
            sbuf[soff[d]++] = (edge_rec){REC_IN, s, w};
        }
    int nreq = 0, ctx = p->context_id + 1;
    for (int q = 0; q < np && !rc; q++) {
        if (!rcnt[q]) continue;
        if (q == p->rank) {
            memcpy(rbuf + roff[q], sbuf + soff[q] - scnt[q], (size_t)rcnt[q] * sizeof(edge_rec));
            continue;
        }
        rc = lm_irecv_bytes(rbuf + roff[q], (size_t)rcnt[q] * sizeof(edge_rec), q, TAG_EDGES, p, ctx, &reqs[nreq]);
        if (!rc) nreq++;
    }
    for (int q = 0; q < np && !rc; q++) {
        if (!scnt[q] || q == p->rank) continue;
        rc = lm_isend_bytes(sbuf + soff[q] - scnt[q], (size_t)scnt[q] * sizeof(edge_rec), q, TAG_EDGES, p, ctx,
                            &reqs[nreq]);
        if (!rc) nreq++;
    }
    for (int k = 0; k < nreq; k++) {
        int e = lm_wait_release(reqs[k], MPI_STATUS_IGNORE);
        if (!rc) rc = e;
    }
    if (rc) goto out;
    int in = 0, outd = 0;
    for (size_t k = 0; k < rtot; k++) {
        if (rbuf[k].kind == REC_IN) in++;
        else outd++;
    }
    lm_topo *t = new_dist(in, outd, weighted);
    if (!t) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    int *src = t->data, *dst = src + in, *sw = dst + outd, *dw = sw + in;
    for (size_t k = 0, a = 0, b = 0; k < rtot; k++) {
        if (rbuf[k].kind == REC_IN) {
            if (weighted) sw[a] = rbuf[k].weight;
            src[a++] = rbuf[k].node;
        } else {
            if (weighted) dw[b] = rbuf[k].weight;
            dst[b++] = rbuf[k].node;
        }
    }
    *out = t;
out:
    lm_free(LM_MEM_COMM, reqs);
    lm_free(LM_MEM_COMM, sbuf);
    lm_free(LM_MEM_COMM, scnt);
    return rc;
}

int impl_MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                               const int destinations[], const int weights[], MPI_Info info, int reorder,
                               MPI_Comm *comm_dist_graph)
{
    const char *fname = "MPI_Dist_graph_create";
    (void)info;
    lm_comm *p = lm_comm_get(comm_old);
    if (p->is_inter) return lm_err_comm(comm_old, MPI_ERR_COMM, fname, "topologies need an intracommunicator");
    int rc = check_ranks(comm_old, p->size, n, sources, "sources", fname);
    long long total = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (degrees[i] < 0)
            rc = lm_err_comm(comm_old, MPI_ERR_ARG, fname, "degrees[%d] = %d is negative", i, degrees[i]);
        total += degrees[i];
    }
    if (!rc && total > INT_MAX)
        rc = lm_err_comm(comm_old, MPI_ERR_ARG, fname, "the degrees add up to more than INT_MAX edges");
    if (!rc) rc = check_ranks(comm_old, p->size, total, destinations, "destinations", fname);
    if (!rc) rc = check_weights(comm_old, total, weights, "weights", fname);
    /* each process brings its own edges: only the verdicts are compared */
    rc = lm_topo_same_everywhere(p, comm_old, 0, rc, fname);
    if (rc) return rc;
    /* weighted unless MPI_UNWEIGHTED was given, which the standard requires
     * of all processes or none: agreed so that processes with no edges of
     * their own (free to pass MPI_WEIGHTS_EMPTY) answer the same */
    int weighted = weights != MPI_UNWEIGHTED;
    rc = lm_coll_allreduce_max_int(&weighted, p);
    lm_topo *t = NULL;
    int key = p->rank;
    if (!rc && reorder && lm_distgraph_reorder_wanted(p)) {
        rc = lm_distgraph_create_reordered(p, comm_old, n, sources, degrees, destinations, weights, weighted, &t, &key);
        if (rc) return lm_err_comm(comm_old, rc, fname, "placing the graph's vertices (reorder) failed");
    } else if (!rc) {
        rc = exchange(p, n, sources, degrees, destinations, weights, weighted, &t);
    }
    if (rc) return lm_err_comm(comm_old, rc, fname, "the edge exchange failed");
    return lm_topo_attach(comm_old, 0, key, t, comm_dist_graph, fname);
}

int impl_MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    int rc;
    lm_topo *t = lm_topo_of(comm, MPI_DIST_GRAPH, "MPI_Dist_graph_neighbors_count", NULL, &rc);
    if (!t) return rc;
    *indegree = t->a;
    *outdegree = t->b;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

int impl_MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                                  int destinations[], int destweights[])
{
    const char *fname = "MPI_Dist_graph_neighbors";
    int rc;
    lm_topo *t = lm_topo_of(comm, MPI_DIST_GRAPH, fname, NULL, &rc);
    if (!t) return rc;
    if (maxindegree < 0 || maxoutdegree < 0)
        return lm_err_comm(comm, MPI_ERR_ARG, fname, "negative maxindegree %d / maxoutdegree %d", maxindegree,
                           maxoutdegree);
    int in = t->a, out = t->b;
    if (maxindegree < in || maxoutdegree < out)
        return lm_err_comm(comm, MPI_ERR_ARG, fname, "maxindegree %d / maxoutdegree %d below the degrees %d / %d",
                           maxindegree, maxoutdegree, in, out);
    const int *src = t->data, *dst = src + in, *sw = dst + out, *dw = sw + in;
    int wi = t->weighted && sourceweights != MPI_UNWEIGHTED && sourceweights != MPI_WEIGHTS_EMPTY;
    int wo = t->weighted && destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY;
    if (wi) rc = lm_topo_check_array(comm, sourceweights, in, "sourceweights", fname);
    if (!rc && wo) rc = lm_topo_check_array(comm, destweights, out, "destweights", fname);
    if (rc) return rc;
    for (int i = 0; i < in; i++) {
        sources[i] = src[i];
        if (wi) sourceweights[i] = sw[i];
    }
    for (int i = 0; i < out; i++) {
        destinations[i] = dst[i];
        if (wo) destweights[i] = dw[i];
    }
    return MPI_SUCCESS;
}
