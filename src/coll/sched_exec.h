/* Running a schedule on a communicator: a blocking collective runs it to
 * completion; a nonblocking or persistent one is progressed by the
 * progress engine (every lm_progress call advances the active ones) and
 * completes its request when its last round has.
 *
 * Messages go on the communicator's collective context with the
 * collective's sequence number as tag: collectives are started in the same
 * order on every rank, so concurrent ones never match each other's data. */
#ifndef LM_SCHED_EXEC_H
#define LM_SCHED_EXEC_H
#include "coll/sched.h"
#include "coll/coll_basic.h"
#include "obj/comm.h"
#include "datatype/datatype.h"
#include "pt2pt/request.h"

/* User data the schedule sees as a packed (or raw-layout) copy in scratch:
 * copied in when the collective starts, out when it completes. */
typedef struct lm_stage {
    void *user;
    MPI_Count count;
    lm_datatype *type; /* a reference is held */
    size_t scratch_off;
    uint8_t copy_in, copy_out;
    uint8_t raw; /* element layout (for reductions) instead of packed */
} lm_stage;

/* Requests of one round and scratch bytes that small schedules need without
 * an allocation (scratch: enough for the reductions of a few elements). */
#define LM_COLL_EXEC_INLINE_REQS 8
#define LM_COLL_EXEC_INLINE_SCRATCH 256

typedef struct lm_coll_exec lm_coll_exec;
struct lm_coll_exec {
    lm_comm *comm;
    /* slot bases: an address, or an offset into scratch (staged data) */
    char *base[LM_SLOT_COUNT];
    size_t scratch_at[LM_SLOT_COUNT];
    uint8_t in_scratch[LM_SLOT_COUNT];
    lm_stage *stages;
    int nstages, stages_cap;
    /* reduction steps: fn(in, inout, bytes / elem elements, fn_arg) */
    lm_reduce_fn fn;
    void *fn_arg;
    size_t elem;
    MPI_Op op;            /* for the MPI op adapter below */
    lm_datatype *op_type; /* a reference is held when set */
    /* running */
    int tag;
    uint32_t call; /* the collective's sequence number (mailbox entries) */
    uint32_t round;
    uint32_t next_step, round_stop; /* steps of the round not issued yet: a mailbox step may have to wait */
    lm_request **reqs;
    uint32_t nreqs, reqs_cap;
    char *scratch;
    int error;
    int round_error; /* blocking runs: a step of this round done without a request failed */
    int running;
    /* persistent: call number and tag were taken at initialization, so that
     * its messages match in the order of initialization whatever order the
     * ranks start it in (MPI-4.1 section 6.13) */
    uint8_t fixed_call;
    lm_request *req; /* nonblocking/persistent: the user's request */
    lm_coll_exec *next_active;
    /* blocking runs: requests in lm_coll_exec_run's frame, one per step of
     * the current round, so that a message costs no request object */
    lm_request *frame_reqs;
    /* A schedule generated in two parts: called once, when the rounds of
     * the first part are done, to append the rest from what they brought
     * (a node leader of the v forms across nodes, coll_counts_first.c); later starts of a
     * persistent collective run both parts as they are. */
    void (*extend)(lm_coll_exec *x);
    void *owned; /* lm_free'd with the executor: what AUX or extend reads */
    /* last before the inline areas: init clears everything above it */
    lm_sched sched;
    lm_request *inline_reqs[LM_COLL_EXEC_INLINE_REQS];
    _Alignas(max_align_t) char inline_scratch[LM_COLL_EXEC_INLINE_SCRATCH];
};

/* A blocking collective keeps its executor on the stack (init/fini); a
 * nonblocking or persistent one on the heap (new/free), owned by its
 * request. Either way it points into itself: never copy one. */
void lm_coll_exec_init(lm_coll_exec *x, lm_comm *c);
void lm_coll_exec_fini(lm_coll_exec *x);
lm_coll_exec *lm_coll_exec_new(lm_comm *c);
void lm_coll_exec_free(lm_coll_exec *x);
/* Stage user data; returns its offset in scratch (reserved here). */
size_t lm_coll_exec_stage(lm_coll_exec *x, void *user, MPI_Count count, lm_datatype *t, int in, int out, int raw);
/* The same at an offset already reserved (a second view of staged data,
 * e.g. the part of an in-place input that receives the result). */
void lm_coll_exec_stage_at(lm_coll_exec *x, void *user, MPI_Count count, lm_datatype *t, int in, int out, int raw,
                           size_t off);
/* One block of user data: count elements of type t at buf. */
typedef struct lm_coll_block {
    const void *buf;
    MPI_Count count;
    lm_datatype *t;
} lm_coll_block;
/* Lay out n blocks (anywhere in memory) as one slot: straight from the
 * user's memory when every block with data is dense, else all staged as
 * packed copies. Fills each block's bytes and offset in the slot. */
void lm_coll_exec_blocks(lm_coll_exec *x, int slot, int n, const lm_coll_block *b, int in, int out, size_t *bytes,
                         size_t *offs);
/* Reductions with an MPI op on type t (raw element layout). */
void lm_coll_exec_set_op(lm_coll_exec *x, MPI_Op op, lm_datatype *t);

/* Blocking: run to completion; returns the first error class. */
int lm_coll_exec_run(lm_coll_exec *x);
/* Nonblocking: start now; x belongs to the request from here on (freed
 * with it). Returns MPI_SUCCESS or an error class (x then freed). */
int lm_coll_exec_start_request(lm_coll_exec *x, int persistent, lm_request **out);

/* At runtime start: registers the progress hook of active collectives. */
int lm_coll_exec_start(void);

#endif
