/* Placement of a topology's vertices on processes, for constructors called
 * with reorder = 1 (topo_map.c). */
#ifndef LM_TOPO_MAP_H
#define LM_TOPO_MAP_H
#include "obj/comm.h"

/* The graph of n vertices (the first n processes of p take part) as a
 * symmetric adjacency: the neighbours of vertex v are adj[xadj[v] ..
 * xadj[v + 1] - 1], every edge listed from both ends. *key: the vertex
 * this process plays in the new communicator (its rank there), the same
 * placement on every process; its own rank where reordering gains nothing
 * or it plays none. MPI_SUCCESS or MPI_ERR_NO_MEM (*key is then its own
 * rank: any keys make a valid communicator, only the placement suffers). */
int lm_topo_map_key(lm_comm *p, int n, const int *xadj, const int *adj, int *key);
/* Whether lm_topo_map_key can gain anything for n vertices on p (several
 * hosts, n within its limit): callers build the adjacency only then. The
 * same answer on every process. */
int lm_topo_map_wanted(const lm_comm *p, int n);

#endif
