/* Checks shared by the sessions tests (with and without MPI_Init): process
 * sets, communicators made from them, error handlers of sessions. */
#ifndef LEANMPI_TESTS_SESSION_CHECKS_H
#define LEANMPI_TESTS_SESSION_CHECKS_H
#include "mpitest.h"

/* Checks of error classes the standard leaves open, or where other
 * implementations are known to crash, run on LeanMPI only. */
static int sc_is_leanmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(v, &len);
    return !strncmp(v, "LeanMPI", 7);
}

/* mpi_size from a process set's info, or -1 without it. */
static int sc_pset_size(MPI_Session s, const char *name)
{
    MPI_Info info;
    char val[64];
    int flag = 0, len = (int)sizeof val;
    CHECK_MPI(MPI_Session_get_pset_info(s, name, &info));
    CHECK_MPI(MPI_Info_get_string(info, "mpi_size", &len, val, &flag));
    CHECK_MPI(MPI_Info_free(&info));
    return flag ? atoi(val) : -1;
}

/* Both predefined process sets are listed, their names come back whole and
 * truncated as asked, and their sizes are right. Returns the world size. */
static int sc_check_psets(MPI_Session s)
{
    int n = 0, found_world = 0, found_self = 0;
    CHECK_MPI(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2, "%d process sets", n);
    for (int i = 0; i < n; i++) {
        int len = 0;
        CHECK_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "length %d", len);
        char *name = malloc((size_t)len);
        int got = len;
        CHECK_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &got, name));
        CHECK_EQ(strlen(name), len - 1);
        if (!strcmp(name, "mpi://WORLD")) found_world = 1;
        if (!strcmp(name, "mpi://SELF")) found_self = 1;
        /* a short buffer gets the start of the name, terminated */
        char shortbuf[4];
        got = (int)sizeof shortbuf;
        CHECK_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &got, shortbuf));
        CHECK(!strncmp(shortbuf, name, 3) && shortbuf[3] == '\0', "truncated name '%s' of '%s'", shortbuf, name);
        free(name);
    }
    CHECK(found_world && found_self, "mpi://WORLD %d, mpi://SELF %d", found_world, found_self);
    CHECK_EQ(sc_pset_size(s, "mpi://SELF"), 1);
    int world = sc_pset_size(s, "mpi://WORLD");
    CHECK(world >= 1, "mpi://WORLD has size %d", world);

    MPI_Group g;
    int size, rank;
    CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    CHECK_MPI(MPI_Group_size(g, &size));
    CHECK_MPI(MPI_Group_rank(g, &rank));
    CHECK_EQ(size, world);
    CHECK(rank >= 0 && rank < size, "rank %d of %d", rank, size);
    CHECK_MPI(MPI_Group_free(&g));
    CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://SELF", &g));
    CHECK_MPI(MPI_Group_size(g, &size));
    CHECK_EQ(size, 1);
    CHECK_MPI(MPI_Group_rank(g, &rank));
    CHECK_EQ(rank, 0);
    CHECK_MPI(MPI_Group_free(&g));
    return world;
}

/* Bad arguments on a valid session with MPI_ERRORS_RETURN. */
static void sc_check_errors(MPI_Session s)
{
    int n = 0, len = 16;
    char name[16];
    MPI_Info info;
    MPI_Group g;
    CHECK_MPI(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    if (sc_is_leanmpi()) { /* MPICH 4.0 crashes on these */
        CHECK_ERRCLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, name), MPI_ERR_ARG);
        len = 16;
        CHECK_ERRCLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, name), MPI_ERR_ARG);
    }
    /* MPICH 4.0 raises these on MPI_COMM_SELF's handler, which a program
     * without MPI_Init cannot set */
    int init = 0;
    MPI_Initialized(&init);
    if (sc_is_leanmpi() || init) {
        CHECK_ERRCLASS(MPI_Session_get_pset_info(s, "mpi://NO_SUCH_SET", &info), MPI_ERR_ARG);
        CHECK_ERRCLASS(MPI_Group_from_session_pset(s, "mpi://NO_SUCH_SET", &g), MPI_ERR_ARG);
    }
}

/* A communicator over the session's world process set; checks its shape. */
static MPI_Comm sc_world_comm(MPI_Session s, const char *tag)
{
    MPI_Group g;
    MPI_Comm c;
    int gsize, grank, csize, crank, result;
    CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    CHECK_MPI(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    CHECK(c != MPI_COMM_NULL, "a communicator");
    CHECK_MPI(MPI_Group_size(g, &gsize));
    CHECK_MPI(MPI_Group_rank(g, &grank));
    CHECK_MPI(MPI_Comm_size(c, &csize));
    CHECK_MPI(MPI_Comm_rank(c, &crank));
    CHECK_EQ(csize, gsize);
    CHECK_EQ(crank, grank);
    MPI_Group cg;
    CHECK_MPI(MPI_Comm_group(c, &cg));
    CHECK_MPI(MPI_Group_compare(cg, g, &result));
    CHECK_EQ(result, MPI_IDENT);
    CHECK_MPI(MPI_Group_free(&cg));
    CHECK_MPI(MPI_Group_free(&g));
    MPI_Errhandler e;
    CHECK_MPI(MPI_Comm_get_errhandler(c, &e));
    CHECK(e == MPI_ERRORS_RETURN, "the error handler given");
    CHECK_MPI(MPI_Errhandler_free(&e));
    return c;
}

/* Real traffic on c: a sum and a ring exchange. */
static void sc_check_traffic(MPI_Comm c)
{
    int size, rank;
    CHECK_MPI(MPI_Comm_size(c, &size));
    CHECK_MPI(MPI_Comm_rank(c, &rank));
    int sum = -1;
    CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_EQ(sum, size * (size - 1) / 2);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, c, MPI_STATUS_IGNORE));
    CHECK_EQ(got, left);
}

/* Communicators from even and odd members, created at the same time with
 * different string tags, each over its own members only. */
static void sc_check_split_groups(MPI_Session s)
{
    MPI_Group world, half;
    int size, rank;
    CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    CHECK_MPI(MPI_Group_size(world, &size));
    CHECK_MPI(MPI_Group_rank(world, &rank));
    int parity = rank % 2, n = 0;
    int *members = malloc(sizeof(int) * (size_t)size);
    for (int r = parity; r < size; r += 2) members[n++] = r;
    CHECK_MPI(MPI_Group_incl(world, n, members, &half));
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_create_from_group(half, parity ? "org.leanmpi.test.odd" : "org.leanmpi.test.even", MPI_INFO_NULL,
                                         MPI_ERRORS_RETURN, &c));
    CHECK_EQ(mt_size(c), n);
    CHECK_EQ(mt_rank(c), rank / 2);
    int sum = -1;
    CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    int expect = 0;
    for (int i = 0; i < n; i++) expect += members[i];
    CHECK_EQ(sum, expect);
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK_MPI(MPI_Group_free(&half));
    CHECK_MPI(MPI_Group_free(&world));
    free(members);
}

/* Two communicators never match each other's messages: rank 0 sends on b
 * first, rank 1 receives on a first. */
static void sc_check_separate(MPI_Comm a, MPI_Comm b)
{
    if (mt_size(a) < 2) return;
    int one = 1, two = 2, got = 0;
    if (mt_rank(a) == 0) {
        CHECK_MPI(MPI_Send(&one, 1, MPI_INT, 1, 0, b));
        CHECK_MPI(MPI_Send(&two, 1, MPI_INT, 1, 0, a));
    } else if (mt_rank(a) == 1) {
        CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, 0, 0, a, MPI_STATUS_IGNORE));
        CHECK_EQ(got, 2);
        CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, 0, 0, b, MPI_STATUS_IGNORE));
        CHECK_EQ(got, 1);
    }
}

static int sc_handler_calls, sc_handler_code;
static MPI_Session sc_handler_session;

static void sc_handler(MPI_Session *s, int *code, ...)
{
    sc_handler_calls++;
    sc_handler_code = *code;
    sc_handler_session = *s;
}

/* A user error handler on a session: set, read back, called. */
static void sc_check_errhandler(MPI_Session s)
{
    MPI_Errhandler mine, got;
    CHECK_MPI(MPI_Session_create_errhandler(sc_handler, &mine));
    CHECK_MPI(MPI_Session_set_errhandler(s, mine));
    CHECK_MPI(MPI_Session_get_errhandler(s, &got));
    CHECK(got == mine, "the handler set");
    CHECK_MPI(MPI_Errhandler_free(&got));
    sc_handler_calls = 0;
    CHECK_MPI(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK_EQ(sc_handler_calls, 1);
    CHECK_EQ(sc_handler_code, MPI_ERR_OTHER);
    CHECK(sc_handler_session == s, "the handler is told its session");
    /* an error in a call on the session goes to it too (MPICH 4.0 reports
     * this one on no handler) */
    if (sc_is_leanmpi()) {
        MPI_Info info;
        int rc = MPI_Session_get_pset_info(s, "mpi://NO_SUCH_SET", &info);
        CHECK_EQ(sc_handler_calls, 2);
        CHECK_ERRCLASS(rc, MPI_ERR_ARG);
        CHECK_ERRCLASS(sc_handler_code, MPI_ERR_ARG);
    }
    CHECK_MPI(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Errhandler_free(&mine));
    CHECK_MPI(MPI_Session_get_errhandler(s, &got));
    CHECK(got == MPI_ERRORS_RETURN, "MPI_ERRORS_RETURN back");
}

/* The thread_level hint asked for is answered in the session's info. */
static void sc_check_info(MPI_Session s)
{
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL + 1];
    int len = (int)sizeof val, flag = 0;
    CHECK_MPI(MPI_Session_get_info(s, &info));
    CHECK_MPI(MPI_Info_get_string(info, "thread_level", &len, val, &flag));
    CHECK(flag, "thread_level in the session's info");
    CHECK(!strncmp(val, "MPI_THREAD_", 11), "thread_level = %.64s", val);
    CHECK_MPI(MPI_Info_free(&info));
}

static MPI_Session sc_init(const char *thread_level)
{
    MPI_Info info = MPI_INFO_NULL;
    MPI_Session s = MPI_SESSION_NULL;
    if (thread_level) {
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Info_set(info, "thread_level", thread_level));
    }
    CHECK_MPI(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    CHECK(s != MPI_SESSION_NULL, "a session");
    if (info != MPI_INFO_NULL) CHECK_MPI(MPI_Info_free(&info));
    return s;
}

#endif
