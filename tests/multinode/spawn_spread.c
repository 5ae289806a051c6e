/* A spawned job over several hosts (run by on_hosts.py; the arguments are
 * the job's host names). The program spawns copies of itself (argument
 * "child"), which report the size of their node (MPI_COMM_TYPE_SHARED) to
 * the parent, run an allreduce and a ring of messages over their
 * MPI_COMM_WORLD (so across hosts when it spans several), and a merged
 * allreduce with the parent.
 *
 * - no host given, every slot in use: the children are spread over the
 *   hosts in blocks (4 children on h hosts: node sizes of at most
 *   ceil(4 / h), none of them 4 when h > 1);
 * - info host = one name: all children on that host;
 * - info host = "a,b": spread over those two, one each;
 * - a host named twice, a host not in the job, a program that does not
 *   exist (every host refuses it), and a child on one of two hosts that
 *   ends before MPI_Init while the other waits in it: MPI_ERR_SPAWN, every
 *   error code set, and the parent goes on to spawn again. */
#include "mpitest.h"
#include <stdlib.h>
#include <string.h>

static void child(MPI_Comm parent)
{
    MPI_Comm node;
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int node_size = mt_size(node);
    CHECK_MPI(MPI_Comm_free(&node));
    /* across the children's hosts */
    int sum = 0;
    CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_EQ(sum, size * (size - 1) / 2);
    int got = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
    CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(got, left);
    CHECK_MPI(MPI_Gather(&node_size, 1, MPI_INT, NULL, 0, MPI_INT, 0, parent));
    MPI_Comm merged;
    CHECK_MPI(MPI_Intercomm_merge(parent, 1, &merged));
    int one = 1, total = 0;
    CHECK_MPI(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, merged));
    CHECK_EQ(total, mt_size(merged));
    CHECK_MPI(MPI_Comm_free(&merged));
    CHECK_MPI(MPI_Comm_disconnect(&parent));
}

/* Spawn n children with the info key host (NULL: none); their node sizes
 * in sizes (on the root). */
static void spawn(const char *prog, int n, const char *host, int *sizes)
{
    MPI_Info info = MPI_INFO_NULL;
    if (host) {
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Info_set(info, "host", host));
    }
    char *args[] = {"child", NULL};
    MPI_Comm ic;
    int *codes = malloc(sizeof(int) * (size_t)n);
    CHECK_MPI(MPI_Comm_spawn(prog, args, n, info, 0, MPI_COMM_WORLD, &ic, codes));
    for (int i = 0; i < n; i++) CHECK_EQ(codes[i], MPI_SUCCESS);
    free(codes);
    int root = mt_rank(MPI_COMM_WORLD) == 0 ? MPI_ROOT : MPI_PROC_NULL;
    CHECK_MPI(MPI_Gather(NULL, 0, MPI_INT, sizes, 1, MPI_INT, root, ic));
    MPI_Comm merged;
    CHECK_MPI(MPI_Intercomm_merge(ic, 0, &merged));
    int one = 1, total = 0;
    CHECK_MPI(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, merged));
    CHECK_EQ(total, mt_size(MPI_COMM_WORLD) + n);
    CHECK_MPI(MPI_Comm_free(&merged));
    CHECK_MPI(MPI_Comm_disconnect(&ic));
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
}

static void spawn_refused(const char *prog, int n, const char *host, const char *arg, const char *what)
{
    MPI_Info info = MPI_INFO_NULL;
    if (host) {
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Info_set(info, "host", host));
    }
    char *args[] = {(char *)arg, NULL};
    MPI_Comm ic = MPI_COMM_NULL;
    int codes[4] = {-1, -1, -1, -1};
    int rc = MPI_Comm_spawn(prog, args, n, info, 0, MPI_COMM_WORLD, &ic, codes);
    CHECK_ERRCLASS(rc, MPI_ERR_SPAWN);
    CHECK(ic == MPI_COMM_NULL, "%s: no intercommunicator", what);
    if (mt_rank(MPI_COMM_WORLD) == 0)
        for (int i = 0; i < n; i++) CHECK(codes[i] == MPI_ERR_SPAWN, "%s: error code %d is %d", what, i, codes[i]);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    mt_pass(what);
}

int main(int argc, char **argv)
{
    /* spawned with "die-on-second-host" over two hosts, one child each:
     * the child on the second host (rank 1 of its job) ends first */
    const char *me = getenv("LEANMPI_RANK");
    if (argc > 1 && !strcmp(argv[1], "die-on-second-host") && me && atoi(me) == 1) return 3;
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        child(parent);
        MPI_Finalize();
        return 0;
    }
    mt_errors_return();
    int rank = mt_rank(MPI_COMM_WORLD), nhosts = argc - 1;
    CHECK(nhosts >= 2, "usage: %s HOST HOST... (the job's hosts)", argv[0]);
    int sizes[4];

    spawn(argv[0], 4, NULL, sizes);
    if (rank == 0) {
        int most = (4 + nhosts - 1) / nhosts;
        for (int i = 0; i < 4; i++)
            CHECK(sizes[i] >= 1 && sizes[i] <= most, "child %d's node holds %d of 4 (at most %d on %d hosts)", i,
                  sizes[i], most, nhosts);
    }
    mt_pass("spawn without a host: the children spread over the hosts");

    spawn(argv[0], 2, argv[2], sizes);
    if (rank == 0) CHECK(sizes[0] == 2 && sizes[1] == 2, "host %s: node sizes %d %d", argv[2], sizes[0], sizes[1]);
    mt_pass("spawn on one named host");

    char two[256];
    snprintf(two, sizeof two, "%s,%s", argv[1], argv[2]);
    spawn(argv[0], 2, two, sizes);
    if (rank == 0) CHECK(sizes[0] == 1 && sizes[1] == 1, "hosts %s: node sizes %d %d", two, sizes[0], sizes[1]);
    mt_pass("spawn over two named hosts");

    snprintf(two, sizeof two, "%s,%s", argv[1], argv[1]);
    spawn_refused(argv[0], 2, two, "child", "a host named twice: MPI_ERR_SPAWN");
    spawn_refused(argv[0], 2, "no-such-host", "child", "a host not in the job: MPI_ERR_SPAWN");
    spawn_refused("/nonexistent/program", 4, NULL, "child", "a missing program on every host: MPI_ERR_SPAWN");
    /* one child per host, the one on the second host ending before
     * MPI_Init while the first waits in it: that one is ended too */
    snprintf(two, sizeof two, "%s,%s", argv[1], argv[2]);
    spawn_refused(argv[0], 2, two, "die-on-second-host", "a spawn failing on one of its hosts: MPI_ERR_SPAWN");

    spawn(argv[0], 3, NULL, sizes);
    mt_pass("the job spawns again after the refusals");
    MPI_Finalize();
    return 0;
}
