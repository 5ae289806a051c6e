/* Distributed graph constructors with reorder = 1 (topo_distgraph_reorder.c). */
#ifndef LM_TOPO_DISTGRAPH_REORDER_H
#define LM_TOPO_DISTGRAPH_REORDER_H
#include "obj/comm.h"
#include "obj/topo.h"

/* Whether reordering can gain on p (the same answer on every process). */
int lm_distgraph_reorder_wanted(const lm_comm *p);
/* MPI_Dist_graph_create's arguments, checked: *key the vertex this process
 * plays (its rank in the new communicator), *t that vertex's lists. A
 * collective call; MPI_SUCCESS, or the same error on every process. */
int lm_distgraph_create_reordered(lm_comm *p, MPI_Comm comm, int n, const int sources[], const int degrees[],
                                  const int destinations[], const int weights[], int weighted, lm_topo **t, int *key);
/* The adjacent form: own holds this process's lists as passed. */
int lm_distgraph_adjacent_reordered(lm_comm *p, MPI_Comm comm, const lm_topo *own, lm_topo **t, int *key);

#endif
