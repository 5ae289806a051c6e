/* LMTEST-LEANMPI-ONLY */
/* Session misuse under MPI_ERRORS_RETURN: invalid process set names and
 * indices, hints that name no thread level, error handlers of the wrong
 * kind, groups that do not suit MPI_Comm_create_from_group, and a session
 * used after MPI_Session_finalize. Errors on a live session go to its own
 * handler (MPI_ERRORS_RETURN here); errors on an invalid session have no
 * object and go to MPI_COMM_SELF's, which the world model lets this test
 * set (other libraries differ on several classes, hence LeanMPI only). */
#include "mpitest.h"

static int handler_calls, handler_class;
static void session_handler(MPI_Session *s, int *code, ...)
{
    (void)s;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

int main(int argc, char **argv)
{
    MPI_Session s, stale;
    CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Init(&argc, &argv);
    mt_errors_return();
    int n, len;
    char name[MPI_MAX_PSET_NAME_LEN];
    MPI_Info info = MPI_INFO_NULL;
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm c = MPI_COMM_NULL;

    /* process sets: unknown or missing names, indices out of range */
    CHECK_MPI(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    len = (int)sizeof name;
    CHECK_ERRCLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, name), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, name), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, NULL, name), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Group_from_session_pset(s, "mpi://NO_SUCH_SET", &g), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Group_from_session_pset(s, "", &g), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Group_from_session_pset(s, NULL, &g), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Session_get_pset_info(s, "mpi://NO_SUCH_SET", &info), MPI_ERR_ARG);
    CHECK(g == MPI_GROUP_NULL && info == MPI_INFO_NULL, "a failed call returned an object");

    /* a thread level no one knows; a communicator handler for a session */
    MPI_Info hints;
    MPI_Session bad = MPI_SESSION_NULL;
    CHECK_MPI(MPI_Info_create(&hints));
    CHECK_MPI(MPI_Info_set(hints, "thread_level", "MPI_THREAD_PLENTY"));
    CHECK_ERRCLASS(MPI_Session_init(hints, MPI_ERRORS_RETURN, &bad), MPI_ERR_INFO_VALUE);
    CHECK_MPI(MPI_Info_free(&hints));
    MPI_Errhandler comm_eh, sess_eh;
    CHECK_MPI(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void (*)(void))session_handler, &comm_eh));
    CHECK_MPI(MPI_Session_create_errhandler(session_handler, &sess_eh));
    CHECK_ERRCLASS(MPI_Session_init(MPI_INFO_NULL, comm_eh, &bad), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Session_set_errhandler(s, comm_eh), MPI_ERR_ARG);
    CHECK(bad == MPI_SESSION_NULL, "a failed Session_init returned a session");

    /* MPI_Comm_create_from_group: a freed group, a session handler, a tag too long */
    MPI_Group wg, stale_g;
    CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
    CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://SELF", &stale_g));
    CHECK_MPI(MPI_Group_free(&stale_g));
    CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://SELF", &g));
    MPI_Group freed = g;
    CHECK_MPI(MPI_Group_free(&g));
    CHECK_ERRCLASS(MPI_Comm_create_from_group(freed, "org.leanmpi.test.errors", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c),
                   MPI_ERR_GROUP);
    CHECK_ERRCLASS(MPI_Comm_create_from_group(wg, "org.leanmpi.test.errors", MPI_INFO_NULL, sess_eh, &c), MPI_ERR_ARG);
    char longtag[MPI_MAX_STRINGTAG_LEN + 8];
    memset(longtag, 't', sizeof longtag - 1);
    longtag[sizeof longtag - 1] = '\0';
    CHECK_ERRCLASS(MPI_Comm_create_from_group(wg, longtag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c), MPI_ERR_ARG);
    CHECK(c == MPI_COMM_NULL, "a failed constructor returned a communicator");

    /* a session's own handler gets the errors on that session */
    CHECK_MPI(MPI_Session_set_errhandler(s, sess_eh));
    int rc = MPI_Group_from_session_pset(s, "mpi://NO_SUCH_SET", &g);
    CHECK_EQ(handler_calls, 1);
    CHECK_EQ(handler_class, MPI_ERR_ARG);
    CHECK_ERRCLASS(rc, MPI_ERR_ARG);
    CHECK_MPI(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK_EQ(handler_calls, 2);
    CHECK_EQ(handler_class, MPI_ERR_OTHER);
    CHECK_MPI(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));

    /* the world process set still makes a working communicator */
    CHECK_MPI(MPI_Comm_create_from_group(wg, "org.leanmpi.test.errors", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    int one = 1, sum = 0;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_EQ(sum, mt_size(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK_MPI(MPI_Group_free(&wg));

    /* a session used after MPI_Session_finalize, and the null session */
    stale = s;
    CHECK_MPI(MPI_Session_finalize(&s));
    CHECK(s == MPI_SESSION_NULL, "Session_finalize sets MPI_SESSION_NULL");
    CHECK_ERRCLASS(MPI_Session_get_num_psets(stale, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
    CHECK_ERRCLASS(MPI_Session_get_nth_pset(stale, MPI_INFO_NULL, 0, &len, name), MPI_ERR_SESSION);
    CHECK_ERRCLASS(MPI_Session_get_info(stale, &info), MPI_ERR_SESSION);
    CHECK_ERRCLASS(MPI_Session_get_pset_info(stale, "mpi://WORLD", &info), MPI_ERR_SESSION);
    CHECK_ERRCLASS(MPI_Group_from_session_pset(stale, "mpi://WORLD", &g), MPI_ERR_SESSION);
    MPI_Errhandler e;
    CHECK_ERRCLASS(MPI_Session_get_errhandler(stale, &e), MPI_ERR_SESSION);
    CHECK_ERRCLASS(MPI_Session_set_errhandler(stale, MPI_ERRORS_RETURN), MPI_ERR_SESSION);
    CHECK_ERRCLASS(MPI_Session_call_errhandler(stale, MPI_ERR_OTHER), MPI_ERR_SESSION);
    CHECK_ERRCLASS(MPI_Session_finalize(&stale), MPI_ERR_SESSION);
    MPI_Session null_s = MPI_SESSION_NULL;
    CHECK_ERRCLASS(MPI_Session_finalize(&null_s), MPI_ERR_SESSION);
    CHECK_ERRCLASS(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
    CHECK(g == MPI_GROUP_NULL && info == MPI_INFO_NULL, "a call on a finalized session returned an object");
    CHECK_EQ(handler_calls, 2);
    CHECK_MPI(MPI_Errhandler_free(&comm_eh));
    CHECK_MPI(MPI_Errhandler_free(&sess_eh));
    mt_pass("errors_session: bad process sets, hints and handlers; sessions used after finalize");
    MPI_Finalize();
    return 0;
}
