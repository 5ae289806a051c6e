/* Generalized requests (MPI-4.1 section 13.2). The operation runs outside
 * the library; the request only records the user's callbacks and whether
 * MPI_Grequest_complete has been called. The completion calls treat it like
 * any other request (its `complete` flag) and retire it through
 * lm_grequest_retire, which asks query_fn for the status and then runs
 * free_fn.  The callbacks run outside the library's critical section
 * (lm_cs_suspend): one written in Python takes the interpreter lock, which
 * another thread may hold while it waits for the section. */
#include "pt2pt/grequest.h"
#include "pt2pt/pt2pt.h"
#include "util/lm_cs.h"
#include "util/lm_error.h"
#include "api/impl_gen.h"

int impl_MPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                            MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
    lm_request *r = lm_request_new(LM_REQ_GREQ);
    if (!r) return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_Grequest_start", "out of memory for the request");
    r->greq_query = (void *)query_fn;
    r->greq_free = (void *)free_fn;
    r->greq_cancel = (void *)cancel_fn;
    r->greq_state = extra_state;
    r->source = MPI_ANY_SOURCE;
    r->tag = MPI_ANY_TAG;
    r->complete = 0;
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

static int call_free(lm_request *r)
{
    MPI_Grequest_free_function *fn = (MPI_Grequest_free_function *)r->greq_free;
    if (!fn) return MPI_SUCCESS;
    unsigned held = lm_cs_suspend();
    int rc = fn(r->greq_state);
    lm_cs_resume(held);
    return rc;
}

int impl_MPI_Grequest_complete(MPI_Request request)
{
    lm_request *r = request == MPI_REQUEST_NULL ? NULL : lm_request_get(request);
    if (!r || r->kind != LM_REQ_GREQ)
        return lm_err_noobj(MPI_ERR_REQUEST, "MPI_Grequest_complete", "not a generalized request");
    if (r->complete) return lm_err_noobj(MPI_ERR_REQUEST, "MPI_Grequest_complete", "the request is already complete");
    r->complete = 1;
    if (r->user_freed) {
        /* MPI_Request_free came first: free_fn runs now (section 13.2) */
        int err = call_free(r);
        lm_request_release(r);
        if (err != MPI_SUCCESS) return lm_err_noobj(err, "MPI_Grequest_complete", "the request's free function failed");
    }
    return MPI_SUCCESS;
}

int lm_grequest_query(lm_request *r, MPI_Status *st)
{
    MPI_Status tmp;
    MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
    /* what the status says when query_fn leaves a field alone */
    lm_status_set(s, MPI_ANY_SOURCE, MPI_ANY_TAG, st == MPI_STATUS_IGNORE ? MPI_SUCCESS : st->MPI_ERROR, 0, 0);
    MPI_Grequest_query_function *fn = (MPI_Grequest_query_function *)r->greq_query;
    if (!fn) return MPI_SUCCESS;
    unsigned held = lm_cs_suspend();
    int rc = fn(r->greq_state, s);
    lm_cs_resume(held);
    return rc;
}

int lm_grequest_retire(MPI_Request *h, lm_request *r, MPI_Status *st)
{
    int err = lm_grequest_query(r, st);
    int ferr = call_free(r);
    lm_request_release(r);
    *h = MPI_REQUEST_NULL;
    return err != MPI_SUCCESS ? err : ferr;
}

int lm_grequest_free(lm_request *r)
{
    if (!r->complete) {
        r->user_freed = 1; /* free_fn and the release wait for MPI_Grequest_complete */
        return MPI_SUCCESS;
    }
    int err = call_free(r);
    lm_request_release(r);
    return err;
}

int lm_grequest_cancel(lm_request *r)
{
    MPI_Grequest_cancel_function *fn = (MPI_Grequest_cancel_function *)r->greq_cancel;
    if (!fn) return MPI_SUCCESS;
    int complete = r->complete ? 1 : 0;
    unsigned held = lm_cs_suspend();
    int rc = fn(r->greq_state, complete);
    lm_cs_resume(held);
    return rc;
}
