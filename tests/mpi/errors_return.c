/* Argument errors under MPI_ERRORS_RETURN: the right error class, a
 * non-empty error string, and the library keeps working afterwards.  Also
 * user error handlers and the error class/string tables. */
#include "mpitest.h"

static int rank, size;

/* After every error: the class is one of the accepted ones, the string is
 * non-empty, and a correct exchange right after still works. */
static void expect_error(int rc, const int *classes, int nclasses, const char *what, int line)
{
    int cls = -1, len = -1;
    char s[MPI_MAX_ERROR_STRING + 1];
    if (rc == MPI_SUCCESS) mt_fail(__FILE__, line, "%s: returned MPI_SUCCESS, expected an error", what);
    CHECK_MPI(MPI_Error_class(rc, &cls));
    int ok = 0;
    for (int i = 0; i < nclasses; i++) ok |= cls == classes[i];
    if (!ok)
        mt_fail(__FILE__, line, "%s: error class %d (%s) is not the expected %d", what, cls, mt_errstr(rc), classes[0]);
    CHECK_MPI(MPI_Error_string(rc, s, &len));
    CHECK(len > 0 && (int)strlen(s) == len, "%s: error string '%s' len %d", what, s, len);
    int x = 123 + line, y = -1;
    MPI_Request rq;
    CHECK_MPI(MPI_Irecv(&y, 1, MPI_INT, rank, 77, MPI_COMM_WORLD, &rq));
    CHECK_MPI(MPI_Send(&x, 1, MPI_INT, rank, 77, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(y == x, "%s: exchange after the error got %d", what, y);
}
#define EXPECT1(call, cls)                            \
    do {                                              \
        int c_[1] = {cls};                            \
        expect_error((call), c_, 1, #call, __LINE__); \
    } while (0)
#define EXPECT2(call, cls1, cls2)                     \
    do {                                              \
        int c_[2] = {cls1, cls2};                     \
        expect_error((call), c_, 2, #call, __LINE__); \
    } while (0)

static int handler_calls;
static MPI_Comm handler_comm_seen;
static int handler_code_seen;
static void my_handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_comm_seen = *comm;
    handler_code_seen = *code;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rank = mt_rank(MPI_COMM_WORLD);
    size = mt_size(MPI_COMM_WORLD);
    mt_errors_return();
    MPI_Errhandler eh;
    CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "Comm_get_errhandler does not return MPI_ERRORS_RETURN");
    CHECK_MPI(MPI_Errhandler_free(&eh));

    int buf[8] = {0}, r;
    MPI_Request rq;
    /* Communicator. */
    EXPECT1(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT1(MPI_Comm_size(MPI_COMM_NULL, &r), MPI_ERR_COMM);
    MPI_Comm freed;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &freed));
    CHECK_MPI(MPI_Comm_free(&freed)); /* the handle is now MPI_COMM_NULL */
    EXPECT1(MPI_Irecv(buf, 1, MPI_INT, 0, 0, freed, &rq), MPI_ERR_COMM);
    /* Count, rank, tag. */
    EXPECT1(MPI_Send(buf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT1(MPI_Irecv(buf, -5, MPI_INT, rank, 0, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    EXPECT1(MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT1(MPI_Send(buf, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT1(MPI_Irecv(buf, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    EXPECT1(MPI_Send(buf, 1, MPI_INT, rank, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT1(MPI_Isend(buf, 1, MPI_INT, rank, -100, MPI_COMM_WORLD, &rq), MPI_ERR_TAG);
    EXPECT1(MPI_Irecv(buf, 1, MPI_INT, rank, -3, MPI_COMM_WORLD, &rq), MPI_ERR_TAG); /* ANY_TAG is -1 */
    {
        void *v;
        int flag;
        CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
        int ub = *(int *)v;
        if (ub < 2147483647) EXPECT1(MPI_Send(buf, 1, MPI_INT, rank, ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
    }
    /* Buffer. */
    EXPECT2(MPI_Send(NULL, 4, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, MPI_ERR_ARG);
    /* Datatypes: null, uncommitted, freed (the freed handle is MPI_DATATYPE_NULL). */
    EXPECT1(MPI_Send(buf, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT1(MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD, &rq), MPI_ERR_TYPE);
    MPI_Datatype unc, fr;
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &unc));
    EXPECT1(MPI_Send(buf, 1, unc, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT1(MPI_Irecv(buf, 1, unc, rank, 0, MPI_COMM_WORLD, &rq), MPI_ERR_TYPE);
    CHECK_MPI(MPI_Type_free(&unc));
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &fr));
    CHECK_MPI(MPI_Type_commit(&fr));
    CHECK_MPI(MPI_Type_free(&fr));
    CHECK(fr == MPI_DATATYPE_NULL, "Type_free sets MPI_DATATYPE_NULL");
    EXPECT1(MPI_Send(buf, 1, fr, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT1(MPI_Type_size(MPI_DATATYPE_NULL, &r), MPI_ERR_TYPE);
    /* Requests and other arguments. */
    EXPECT2(MPI_Start(&(MPI_Request){MPI_REQUEST_NULL}), MPI_ERR_REQUEST, MPI_ERR_ARG);
    /* Nothing the failed calls could have posted or sent is left behind. */
    int flag = 1;
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a failed call left a message behind");
    mt_pass("errors_return: COMM/COUNT/RANK/TAG/BUFFER/TYPE errors return the right class, library keeps working");

    /* A user error handler gets the communicator and the code. */
    MPI_Comm dup;
    MPI_Errhandler mine, got;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_MPI(MPI_Comm_create_errhandler(my_handler, &mine));
    CHECK_MPI(MPI_Comm_set_errhandler(dup, mine));
    CHECK_MPI(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == mine, "Comm_get_errhandler does not return the handler just set");
    CHECK_MPI(MPI_Errhandler_free(&got));
    int rc = MPI_Send(buf, 1, MPI_INT, size + 1, 0, dup);
    CHECK_EQ(handler_calls, 1);
    int res = -1;
    CHECK_MPI(MPI_Comm_compare(handler_comm_seen, dup, &res));
    CHECK(res == MPI_IDENT, "the handler got a different communicator (compare %d)", res);
    int cls = -1;
    CHECK_MPI(MPI_Error_class(handler_code_seen, &cls));
    CHECK_EQ(cls, MPI_ERR_RANK);
    CHECK(rc != MPI_SUCCESS, "the call returned MPI_SUCCESS after the handler ran");
    CHECK_MPI(MPI_Error_class(rc, &cls));
    CHECK_EQ(cls, MPI_ERR_RANK);
    /* MPI_Comm_call_errhandler invokes it too; the handler survives Errhandler_free. */
    CHECK_MPI(MPI_Errhandler_free(&mine));
    CHECK(mine == MPI_ERRHANDLER_NULL, "Errhandler_free sets MPI_ERRHANDLER_NULL");
    CHECK_MPI(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
    CHECK_EQ(handler_calls, 2);
    CHECK_EQ(handler_code_seen, MPI_ERR_OTHER);
    /* The world handler is unchanged. */
    EXPECT1(MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_EQ(handler_calls, 2);
    CHECK_MPI(MPI_Comm_free(&dup));
#if MPI_VERSION >= 4
    CHECK(MPI_ERRORS_ABORT != MPI_ERRHANDLER_NULL, "MPI_ERRORS_ABORT");
#ifndef MPICH_VERSION /* MPICH 4.0 fails an internal assertion when MPI_ERRORS_ABORT is set */
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ABORT));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
#endif
#endif
    CHECK(MPI_ERRORS_ARE_FATAL != MPI_ERRORS_RETURN, "predefined handlers must differ");
    mt_pass("errors_return: user error handler called with the right communicator and code");

    /* Every standard error class maps to itself and has a string. */
    const int classes[] = {
        MPI_SUCCESS,
        MPI_ERR_BUFFER,
        MPI_ERR_COUNT,
        MPI_ERR_TYPE,
        MPI_ERR_TAG,
        MPI_ERR_COMM,
        MPI_ERR_RANK,
        MPI_ERR_REQUEST,
        MPI_ERR_ROOT,
        MPI_ERR_GROUP,
        MPI_ERR_OP,
        MPI_ERR_TOPOLOGY,
        MPI_ERR_DIMS,
        MPI_ERR_ARG,
        MPI_ERR_UNKNOWN,
        MPI_ERR_TRUNCATE,
        MPI_ERR_OTHER,
        MPI_ERR_INTERN,
        MPI_ERR_IN_STATUS,
        MPI_ERR_PENDING,
        MPI_ERR_KEYVAL,
        MPI_ERR_NO_MEM,
        MPI_ERR_BASE,
        MPI_ERR_INFO_KEY,
        MPI_ERR_INFO_VALUE,
        MPI_ERR_INFO_NOKEY,
        MPI_ERR_SPAWN,
        MPI_ERR_PORT,
        MPI_ERR_SERVICE,
        MPI_ERR_NAME,
        MPI_ERR_WIN,
        MPI_ERR_SIZE,
        MPI_ERR_DISP,
        MPI_ERR_INFO,
        MPI_ERR_LOCKTYPE,
        MPI_ERR_ASSERT,
        MPI_ERR_RMA_CONFLICT,
        MPI_ERR_RMA_SYNC,
        MPI_ERR_RMA_RANGE,
        MPI_ERR_RMA_ATTACH,
        MPI_ERR_RMA_SHARED,
        MPI_ERR_RMA_FLAVOR,
        MPI_ERR_FILE,
        MPI_ERR_NOT_SAME,
        MPI_ERR_AMODE,
        MPI_ERR_UNSUPPORTED_DATAREP,
        MPI_ERR_UNSUPPORTED_OPERATION,
        MPI_ERR_NO_SUCH_FILE,
        MPI_ERR_FILE_EXISTS,
        MPI_ERR_BAD_FILE,
        MPI_ERR_ACCESS,
        MPI_ERR_NO_SPACE,
        MPI_ERR_QUOTA,
        MPI_ERR_READ_ONLY,
        MPI_ERR_FILE_IN_USE,
        MPI_ERR_DUP_DATAREP,
        MPI_ERR_CONVERSION,
        MPI_ERR_IO,
#if MPI_VERSION >= 4
        MPI_ERR_SESSION,
        MPI_ERR_PROC_ABORTED,
        MPI_ERR_VALUE_TOO_LARGE,
#endif
    };
    const int nc = (int)(sizeof classes / sizeof classes[0]);
    for (int i = 0; i < nc; i++) {
        char s[MPI_MAX_ERROR_STRING + 1];
        int len = -1;
        cls = -1;
        CHECK(classes[i] >= 0 && classes[i] <= MPI_ERR_LASTCODE, "class %d out of 0..MPI_ERR_LASTCODE", classes[i]);
        CHECK_MPI(MPI_Error_class(classes[i], &cls));
        CHECK(cls == classes[i], "Error_class(%d) = %d", classes[i], cls);
        CHECK_MPI(MPI_Error_string(classes[i], s, &len));
        CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(s) == len, "Error_string(%d): '%s' len %d",
              classes[i], s, len);
        for (int j = 0; j < i; j++)
            CHECK(classes[j] != classes[i], "error classes %d and %d have the same value", i, j);
    }
    /* User-defined class, code and string. */
    int ucls, ucode, len;
    char s[MPI_MAX_ERROR_STRING + 1];
    CHECK_MPI(MPI_Add_error_class(&ucls));
    CHECK_MPI(MPI_Add_error_code(ucls, &ucode));
    CHECK_MPI(MPI_Add_error_string(ucode, "lean test error"));
    CHECK_MPI(MPI_Error_class(ucode, &cls));
    CHECK_EQ(cls, ucls);
    CHECK_MPI(MPI_Error_string(ucode, s, &len));
    CHECK(strcmp(s, "lean test error") == 0, "user error string '%s'", s);
    void *lastp;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag));
    /* MPICH encodes user codes above MPI_LASTUSEDCODE; the class is always covered. */
    CHECK(flag && *(int *)lastp >= ucls, "MPI_LASTUSEDCODE must cover the new class");
    mt_pass("errors_return: Error_class/Error_string of every standard class, user error classes");
    MPI_Finalize();
    return 0;
}
