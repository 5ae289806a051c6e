/* Sessions next to the world model: a session opened before MPI_Init, the
 * world model in between, a session outliving MPI_Finalize; errors on bad
 * sessions and groups. */
#include "session_checks.h"

int main(int argc, char **argv)
{
    MPI_Session s = sc_init("MPI_THREAD_FUNNELED");
    int flag = -1;
    MPI_Initialized(&flag);
    CHECK_EQ(flag, 0);
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Initialized(&flag);
    CHECK_EQ(flag, 1);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int size = mt_size(MPI_COMM_WORLD), rank = mt_rank(MPI_COMM_WORLD);

    CHECK_EQ(sc_check_psets(s), size);
    sc_check_errors(s);
    sc_check_info(s);
    sc_check_errhandler(s);

    MPI_Comm c = sc_world_comm(s, "org.leanmpi.test.world");
    int result;
    CHECK_MPI(MPI_Comm_compare(c, MPI_COMM_WORLD, &result));
    CHECK_EQ(result, MPI_CONGRUENT);
    CHECK_EQ(mt_rank(c), rank);
    sc_check_traffic(c);
    sc_check_separate(c, MPI_COMM_WORLD);
    sc_check_split_groups(s);
    /* the same string tag again, after the first creation finished */
    MPI_Comm c2 = sc_world_comm(s, "org.leanmpi.test.world");
    sc_check_separate(c, c2);
    CHECK_MPI(MPI_Comm_free(&c2));

    /* a group from the world model works as well */
    MPI_Group wg;
    MPI_Comm from_world;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK_MPI(
        MPI_Comm_create_from_group(wg, "org.leanmpi.test.worldgroup", MPI_INFO_NULL, MPI_ERRORS_RETURN, &from_world));
    sc_check_traffic(from_world);
    CHECK_MPI(MPI_Comm_free(&from_world));

    /* bad arguments */
    int n;
    CHECK_ERRCLASS(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
    if (sc_is_leanmpi()) {
        MPI_Info info;
        MPI_Errhandler comm_handler;
        CHECK_ERRCLASS(MPI_Session_get_info(MPI_SESSION_NULL, &info), MPI_ERR_SESSION);
        CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &comm_handler));
        CHECK_MPI(
            MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void (*)(void))sc_handler, &comm_handler));
        CHECK_ERRCLASS(MPI_Session_set_errhandler(s, comm_handler), MPI_ERR_ARG);
        CHECK_MPI(MPI_Errhandler_free(&comm_handler));
        /* a process outside the group cannot take part */
        if (size > 1) {
            MPI_Group first;
            MPI_Comm none;
            int zero = 0;
            CHECK_MPI(MPI_Group_incl(wg, 1, &zero, &first));
            if (rank != 0)
                CHECK_ERRCLASS(MPI_Comm_create_from_group(first, "org.leanmpi.test.first", MPI_INFO_NULL,
                                                          MPI_ERRORS_RETURN, &none),
                               MPI_ERR_GROUP);
            CHECK_MPI(MPI_Group_free(&first));
        }
        CHECK_ERRCLASS(MPI_Comm_create_from_group(wg, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &from_world),
                       MPI_ERR_ARG);
        MPI_Session bad;
        CHECK_ERRCLASS(MPI_Session_init(MPI_INFO_NULL, MPI_ERRHANDLER_NULL, &bad), MPI_ERR_ARG);
    }
    CHECK_MPI(MPI_Group_free(&wg));

    /* the session outlives the world model */
    CHECK_MPI(MPI_Finalize());
    MPI_Finalized(&flag);
    CHECK_EQ(flag, 1);
    sc_check_traffic(c);
    MPI_Session t = sc_init(NULL);
    MPI_Comm ct = sc_world_comm(t, "org.leanmpi.test.late");
    sc_check_traffic(ct);
    CHECK_MPI(MPI_Comm_free(&ct));
    CHECK_MPI(MPI_Session_finalize(&t));
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK_MPI(MPI_Session_finalize(&s));
    MPI_Finalized(&flag);
    CHECK_EQ(flag, 1);
    if (rank == 0) printf("PASS sessions with the world model\n");
    return 0;
}
