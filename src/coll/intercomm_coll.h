/* Collectives over intercommunicators with the standard's semantics, in
 * every form (blocking, nonblocking, persistent, large-count), as one flat
 * schedule run by the same executor as the intracommunicator collectives
 * (coll/sched_exec.h): every message goes directly between a process and
 * the remote group's processes, so no step needs the hidden local
 * communicator and a nonblocking collective needs no second schedule.
 *
 * The data a process receives is always the remote group's: gathers and
 * all-to-alls fill one block per remote rank, reductions combine the
 * remote ranks' inputs in rank order. Scan and exscan are not defined on
 * intercommunicators (MPI_ERR_COMM), nor is MPI_IN_PLACE (MPI_ERR_BUFFER). */
#ifndef LM_INTERCOMM_COLL_H
#define LM_INTERCOMM_COLL_H
#include "coll/coll_args.h"
#include "obj/comm.h"

typedef struct lm_inter_call {
    const char *fname;
    int kind; /* enum lm_coll_kind */
    int mode; /* LM_RUN_* */
    MPI_Comm comm;
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    MPI_Datatype stype, rtype;
    lm_arr scounts, sdispls, rcounts, rdispls; /* remote-group sized */
    const MPI_Datatype *stypes, *rtypes;
    MPI_Op op;
    int root;             /* MPI_ROOT, MPI_PROC_NULL or a remote rank */
    MPI_Request *request; /* nonblocking and persistent forms */
} lm_inter_call;

/* Checks the call, builds its schedule and runs it (blocking) or starts it
 * behind *k->request; raises its own errors. */
int lm_inter_coll(const lm_inter_call *k, lm_comm *c);

#endif
