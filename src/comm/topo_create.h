/* Helpers of the topology constructors (topo_cart.c, topo_graph.c,
 * topo_distgraph.c); the records themselves are objects (obj/topo.h). */
#ifndef LM_TOPO_CREATE_H
#define LM_TOPO_CREATE_H
#include "obj/topo.h"

/* A communicator over the ranks of p with color 0 (MPI_UNDEFINED: none, in
 * *newcomm MPI_COMM_NULL), ordered by key, carrying topology t (which it owns
 * from then on; freed here when no communicator results). Collective over p. */
int lm_topo_attach(MPI_Comm parent, int color, int key, lm_topo *t, MPI_Comm *newcomm, const char *fname);

/* An array whose length only the topology or other arrays give (the
 * generated entry points check those whose length is an argument): NULL
 * only when len is 0; otherwise MPI_ERR_ARG through comm's handler. */
int lm_topo_check_array(MPI_Comm comm, const void *p, long long len, const char *name, const char *fname);

/* Constructors need the same arguments on every process (MPI-4.1 section
 * 8.5). Each process hashes its own (lm_topo_hash: n values, as 0/1 flags if
 * flags is set), and lm_topo_same_everywhere compares the hashes over p in
 * one allreduce: MPI_ERR_NOT_SAME through comm's handler on every process
 * when they differ, so no process builds a topology the others disagree
 * with. The same allreduce carries each process's verdict on its own
 * arguments (local_err: MPI_SUCCESS or the class it recorded): when any
 * process found its arguments invalid, all of them fail (each with its own
 * error, or the largest class brought). It is every topology constructor's
 * first collective step. Collective over p. */
uint64_t lm_topo_hash(uint64_t h, const int *v, int n, int flags);
int lm_topo_same_everywhere(lm_comm *p, MPI_Comm comm, uint64_t h, int local_err, const char *fname);
/* For a topology constructor that found its arguments invalid (err,
 * recorded) before that first step: take part in it so that the others
 * fail too; returns err. */
int lm_topo_abstain(lm_comm *p, int err);

#endif
