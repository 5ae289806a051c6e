/* LMTEST-LEANMPI-ONLY */
/* One misuse per area under the default MPI_ERRORS_ARE_FATAL, chosen by
 * LM_FATAL_CASE: the job must end with a non-zero status and a message naming
 * the function and what was wrong (the CMake registration gives the
 * expected message per case). Rank 0 makes the erroneous call; the other
 * ranks wait for a message that never comes and must be ended by the
 * runtime. A call that returns instead prints UNEXPECTED and aborts with 0,
 * which the expected message then does not match. */
#include "mpitest.h"

static void wait_forever(void)
{
    int x;
    MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static int misuse(const char *c)
{
    int n, x = 1;
    if (!strcmp(c, "topology")) {
        int src, dst;
        return MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst);
    }
    if (!strcmp(c, "neighbor")) {
        int y;
        return MPI_Neighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_SELF);
    }
    if (!strcmp(c, "graph")) {
        int index[1] = {1}, edges[1] = {5};
        MPI_Comm g;
        return MPI_Graph_create(MPI_COMM_SELF, 1, index, edges, 0, &g);
    }
    if (!strcmp(c, "datatype")) {
        MPI_Datatype t, stale;
        MPI_Type_contiguous(2, MPI_INT, &t);
        MPI_Type_commit(&t);
        stale = t;
        MPI_Type_free(&t);
        int buf[2];
        return MPI_Send(buf, 1, stale, 0, 0, MPI_COMM_SELF);
    }
    if (!strcmp(c, "comm")) {
        MPI_Comm d, stale;
        MPI_Comm_dup(MPI_COMM_SELF, &d);
        stale = d;
        MPI_Comm_free(&d);
        return MPI_Comm_size(stale, &n);
    }
    if (!strcmp(c, "group")) {
        MPI_Group g, stale;
        MPI_Comm_group(MPI_COMM_WORLD, &g);
        stale = g;
        MPI_Group_free(&g);
        return MPI_Group_size(stale, &n);
    }
    if (!strcmp(c, "keyval")) {
        int tkey;
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL);
        return MPI_Comm_set_attr(MPI_COMM_SELF, tkey, &x);
    }
    if (!strcmp(c, "info")) {
        char key[MPI_MAX_INFO_KEY + 8];
        memset(key, 'k', sizeof key - 1);
        key[sizeof key - 1] = '\0';
        MPI_Info info;
        MPI_Info_create(&info);
        return MPI_Info_set(info, key, "v");
    }
    if (!strcmp(c, "errorcode")) {
        char s[MPI_MAX_ERROR_STRING];
        return MPI_Error_string(MPI_ERR_LASTCODE + 4242, s, &n);
    }
    if (!strcmp(c, "intercomm")) {
        MPI_Comm m;
        return MPI_Intercomm_merge(MPI_COMM_SELF, 0, &m);
    }
    if (!strcmp(c, "session")) {
        /* the session's own handler is MPI_ERRORS_ARE_FATAL */
        MPI_Session s;
        MPI_Group g;
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s);
        return MPI_Group_from_session_pset(s, "mpi://NO_SUCH_SET", &g);
    }
    if (!strcmp(c, "session_freed")) {
        /* no object to report on: MPI_COMM_SELF's handler, still fatal */
        MPI_Session s, stale;
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
        stale = s;
        MPI_Session_finalize(&s);
        return MPI_Session_get_num_psets(stale, MPI_INFO_NULL, &n);
    }
    printf("FAIL unknown LM_FATAL_CASE '%s'\n", c);
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    const char *c = getenv("LM_FATAL_CASE");
    MPI_Init(&argc, &argv);
    if (!c) {
        printf("FAIL LM_FATAL_CASE is not set\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (mt_rank(MPI_COMM_WORLD) == 0) {
        printf("case %s\n", c);
        fflush(stdout);
        int rc = misuse(c);
        printf("UNEXPECTED: the call returned %d under MPI_ERRORS_ARE_FATAL\n", rc);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 0);
    } else {
        wait_forever();
    }
    MPI_Finalize();
    return 0;
}
