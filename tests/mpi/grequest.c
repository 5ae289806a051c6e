/* Generalized requests: the callbacks run when the standard says (query and
 * free at completion, free after both MPI_Request_free and
 * MPI_Grequest_complete, cancel with the completion state), their statuses
 * and error codes reach the caller, and the MPI-4.1 MPI_Request_get_status
 * forms leave the requests as they were. */
#include "mpitest.h"

struct ctx {
    int query_calls, free_calls, cancel_calls;
    int last_cancel_complete;
    int query_rc, free_rc, cancel_rc;
    int source, tag;
};

static int query_fn(void *extra, MPI_Status *st)
{
    struct ctx *c = extra;
    c->query_calls++;
    MPI_Status_set_elements(st, MPI_BYTE, 5);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = c->source;
    st->MPI_TAG = c->tag;
    return c->query_rc;
}

static int free_fn(void *extra)
{
    struct ctx *c = extra;
    c->free_calls++;
    return c->free_rc;
}

static int cancel_fn(void *extra, int complete)
{
    struct ctx *c = extra;
    c->cancel_calls++;
    c->last_cancel_complete = complete;
    return c->cancel_rc;
}

static struct ctx fresh(void)
{
    struct ctx c;
    memset(&c, 0, sizeof c);
    c.source = 3;
    c.tag = 7;
    c.last_cancel_complete = -1;
    return c;
}

static void wait_path(void)
{
    struct ctx c = fresh();
    MPI_Request r;
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &r));
    int flag = 1;
    MPI_Status st;
    CHECK_MPI(MPI_Test(&r, &flag, &st));
    CHECK_EQ(flag, 0);
    CHECK_EQ(c.query_calls, 0);
    CHECK_MPI(MPI_Cancel(&r));
    CHECK_EQ(c.cancel_calls, 1);
    CHECK_EQ(c.last_cancel_complete, 0);
    CHECK_MPI(MPI_Grequest_complete(r));
    CHECK_MPI(MPI_Cancel(&r));
    CHECK_EQ(c.cancel_calls, 2);
    CHECK_EQ(c.last_cancel_complete, 1);
    CHECK_EQ(c.free_calls, 0);
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "Wait frees the request");
    CHECK_EQ(c.query_calls, 1);
    CHECK_EQ(c.free_calls, 1);
    CHECK_EQ(st.MPI_SOURCE, 3);
    CHECK_EQ(st.MPI_TAG, 7);
    int n;
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK_EQ(n, 5);
}

static void test_path_and_status_ignore(void)
{
    struct ctx c = fresh();
    MPI_Request r;
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &r));
    CHECK_MPI(MPI_Grequest_complete(r));
    int flag = 0;
    /* MPI_Request_get_status queries without freeing */
    MPI_Status st;
    CHECK_MPI(MPI_Request_get_status(r, &flag, &st));
    CHECK_EQ(flag, 1);
    CHECK_EQ(st.MPI_TAG, 7);
    CHECK_EQ(c.query_calls, 1);
    CHECK_EQ(c.free_calls, 0);
    CHECK_MPI(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK_EQ(flag, 1);
    CHECK(r == MPI_REQUEST_NULL, "Test frees the completed request");
    CHECK_EQ(c.query_calls, 2);
    CHECK_EQ(c.free_calls, 1);
}

static void free_before_complete(void)
{
    struct ctx c = fresh();
    MPI_Request r, keep;
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &r));
    keep = r;
    CHECK_MPI(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "Request_free sets MPI_REQUEST_NULL");
    /* MPI-4.1 section 13.2 runs free_fn in whichever of MPI_Request_free and
     * MPI_Grequest_complete comes last (here the latter); some libraries run
     * it at once, so only "exactly once, by the end" is checked */
    CHECK(c.free_calls <= 1, "free_fn ran %d times", c.free_calls);
    CHECK_MPI(MPI_Grequest_complete(keep));
    CHECK_EQ(c.free_calls, 1);
    CHECK_EQ(c.query_calls, 0);

    /* and after completion, Request_free runs free_fn at once */
    struct ctx d = fresh();
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &d, &r));
    CHECK_MPI(MPI_Grequest_complete(r));
    CHECK_MPI(MPI_Request_free(&r));
    CHECK_EQ(d.free_calls, 1);
    CHECK_EQ(d.query_calls, 0);
}

static void callback_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int cls;
    /* query_fn's error is what MPI_Wait returns; free_fn still runs */
    struct ctx c = fresh();
    c.query_rc = MPI_ERR_BUFFER;
    MPI_Request r;
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &r));
    CHECK_MPI(MPI_Grequest_complete(r));
    int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_BUFFER);
    CHECK_EQ(c.free_calls, 1);
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);

    /* free_fn's error */
    struct ctx d = fresh();
    d.free_rc = MPI_ERR_OTHER;
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &d, &r));
    CHECK_MPI(MPI_Grequest_complete(r));
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_OTHER);
    CHECK_EQ(d.query_calls, 1);
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);

    /* cancel_fn's error is what MPI_Cancel returns */
    struct ctx e = fresh();
    e.cancel_rc = MPI_ERR_PENDING;
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &e, &r));
    rc = MPI_Cancel(&r);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_PENDING);
    CHECK_MPI(MPI_Grequest_complete(r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_EQ(e.free_calls, 1);

    /* a request that is not generalized cannot be completed by the user */
    int buf = 0;
    MPI_Request s;
    CHECK_MPI(MPI_Irecv(&buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &s));
    rc = MPI_Grequest_complete(s);
    CHECK(rc != MPI_SUCCESS, "MPI_Grequest_complete on a receive request must fail");
    CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void multiple_completion(void)
{
    struct ctx c[3] = {fresh(), fresh(), fresh()};
    MPI_Request r[4];
    for (int i = 0; i < 3; i++) {
        c[i].tag = 10 + i;
        CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c[i], &r[i]));
    }
    r[3] = MPI_REQUEST_NULL;
    int idx = -2, flag = 1, out = -2, ind[4];
    MPI_Status sts[4];
    CHECK_MPI(MPI_Testany(4, r, &idx, &flag, MPI_STATUS_IGNORE));
    CHECK_EQ(flag, 0);
    CHECK_MPI(MPI_Grequest_complete(r[1]));
    CHECK_MPI(MPI_Testsome(4, r, &out, ind, sts));
    CHECK_EQ(out, 1);
    CHECK_EQ(ind[0], 1);
    CHECK_EQ(sts[0].MPI_TAG, 11);
    CHECK(r[1] == MPI_REQUEST_NULL, "Testsome frees the completed request");
    CHECK_MPI(MPI_Grequest_complete(r[0]));
    CHECK_MPI(MPI_Grequest_complete(r[2]));
    CHECK_MPI(MPI_Waitall(4, r, sts));
    CHECK_EQ(sts[0].MPI_TAG, 10);
    CHECK_EQ(sts[2].MPI_TAG, 12);
    CHECK_EQ(sts[3].MPI_TAG, MPI_ANY_TAG);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(c[i].free_calls, 1);
        CHECK(r[i] == MPI_REQUEST_NULL, "Waitall frees request %d", i);
    }
}

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
/* MPI-4.1: the statuses of several requests, which stay as they are. */
static void get_status_forms(void)
{
    struct ctx c[2] = {fresh(), fresh()};
    MPI_Request r[3];
    for (int i = 0; i < 2; i++) {
        c[i].tag = 20 + i;
        CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c[i], &r[i]));
    }
    r[2] = MPI_REQUEST_NULL;
    int idx = -2, flag = 1, out = -2, ind[3];
    MPI_Status st, sts[3];
    CHECK_MPI(MPI_Request_get_status_any(3, r, &idx, &flag, &st));
    CHECK_EQ(flag, 0);
    CHECK_MPI(MPI_Request_get_status_all(3, r, &flag, sts));
    CHECK_EQ(flag, 0);
    CHECK_MPI(MPI_Request_get_status_some(3, r, &out, ind, sts));
    CHECK_EQ(out, 0);

    CHECK_MPI(MPI_Grequest_complete(r[1]));
    CHECK_MPI(MPI_Request_get_status_any(3, r, &idx, &flag, &st));
    CHECK_EQ(flag, 1);
    CHECK_EQ(idx, 1);
    CHECK_EQ(st.MPI_TAG, 21);
    CHECK_MPI(MPI_Request_get_status_some(3, r, &out, ind, sts));
    CHECK_EQ(out, 1);
    CHECK_EQ(ind[0], 1);
    CHECK_EQ(sts[0].MPI_TAG, 21);
    CHECK(r[1] != MPI_REQUEST_NULL, "get_status leaves the request");
    CHECK_EQ(c[1].free_calls, 0);

    CHECK_MPI(MPI_Grequest_complete(r[0]));
    CHECK_MPI(MPI_Request_get_status_all(3, r, &flag, sts));
    CHECK_EQ(flag, 1);
    CHECK_EQ(sts[0].MPI_TAG, 20);
    CHECK_EQ(sts[1].MPI_TAG, 21);
    CHECK_EQ(sts[2].MPI_TAG, MPI_ANY_TAG);
    CHECK_EQ(sts[2].MPI_ERROR, MPI_SUCCESS);
    CHECK_EQ(c[0].free_calls, 0);
    CHECK_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    CHECK_EQ(c[0].free_calls, 1);
    CHECK_EQ(c[1].free_calls, 1);

    /* all empty: flag set, index undefined, the whole empty status */
    st.MPI_ERROR = MPI_ERR_OTHER;
    CHECK_MPI(MPI_Request_get_status_any(3, r, &idx, &flag, &st));
    CHECK_EQ(flag, 1);
    CHECK_EQ(idx, MPI_UNDEFINED);
    CHECK_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
    CHECK_EQ(st.MPI_ERROR, MPI_SUCCESS);
    CHECK_MPI(MPI_Request_get_status_some(3, r, &out, ind, sts));
    CHECK_EQ(out, MPI_UNDEFINED);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wait_path();
    test_path_and_status_ignore();
    free_before_complete();
    callback_errors();
    multiple_completion();
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    get_status_forms();
#endif
    mt_pass("grequest: callbacks, statuses and errors of generalized requests; MPI_Request_get_status forms");
    MPI_Finalize();
    return 0;
}
