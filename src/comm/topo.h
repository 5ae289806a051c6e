/* Process topologies (MPI-4.1 chapter 8). A communicator holds at most one
 * topology record, NULL for none; the record is freed with the communicator
 * and copied by MPI_Comm_dup. Records are compact: a Cartesian one keeps its
 * dims and periods, a distributed graph only this process's own neighbour
 * lists; a general graph keeps index and edges, since MPI_Graph_get must
 * return them. */
#ifndef LM_TOPO_H
#define LM_TOPO_H
#include <stdint.h>
#include "comm/comm.h"

typedef struct lm_topo {
    int kind;        /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    int a, b;        /* cart: ndims, -; graph: nnodes, nedges; dist: indegree, outdegree */
    int weighted;    /* dist graph: weights were given */
    int n;           /* ints in data */
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

/* A communicator over the ranks of p with color 0 (MPI_UNDEFINED: none, in
 * *newcomm MPI_COMM_NULL), ordered by key, carrying topology t (which it owns
 * from then on; freed here when no communicator results). Collective over p. */
int lm_topo_attach(MPI_Comm parent, int color, int key, lm_topo *t, MPI_Comm *newcomm, const char *fname);

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

/* An array whose length only the topology or other arrays give (the
 * generated entry points check those whose length is an argument): NULL
 * only when len is 0; otherwise MPI_ERR_ARG through comm's handler. */
int lm_topo_check_array(MPI_Comm comm, const void *p, long long len, const char *name, const char *fname);

/* Constructors need the same arguments on every process (MPI-4.1 section
 * 8.5). Each process hashes its own (lm_topo_hash: n values, as 0/1 flags if
 * flags is set), and lm_topo_same_everywhere compares the hashes over p in
 * one allreduce: MPI_ERR_NOT_SAME through comm's handler on every process
 * when they differ, so no process builds a topology the others disagree
 * with. Collective over p. */
uint64_t lm_topo_hash(uint64_t h, const int *v, int n, int flags);
int lm_topo_same_everywhere(lm_comm *p, MPI_Comm comm, uint64_t h, const char *fname);

/* Cartesian helpers shared with the neighbourhood collectives. */
void lm_cart_coords(const lm_topo *t, int rank, int *coords);
int lm_cart_rank(const lm_topo *t, const int *coords);
void lm_cart_shift(const lm_topo *t, int rank, int dir, int disp, int *src, int *dst);

#endif
