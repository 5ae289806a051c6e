/* Collectives over point-to-point on a communicator's collective context.
 * Simple algorithms (dissemination barrier, binomial trees, recursive
 * doubling); used by communicator management and by the MPI collectives. */
#ifndef LM_COLL_BASIC_H
#define LM_COLL_BASIC_H
#include <stddef.h>
#include "obj/comm.h"
#include "datatype/datatype.h"

typedef void (*lm_reduce_fn)(const void *in, void *inout, size_t count, void *arg);

int lm_coll_barrier(lm_comm *c);
int lm_coll_bcast(void *buf, size_t len, int root, lm_comm *c);
/* count elements of elem_size bytes; fn(in, inout) must be commutative and associative */
int lm_coll_allreduce(void *buf, size_t count, size_t elem_size, lm_reduce_fn fn, void *arg, lm_comm *c);
/* *v becomes the largest *v of c's members (agreements on a verdict). */
int lm_coll_allreduce_max_int(int *v, lm_comm *c);
int lm_coll_reduce(const void *sbuf, void *rbuf, size_t count, size_t elem_size, lm_reduce_fn fn, void *arg, int root,
                   lm_comm *c);
int lm_coll_allgather(const void *sbuf, size_t len, void *rbuf, lm_comm *c);
int lm_coll_gather(const void *sbuf, size_t len, void *rbuf, int root, lm_comm *c);
int lm_coll_scatter(const void *sbuf, size_t len, void *rbuf, int root, lm_comm *c);
int lm_coll_alltoall(const void *sbuf, size_t len, void *rbuf, lm_comm *c);

/* MPI_Comm_free (and finalize for the predefined ones): give back what the
 * MPI collectives keep for c between calls (coll_api.c). */
void lm_coll_comm_freed(lm_comm *c);

/* At runtime start: the progress hook of nonblocking and persistent
 * collectives and the communicator hooks that free what collectives keep
 * per communicator; at finalize, the mailboxes still waiting for readers. */
int lm_coll_init(void);
void lm_coll_finalize(void);

#endif
