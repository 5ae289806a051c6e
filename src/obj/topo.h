/* Process topologies (MPI-4.1 chapter 8). A communicator holds at most one
 * topology record, NULL for none; the record is freed with the communicator
 * and copied by MPI_Comm_dup. Records are compact: a Cartesian one keeps its
 * dims and periods, a distributed graph only this process's own neighbour
 * lists; a general graph keeps index and edges, since MPI_Graph_get must
 * return them. */
#ifndef LM_TOPO_H
#define LM_TOPO_H
#include <stdint.h>
#include "obj/comm.h"

typedef struct lm_topo {
    int kind;     /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    int a, b;     /* cart: ndims, -; graph: nnodes, nedges; dist: indegree, outdegree */
    int weighted; /* dist graph: weights were given */
    int n;        /* ints in data */
    /* cart:  dims[ndims] periods[ndims]
     * graph: index[nnodes] edges[nedges]
     * dist:  sources[a] destinations[b] then, if weighted, sourceweights[a] destweights[b] */
    int data[];
} lm_topo;

lm_topo *lm_topo_new(int kind, int a, int b, int n);
lm_topo *lm_topo_copy(const lm_topo *t);
void lm_topo_free(lm_topo *t);

/* The topology of comm if it has one of the given kind (0: any kind);
 * otherwise reports MPI_ERR_COMM / MPI_ERR_TOPOLOGY through comm's handler
 * into *rc and returns NULL. */
lm_topo *lm_topo_of(MPI_Comm comm, int kind, const char *fname, lm_comm **c, int *rc);

/* Neighbour lists in the order neighbourhood collectives use them (MPI-4.1
 * section 8.6): sources (receive blocks) and destinations (send blocks),
 * MPI_PROC_NULL entries included, plus the tag each block travels with so
 * that two messages between the same pair of processes in one call (a
 * periodic dimension of size 1 or 2) land in the right blocks. Arrays come
 * from lm_malloc(LM_MEM_COLL), one allocation at *in. */
typedef struct lm_topo_nbrs {
    int indeg, outdeg;
    int *in, *out, *in_tag, *out_tag;
} lm_topo_nbrs;
int lm_topo_neighbors(const lm_comm *c, const lm_topo *t, lm_topo_nbrs *nb);
void lm_topo_neighbors_free(lm_topo_nbrs *nb);

/* Cartesian helpers shared with the neighbourhood collectives. */
void lm_cart_coords(const lm_topo *t, int rank, int *coords);
int lm_cart_rank(const lm_topo *t, const int *coords);
void lm_cart_shift(const lm_topo *t, int rank, int dir, int disp, int *src, int *dst);

#endif
