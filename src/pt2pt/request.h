/* Requests. User-visible requests are handle objects; blocking calls use a
 * request on their own stack (handle 0) so the fast path allocates nothing.
 * Peers reference each other's requests by address (valid until completion). */
#ifndef LM_REQUEST_H
#define LM_REQUEST_H
#include <stdint.h>
#include "mpi.h"
#include "util/lm_handle.h"
#include "obj/comm.h"

enum lm_req_kind { LM_REQ_SEND, LM_REQ_RECV, LM_REQ_GREQ, LM_REQ_COLL, LM_REQ_NULLREQ };
enum lm_send_mode { LM_MODE_STANDARD, LM_MODE_SYNC, LM_MODE_READY, LM_MODE_BUFFERED };

typedef struct lm_request lm_request;
struct lm_request {
    lm_object obj;
    uint8_t kind;       /* enum lm_req_kind */
    uint8_t mode;       /* enum lm_send_mode (sends) */
    uint8_t persistent; /* created by *_init */
    uint8_t active;     /* persistent: started and not yet completed by wait/test */
    uint8_t user_freed; /* MPI_Request_free while active: release at completion */
    uint8_t cancelled;
    uint8_t rndv_waiting_fin;
    volatile int complete;
    int error;       /* MPI error class of the operation */
    int source, tag; /* status */
    MPI_Count bytes; /* bytes transferred (status count) */

    lm_comm *comm;
    int ctx;        /* matching context */
    int peer;       /* comm rank (or MPI_ANY_SOURCE / MPI_PROC_NULL) */
    int peer_world; /* world rank of peer (sends) */
    int match_tag;
    void *buf; /* user buffer (const for sends) */
    MPI_Count count;
    MPI_Datatype datatype;
    size_t len; /* bytes described by count * datatype (packed bytes when dtype is set) */
    /* a type with gaps: the data moves as its packed stream, packed from
     * and unpacked into buf piece by piece; NULL for dense data */
    struct lm_datatype *dtype;
    void *pack_tmp; /* eager send of such a type: the packed copy, freed on completion */

    lm_request *next; /* posted-receive queue link */
    /* a half of a nonblocking sendrecv: the user's request, which completes
     * when its `pending` halves have */
    lm_request *parent;
    int pending;
    /* rendezvous receive through cells */
    size_t rndv_received, rndv_total;
    /* rendezvous by the network's RMA read (a peer on another host): the
     * send buffer's registration until FIN (sends); the sender and its
     * request, for the FIN once the read is done (receives) */
    void *rndv_mr;
    uint64_t rndv_sreq;
    int rndv_src;
    /* buffered send: the block in the attached buffer */
    void *bsend_block;
    /* persistent requests keep the arguments as given */
    /* partitioned requests (partitioned.h); NULL for all others */
    struct lm_partitioned *part;
    /* generalized requests */
    void *greq_query, *greq_free, *greq_cancel, *greq_state;
    /* operations built above point-to-point (collective schedules): their
     * state, how a persistent one starts, how the state is released */
    void *ext;
    int (*ext_start)(lm_request *r);
    void (*ext_free)(lm_request *r);
    uint8_t holds_comm; /* a handle request keeps its communicator alive */
};

/* A fresh handle object request (refcount 1). NULL when out of memory. */
lm_request *lm_request_new(int kind);
/* The one predefined request (the generator counts it): every send that
 * was complete when it started (eager, handed to the transport at once)
 * gets this handle instead of an object of its own, as its status carries
 * nothing; completing it just sets the program's handle to
 * MPI_REQUEST_NULL. Its object is never released (handle 0). */
#define LM_REQUEST_DONE LM_HANDLE(LM_KIND_REQUEST, LM_TIER_BUILTIN, 0)
extern lm_request lm_request_done;
static inline lm_request *lm_request_get(MPI_Request r)
{
    return r == LM_REQUEST_DONE ? &lm_request_done : lm_object_lookup(r, LM_KIND_REQUEST);
}
/* What a request holds besides its object (types, communicator, state of
 * operations built on it), for lm_request_release. */
void lm_request_release_parts(lm_request *r);
/* Release the request's object (handle requests) or nothing (stack ones). */
static inline void lm_request_release(lm_request *r)
{
    if (!r->obj.handle) return;
    if (r->dtype || r->holds_comm || r->ext_free || r->part) lm_request_release_parts(r);
    lm_object_free_sized(r, sizeof *r);
}
/* A handle request holds its communicator until it is released, so that
 * MPI_Comm_free while it is pending does not destroy it (comm.h); the
 * predefined ones are never destroyed before finalize. */
static inline void lm_request_hold_comm(lm_request *r)
{
    if (r->obj.handle && r->comm && !r->holds_comm && LM_HANDLE_TIER(r->comm->obj.handle) == LM_TIER_DYNAMIC) {
        lm_comm_hold(r->comm);
        r->holds_comm = 1;
    }
}
/* Mark complete; frees it if the user already freed it. */
void lm_request_complete(lm_request *r);
void lm_status_set(MPI_Status *st, int source, int tag, int error, MPI_Count bytes, int cancelled);
/* Fill status from a completed request (status may be MPI_STATUS_IGNORE). */
void lm_request_status(const lm_request *r, MPI_Status *st);

#endif
