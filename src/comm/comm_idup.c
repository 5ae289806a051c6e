/* The nonblocking duplicates, MPI_Comm_idup and MPI_Comm_idup_with_info,
 * and MPI_Comm_get_parent (no dynamic processes: never a parent).
 *
 * The new communicator is built at the call (topology, attributes, hints:
 * what a duplicate takes from its parent then) with a placeholder context
 * id (an intercommunicator's also without its hidden local communicator);
 * the agreement on the real ids runs as a nonblocking operation that the
 * progress engine moves on (comm/context_id.h; across an
 * intercommunicator's two groups, its leaders' swap is a step of that
 * operation like the messages within each group), and the request
 * completes when it has ended. A rank waiting anywhere in MPI, in
 * MPI_Recv for a message its peer sends only after its own MPI_Comm_idup
 * returned for example, thus never holds up its peers' agreement. */
#include "comm/comm_dup.h"
#include "comm/context_id.h"
#include "comm/intercomm.h"
#include "obj/comm_info.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "pt2pt/request.h"
#include "api/impl_gen.h"

/* One idup in flight: its request and new communicator (both held), or
 * neither when the call failed locally after the agreement had started
 * (the agreement still runs to its end for the other members, and the id
 * it finds goes back). */
typedef struct idup_op {
    lm_request *req;
    lm_comm *newc;
    int inter; /* two ids: an intercommunicator's and its hidden local communicator's */
} idup_op;

static void agreed(void *arg, int rc, const uint16_t *ids)
{
    idup_op *op = arg;
    if (!op->req) {
        if (rc == MPI_SUCCESS)
            for (int k = 0; k <= op->inter; k++) lm_context_id_release(ids[k]);
        lm_free(LM_MEM_COMM, op);
        return;
    }
    lm_request *r = op->req;
    if (rc == MPI_SUCCESS) {
        if (op->inter) rc = lm_intercomm_dup_settle(op->newc, ids);
        else op->newc->context_id = ids[0];
    }
    if (rc == MPI_SUCCESS) {
        lm_comm_drop(op->newc);
    } else {
        /* the handle the caller holds now names no communicator */
        lm_comm_drop(op->newc);
        MPI_Comm h = op->newc->obj.handle;
        impl_MPI_Comm_free(&h);
    }
    lm_free(LM_MEM_COMM, op);
    r->ext = NULL;
    r->error = rc;
    lm_request_complete(r); /* may free r */
}

static int idup(const char *fname, MPI_Comm comm, MPI_Info info, int use_info, MPI_Comm *newcomm, MPI_Request *request)
{
    int rc;
    lm_comm *p = lm_comm_checked(comm, fname, &rc);
    if (!p) return rc;
    idup_op *op = lm_calloc(LM_MEM_COMM, 1, sizeof *op);
    if (!op) return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    op->inter = p->is_inter;
    /* the agreement first: from here on this rank takes part whatever
     * happens to the rest of the call, as the other members do */
    rc = lm_context_id_iallocate(p, agreed, op);
    if (rc) {
        lm_free(LM_MEM_COMM, op);
        return lm_err_comm(comm, rc, fname, "could not start the agreement on a context id");
    }
    const char *what = "out of memory";
    lm_request *r = lm_request_new(LM_REQ_COLL);
    lm_comm *c = NULL;
    if (r && p->is_inter) {
        c = lm_intercomm_dup_pending(p);
    } else if (r) {
        lm_group_retain(p->group);
        c = lm_comm_new_intra(p->group, LM_CONTEXT_PENDING, p);
        if (!c) lm_group_release(p->group);
    }
    if (!c) {
        rc = MPI_ERR_NO_MEM;
    } else {
        rc = lm_comm_dup_contents(p, c, info, use_info, &what);
    }
    if (rc) {
        if (r) lm_request_release(r);
        *newcomm = MPI_COMM_NULL;
        return lm_err_comm(comm, rc, fname, "%s", what); /* op is orphaned: agreed() frees it */
    }
    lm_comm_hold(c); /* usable only once the request completes; kept until then */
    r->comm = p;
    r->source = MPI_ANY_SOURCE;
    r->tag = MPI_ANY_TAG;
    lm_request_hold_comm(r);
    op->req = r;
    op->newc = c;
    r->ext = op;
    *newcomm = c->obj.handle;
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup("MPI_Comm_idup", comm, MPI_INFO_NULL, 0, newcomm, request);
}

int impl_MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup("MPI_Comm_idup_with_info", comm, info, 1, newcomm, request);
}
