/* A program that uses MPI through sessions only: MPI_Init is never called.
 * Process sets, communicators made from their groups, several sessions at
 * once, error handlers, and a second round after every session ended. */
#include "session_checks.h"

static int world_flags(void)
{
    int init = -1, fin = -1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init * 2 + fin;
}

int main(void)
{
    CHECK_EQ(world_flags(), 0);
    MPI_Session a = sc_init("MPI_THREAD_SINGLE");
    /* the world model stays uninitialized */
    CHECK_EQ(world_flags(), 0);
    int world = sc_check_psets(a);
    sc_check_errors(a);
    sc_check_info(a);
    sc_check_errhandler(a);

    MPI_Comm ca = sc_world_comm(a, "org.leanmpi.test.a");
    CHECK_EQ(mt_size(ca), world);
    sc_check_traffic(ca);
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_MPI(MPI_Comm_get_name(ca, name, &len));
    CHECK_EQ(len, 0);
    CHECK_MPI(MPI_Comm_set_name(ca, "from a session"));
    CHECK_MPI(MPI_Comm_get_name(ca, name, &len));
    CHECK(!strcmp(name, "from a session") && len == 14, "name '%s'", name);
    sc_check_split_groups(a);

    /* a second session at the same time, its own communicator */
    MPI_Session b = sc_init(NULL);
    CHECK(b != a, "two sessions");
    MPI_Comm cb = sc_world_comm(b, "org.leanmpi.test.b");
    sc_check_separate(ca, cb);
    sc_check_traffic(cb);
    CHECK_MPI(MPI_Comm_free(&cb));
    CHECK_MPI(MPI_Session_finalize(&b));
    CHECK(b == MPI_SESSION_NULL, "finalize sets the handle to MPI_SESSION_NULL");
    /* a still works */
    sc_check_traffic(ca);
    int rank = mt_rank(ca);
    CHECK_MPI(MPI_Comm_free(&ca));
    CHECK_MPI(MPI_Session_finalize(&a));

    /* every session ended: a new one starts MPI again (MPICH 4.0 crashes) */
    if (sc_is_leanmpi()) {
        MPI_Session c = sc_init(NULL);
        MPI_Comm cc = sc_world_comm(c, "org.leanmpi.test.c");
        sc_check_traffic(cc);
        CHECK_MPI(MPI_Comm_free(&cc));
        CHECK_MPI(MPI_Session_finalize(&c));
    }
    CHECK_EQ(world_flags(), 0);
    if (rank == 0) printf("PASS sessions without MPI_Init\n");
    return 0;
}
