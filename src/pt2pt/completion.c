/* Completion calls: Wait/Test in their single, any, all and some forms,
 * persistent Start, Request_free, Cancel. A request that is MPI_REQUEST_NULL
 * or an inactive persistent request counts as "empty" (MPI 3.7.3). */
#include "pt2pt/pt2pt.h"
#include "pt2pt/bsend.h"
#include "pt2pt/grequest.h"
#include "pt2pt/partitioned.h"
#include "util/lm_error.h"
#include "api/impl_gen.h"

/* NULL for MPI_REQUEST_NULL; *bad set for invalid handles. */
static lm_request *lookup(MPI_Request h, int *bad)
{
    *bad = 0;
    if (h == MPI_REQUEST_NULL) return NULL;
    lm_request *r = lm_request_get(h);
    if (!r) *bad = 1;
    return r;
}

static int is_empty(const lm_request *r) { return !r || (r->persistent && !r->active); }

static void empty_status(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE) return;
    int err = st->MPI_ERROR;
    lm_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, err, 0, 0);
}

/* Retire a completed request: status out, handle freed or made inactive.
 * Returns the operation's error class. */
static int retire(MPI_Request *h, lm_request *r, MPI_Status *st)
{
    if (r->kind == LM_REQ_GREQ) return lm_grequest_retire(h, r, st);
    int err = r->error;
    lm_request_status(r, st);
    if (r->persistent) {
        r->active = 0;
    } else {
        lm_request_release(r);
        *h = MPI_REQUEST_NULL;
    }
    return err;
}

static int bad_request(const char *fname, int i)
{
    return lm_err_noobj(MPI_ERR_REQUEST, fname, "invalid request handle at index %d", i);
}

int impl_MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    int bad;
    lm_request *r = lookup(*request, &bad);
    if (bad) return bad_request("MPI_Wait", 0);
    if (is_empty(r)) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    lm_progress_until(&r->complete);
    lm_comm *c = r->comm;
    int err = retire(request, r, status);
    if (err != MPI_SUCCESS)
        return lm_err_comm(c ? c->obj.handle : MPI_COMM_WORLD, err, "MPI_Wait", "the operation failed");
    return MPI_SUCCESS;
}

int impl_MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    int bad;
    lm_request *r = lookup(*request, &bad);
    if (bad) return bad_request("MPI_Test", 0);
    if (is_empty(r)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (!r->complete) lm_progress();
    *flag = r->complete;
    if (!r->complete) return MPI_SUCCESS;
    lm_comm *c = r->comm;
    int err = retire(request, r, status);
    if (err != MPI_SUCCESS)
        return lm_err_comm(c ? c->obj.handle : MPI_COMM_WORLD, err, "MPI_Test", "the operation failed");
    return MPI_SUCCESS;
}

/* Shared by Waitany/Testany: index of a completed active request, or
 * MPI_UNDEFINED when all are empty (*all_empty), or -1 when none is done. */
static int scan_any(int n, const MPI_Request reqs[], int *all_empty, int *bad_index)
{
    *all_empty = 1;
    *bad_index = -1;
    for (int i = 0; i < n; i++) {
        int bad;
        lm_request *r = lookup(reqs[i], &bad);
        if (bad) {
            *bad_index = i;
            return -1;
        }
        if (is_empty(r)) continue;
        *all_empty = 0;
        if (r->complete) return i;
    }
    return -1;
}

static int any(const char *fname, int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st, int blocking)
{
    /* Testany progresses once and looks once more: looping while progress
     * finds work would keep it from returning under steady traffic. */
    unsigned idle = 0;
    for (int progressed = 0;; progressed = 1) {
        int all_empty, bad;
        int i = scan_any(n, reqs, &all_empty, &bad);
        if (bad >= 0) return bad_request(fname, bad);
        if (i >= 0) {
            lm_request *r = lm_request_get(reqs[i]);
            lm_comm *c = r->comm;
            int err = retire(&reqs[i], r, st);
            *index = i;
            if (flag) *flag = 1;
            if (err != MPI_SUCCESS)
                return lm_err_comm(c ? c->obj.handle : MPI_COMM_WORLD, err, fname, "request %d failed", i);
            return MPI_SUCCESS;
        }
        if (all_empty) {
            *index = MPI_UNDEFINED;
            if (flag) *flag = 1;
            empty_status(st);
            return MPI_SUCCESS;
        }
        if (!blocking && progressed) {
            *flag = 0;
            *index = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        if (blocking) lm_progress_wait(&idle);
        else lm_progress();
    }
}

int impl_MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    return any("MPI_Waitany", count, array_of_requests, index, NULL, status, 1);
}

int impl_MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    return any("MPI_Testany", count, array_of_requests, index, flag, status, 0);
}

/* Retire all of reqs[0..n) (all known complete or empty); set MPI_ERROR in
 * statuses and return MPI_ERR_IN_STATUS if any failed. */
static int retire_all(const char *fname, int n, MPI_Request reqs[], MPI_Status sts[])
{
    int failed = 0;
    lm_comm *fc = NULL;
    for (int i = 0; i < n; i++) {
        int bad;
        lm_request *r = lookup(reqs[i], &bad);
        MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
        if (is_empty(r)) {
            empty_status(st);
            if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = MPI_SUCCESS;
            continue;
        }
        lm_comm *c = r->comm;
        int err = retire(&reqs[i], r, st);
        if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = err;
        if (err != MPI_SUCCESS && !failed) {
            failed = 1;
            fc = c;
        }
    }
    if (failed)
        return lm_err_comm(fc ? fc->obj.handle : MPI_COMM_WORLD, MPI_ERR_IN_STATUS, fname,
                           "one or more requests failed; see the statuses");
    return MPI_SUCCESS;
}

static int check_all(const char *fname, int n, const MPI_Request reqs[], int *done)
{
    *done = 1;
    for (int i = 0; i < n; i++) {
        int bad;
        lm_request *r = lookup(reqs[i], &bad);
        if (bad) return bad_request(fname, i);
        if (!is_empty(r) && !r->complete) *done = 0;
    }
    return MPI_SUCCESS;
}

int impl_MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    for (int i = 0; i < count; i++) {
        int bad;
        lm_request *r = lookup(array_of_requests[i], &bad);
        if (bad) return bad_request("MPI_Waitall", i);
        if (!is_empty(r)) lm_progress_until(&r->complete);
    }
    return retire_all("MPI_Waitall", count, array_of_requests, array_of_statuses);
}

int impl_MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    int done;
    int rc = check_all("MPI_Testall", count, array_of_requests, &done);
    if (rc != MPI_SUCCESS) return rc;
    if (!done) {
        lm_progress();
        check_all("MPI_Testall", count, array_of_requests, &done);
    }
    *flag = done;
    if (!done) return MPI_SUCCESS;
    return retire_all("MPI_Testall", count, array_of_requests, array_of_statuses);
}

static int some(const char *fname, int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[],
                int blocking)
{
    /* Testsome, like Testany, progresses once and looks once more. */
    unsigned idle = 0;
    for (int progressed = 0;; progressed = 1) {
        int active = 0, done = 0;
        for (int i = 0; i < n; i++) {
            int bad;
            lm_request *r = lookup(reqs[i], &bad);
            if (bad) return bad_request(fname, i);
            if (is_empty(r)) continue;
            active++;
            if (r->complete) done++;
        }
        if (!active) {
            *outcount = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        if (done) {
            int k = 0, failed = 0;
            lm_comm *fc = NULL;
            for (int i = 0; i < n; i++) {
                lm_request *r = lm_request_get(reqs[i]);
                if (!r || is_empty(r) || !r->complete) continue;
                MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[k];
                lm_comm *c = r->comm;
                int err = retire(&reqs[i], r, st);
                if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = err;
                if (err != MPI_SUCCESS && !failed) failed = 1, fc = c;
                indices[k++] = i;
            }
            *outcount = k;
            if (failed)
                return lm_err_comm(fc ? fc->obj.handle : MPI_COMM_WORLD, MPI_ERR_IN_STATUS, fname,
                                   "one or more requests failed; see the statuses");
            return MPI_SUCCESS;
        }
        if (!blocking && progressed) {
            *outcount = 0;
            return MPI_SUCCESS;
        }
        if (blocking) lm_progress_wait(&idle);
        else lm_progress();
    }
}

int impl_MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                      MPI_Status array_of_statuses[])
{
    return some("MPI_Waitsome", incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 1);
}

int impl_MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                      MPI_Status array_of_statuses[])
{
    return some("MPI_Testsome", incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 0);
}

/* The status of a completed request, which stays as it is. */
static int peek_status(lm_request *r, MPI_Status *st)
{
    if (r->kind == LM_REQ_GREQ) return lm_grequest_query(r, st);
    lm_request_status(r, st);
    return MPI_SUCCESS;
}

int impl_MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    int bad;
    lm_request *r = lookup(request, &bad);
    if (bad) return bad_request("MPI_Request_get_status", 0);
    if (is_empty(r)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (!r->complete) lm_progress();
    *flag = r->complete;
    if (!r->complete) return MPI_SUCCESS;
    int err = peek_status(r, status);
    if (err != MPI_SUCCESS)
        return lm_err_comm(r->comm ? r->comm->obj.handle : MPI_COMM_WORLD, err, "MPI_Request_get_status",
                           "the request's query function failed");
    return MPI_SUCCESS;
}

/* The MPI-4.1 multiple forms of MPI_Request_get_status: like Testany,
 * Testall and Testsome, except that nothing is freed or made inactive. */
int impl_MPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *index, int *flag,
                                    MPI_Status *status)
{
    for (int progressed = 0;; progressed = 1) {
        int all_empty, bad;
        int i = scan_any(count, array_of_requests, &all_empty, &bad);
        if (bad >= 0) return bad_request("MPI_Request_get_status_any", bad);
        if (i >= 0) {
            lm_request *r = lm_request_get(array_of_requests[i]);
            *index = i;
            *flag = 1;
            int err = peek_status(r, status);
            if (err != MPI_SUCCESS)
                return lm_err_comm(r->comm ? r->comm->obj.handle : MPI_COMM_WORLD, err, "MPI_Request_get_status_any",
                                   "request %d's query function failed", i);
            return MPI_SUCCESS;
        }
        if (all_empty) {
            *index = MPI_UNDEFINED;
            *flag = 1;
            empty_status(status);
            /* nothing completed, so nothing failed: the whole empty status */
            if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = MPI_SUCCESS;
            return MPI_SUCCESS;
        }
        if (progressed) {
            *index = MPI_UNDEFINED;
            *flag = 0;
            return MPI_SUCCESS;
        }
        lm_progress();
    }
}

/* Statuses of reqs[0..n) that are complete or empty (all of them when
 * only_done is 0), listed at k = 0, 1, ... in sts with their indices;
 * returns how many, and MPI_ERR_IN_STATUS through *err when a query failed. */
static int peek_done(int n, const MPI_Request reqs[], MPI_Status sts[], int indices[], int with_empty, int *err)
{
    int k = 0;
    *err = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        lm_request *r = lm_request_get(reqs[i]);
        MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[k];
        if (is_empty(r)) {
            if (!with_empty) continue;
            empty_status(st);
            if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = MPI_SUCCESS;
        } else {
            if (!r->complete) continue;
            int e = peek_status(r, st);
            if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = e;
            if (e != MPI_SUCCESS) *err = MPI_ERR_IN_STATUS;
        }
        if (indices) indices[k] = i;
        k++;
    }
    return k;
}

int impl_MPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                                    MPI_Status array_of_statuses[])
{
    int done;
    int rc = check_all("MPI_Request_get_status_all", count, array_of_requests, &done);
    if (rc != MPI_SUCCESS) return rc;
    if (!done) {
        lm_progress();
        check_all("MPI_Request_get_status_all", count, array_of_requests, &done);
    }
    *flag = done;
    if (!done) return MPI_SUCCESS;
    int err;
    peek_done(count, array_of_requests, array_of_statuses, NULL, 1, &err);
    if (err != MPI_SUCCESS)
        return lm_err_comm(MPI_COMM_WORLD, err, "MPI_Request_get_status_all",
                           "one or more query functions failed; see the statuses");
    return MPI_SUCCESS;
}

int impl_MPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[], int *outcount,
                                     int array_of_indices[], MPI_Status array_of_statuses[])
{
    for (int progressed = 0;; progressed = 1) {
        int active = 0, done = 0;
        for (int i = 0; i < incount; i++) {
            int bad;
            lm_request *r = lookup(array_of_requests[i], &bad);
            if (bad) return bad_request("MPI_Request_get_status_some", i);
            if (is_empty(r)) continue;
            active++;
            if (r->complete) done++;
        }
        if (!active) {
            *outcount = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        if (done || progressed) {
            int err;
            *outcount = done ? peek_done(incount, array_of_requests, array_of_statuses, array_of_indices, 0, &err) : 0;
            if (done && err != MPI_SUCCESS)
                return lm_err_comm(MPI_COMM_WORLD, err, "MPI_Request_get_status_some",
                                   "one or more query functions failed; see the statuses");
            return MPI_SUCCESS;
        }
        lm_progress();
    }
}

static int start(MPI_Request *h, const char *fname)
{
    lm_request *r = lm_request_get(*h);
    if (!r || !r->persistent) return lm_err_noobj(MPI_ERR_REQUEST, fname, "not a persistent request");
    if (r->active) return lm_err_comm(r->comm->obj.handle, MPI_ERR_REQUEST, fname, "request is already active");
    r->active = 1;
    if (r->ext_start) {
        int rc = r->ext_start(r);
        if (rc != MPI_SUCCESS) r->active = 0;
        return rc == MPI_SUCCESS ? rc : lm_err_comm(r->comm->obj.handle, rc, fname, "could not start");
    }
    if (r->part) return lm_part_start(r, fname);
    if (r->kind == LM_REQ_RECV) return lm_recv_start(r);
    if (r->mode == LM_MODE_BUFFERED) {
        r->complete = 0;
        int rc = lm_bsend_start(fname, r->buf, r->count, r->datatype, r->peer, r->match_tag, r->comm->obj.handle, NULL);
        r->error = MPI_SUCCESS;
        r->complete = 1;
        if (rc != MPI_SUCCESS) r->active = 0;
        return rc;
    }
    int rc = lm_send_start(r);
    return rc == MPI_SUCCESS ? rc : lm_err_comm(r->comm->obj.handle, rc, fname, "send failed");
}

int impl_MPI_Start(MPI_Request *request) { return start(request, "MPI_Start"); }

int impl_MPI_Startall(int count, MPI_Request array_of_requests[])
{
    for (int i = 0; i < count; i++) {
        int rc = start(&array_of_requests[i], "MPI_Startall");
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

int impl_MPI_Request_free(MPI_Request *request)
{
    int bad;
    lm_request *r = lookup(*request, &bad);
    if (bad || !r) return lm_err_noobj(MPI_ERR_REQUEST, "MPI_Request_free", "invalid request");
    *request = MPI_REQUEST_NULL;
    if (r->kind == LM_REQ_GREQ) {
        int err = lm_grequest_free(r);
        return err == MPI_SUCCESS
                   ? err
                   : lm_err_comm(MPI_COMM_WORLD, err, "MPI_Request_free", "the request's free function failed");
    }
    if (r->complete || (r->persistent && !r->active)) {
        lm_request_release(r);
    } else {
        r->user_freed = 1;
        r->persistent = 0; /* released by the engine when it completes */
    }
    return MPI_SUCCESS;
}

int impl_MPI_Cancel(MPI_Request *request)
{
    int bad;
    lm_request *r = lookup(*request, &bad);
    if (bad || !r) return lm_err_noobj(MPI_ERR_REQUEST, "MPI_Cancel", "invalid request");
    if (r->kind == LM_REQ_GREQ) {
        int err = lm_grequest_cancel(r);
        return err == MPI_SUCCESS
                   ? err
                   : lm_err_comm(MPI_COMM_WORLD, err, "MPI_Cancel", "the request's cancel function failed");
    }
    if (r->kind == LM_REQ_RECV && !r->complete) lm_recv_cancel(r);
    /* Sends are not cancelled: once handed over, the message is delivered;
     * MPI_Test_cancelled then reports false, as the standard permits. */
    return MPI_SUCCESS;
}

int impl_MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    *flag = (status->count_hi_and_cancelled & (int)0x80000000u) != 0;
    return MPI_SUCCESS;
}
