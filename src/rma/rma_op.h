/* One RMA communication call in flight (rma_comm.c, rma_acc.c): its
 * checked arguments, its packed streams, and what must happen when the
 * last engine operation it issued is done. */
#ifndef LM_RMA_OP_H
#define LM_RMA_OP_H
#include "rma/rma.h"
#include "datatype/datatype.h"

/* The checked arguments of a call. */
typedef struct lm_rma_args {
    lm_win *w;
    MPI_Win win;
    const char *fname;
    int rank; /* MPI_PROC_NULL: nothing to do */
    const void *obuf;
    MPI_Count ocount, tcount;
    lm_datatype *ot, *tt;
    size_t bytes; /* of data, origin and target alike */
    lm_osc_target t;
    int64_t base; /* byte offset of the target buffer (disp * unit) in rank's part */
    int64_t lo;   /* offset of the first data byte */
} lm_rma_args;

/* Check window, rank, epoch, datatypes, sizes and range; fill a. Returns
 * MPI_SUCCESS (a->rank may be MPI_PROC_NULL) or a raised error. */
int lm_rma_prepare(lm_rma_args *a, MPI_Win win, const char *fname, int rank, MPI_Aint disp, const void *obuf,
                   MPI_Count ocount, MPI_Datatype odt, MPI_Count tcount, MPI_Datatype tdt, int origin_used);

/* Completion of a call's engine operations. */
typedef struct lm_rma_op {
    int pending; /* engine operations not yet done, +1 while issuing */
    int err;
    char *tmp; /* packed origin or result stream, owned */
    /* where a result stream goes when it is all in: count elements of t
     * at buf (NULL when it was written in place) */
    void *rbuf;
    MPI_Count rcount;
    lm_datatype *rt;
    size_t rbytes;
    lm_request *req; /* the program's request (MPI_Rput...), or NULL */
    int on_stack;    /* the caller's: finished in the call, never freed */
} lm_rma_op;

/* A call's completion record: on the caller's stack (space) when the
 * call will be complete on return (no request, a reach that completes
 * in the call), else allocated. NULL when out of memory. */
lm_rma_op *lm_rma_op_new(lm_request *req, const lm_osc_target *t, lm_rma_op *space);
/* The engine's done callback for each operation of the call. */
void lm_rma_op_done(void *arg, int err);
/* Issuing is over: drop the issuing reference. Returns the error known so
 * far (synchronous reaches report theirs here). */
int lm_rma_op_issued(lm_rma_op *o);

/* A request for an R-call (already complete when everything went
 * through DIRECT or CMA). */
int lm_rma_request_new(lm_win *w, const char *fname, lm_request **out);

/* A call with nothing to move (an MPI_PROC_NULL target, no data) is done
 * at once, its request (if asked for) too. */
int lm_rma_done_at_once(lm_win *w, const char *fname, MPI_Request *request);

/* Walk the runs of count elements of t (bytes of one basic type): for
 * each run call fn(arg, disp, size, reps, stride); dense types are one run. */
typedef void (*lm_rma_run_fn)(void *arg, int64_t disp, size_t size, uint64_t reps, int64_t stride);
void lm_rma_runs(const lm_datatype *t, MPI_Count count, lm_rma_run_fn fn, void *arg);

#endif
