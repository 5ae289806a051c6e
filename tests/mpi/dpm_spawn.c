/* MPI_Comm_spawn and MPI_Comm_spawn_multiple: the program spawns copies of
 * itself (argument "child"), which find their parent with
 * MPI_Comm_get_parent. Checked: sizes on both sides, the error codes,
 * point-to-point both ways, a broadcast with MPI_ROOT, the merged
 * intracommunicator and an allreduce over it (also merged with the same
 * high on both sides), MPI_APPNUM and the arguments
 * of each command of spawn_multiple, the info key wdir, MPI_Comm_disconnect
 * (after which MPI_Comm_get_parent gives MPI_COMM_NULL), spawns from
 * MPI_COMM_SELF of every rank at once, and the errors: a program that does
 * not exist, a negative maxprocs, a host that is not in the job, children
 * that end before MPI_Init (MPI_ERR_SPAWN, the error codes set, the parent
 * going on). */
#include "mpitest.h"
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#define NCHILD 3

/* Both sides merge with the same high: one side must come first as a
 * whole, the same on every process (the tie is broken by the leaders'
 * names, which for two jobs may share a world rank). */
static void merge_tie(MPI_Comm ic, int is_child)
{
    MPI_Comm m;
    CHECK_MPI(MPI_Intercomm_merge(ic, 0, &m));
    int n = mt_size(m), *sides = malloc(sizeof(int) * (size_t)n);
    CHECK_MPI(MPI_Allgather(&is_child, 1, MPI_INT, sides, 1, MPI_INT, m));
    int changes = 0;
    for (int i = 1; i < n; i++) changes += sides[i] != sides[i - 1];
    CHECK(changes == 1, "each side contiguous in the merged order (%d changes)", changes);
    int r = mt_rank(m), sum = 0;
    CHECK_MPI(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, m));
    CHECK_EQ(sum, n * (n - 1) / 2);
    free(sides);
    CHECK_MPI(MPI_Comm_free(&m));
}

static void child(int argc, char **argv, MPI_Comm parent)
{
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD), rsize;
    CHECK_MPI(MPI_Comm_remote_size(parent, &rsize));
    int *appnum, flag;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    CHECK(flag, "MPI_APPNUM is set in a spawned job");
    if (argc > 2 && strcmp(argv[2], "multiple") == 0) {
        /* command i of spawn_multiple runs i + 1 processes with "app<i>" */
        char want[16];
        snprintf(want, sizeof want, "app%d", *appnum);
        CHECK(argc > 3 && strcmp(argv[3], want) == 0, "argument %s for appnum %d", argc > 3 ? argv[3] : "-", *appnum);
        int first = *appnum * (*appnum + 1) / 2; /* ranks of the commands before */
        CHECK(rank >= first && rank < first + *appnum + 1, "rank %d within command %d", rank, *appnum);
    } else {
        CHECK_EQ(*appnum, 0);
        CHECK_EQ(size, NCHILD);
    }
    if (argc > 2 && strcmp(argv[2], "wdir") == 0) {
        char cwd[4096];
        CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") == 0, "working directory %.200s, expected /", cwd);
    }
    /* point-to-point: the parent's rank 0 sends each child its rank, the
     * child answers with its rank plus the value */
    int v;
    CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE));
    CHECK_EQ(v, 1000 + rank);
    v += rsize;
    CHECK_MPI(MPI_Send(&v, 1, MPI_INT, 0, 2, parent));
    /* broadcast from the parent's rank 0 */
    int b = -1;
    CHECK_MPI(MPI_Bcast(&b, 1, MPI_INT, 0, parent));
    CHECK_EQ(b, 4242);
    /* merged: children high, so parents come first */
    MPI_Comm merged;
    CHECK_MPI(MPI_Intercomm_merge(parent, 1, &merged));
    CHECK_EQ(mt_rank(merged), rsize + rank);
    int one = 1, sum = 0;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK_EQ(sum, rsize + size);
    CHECK_MPI(MPI_Comm_free(&merged));
    merge_tie(parent, 1);
    CHECK_MPI(MPI_Comm_disconnect(&parent));
    CHECK(parent == MPI_COMM_NULL, "disconnect sets the handle to MPI_COMM_NULL");
    CHECK_MPI(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "no parent after MPI_Comm_disconnect");
}

/* The parent side of one spawned job of nchild processes over comm. */
static void talk_to_children(MPI_Comm comm, MPI_Comm ic, int nchild)
{
    int rsize, me = mt_rank(comm);
    CHECK_MPI(MPI_Comm_remote_size(ic, &rsize));
    CHECK_EQ(rsize, nchild);
    CHECK_EQ(mt_size(ic), mt_size(comm));
    if (me == 0) {
        for (int i = 0; i < nchild; i++) {
            int v = 1000 + i;
            CHECK_MPI(MPI_Send(&v, 1, MPI_INT, i, 1, ic));
        }
        for (int i = 0; i < nchild; i++) {
            int v;
            MPI_Status st;
            CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 2, ic, &st));
            CHECK_EQ(v, 1000 + st.MPI_SOURCE + mt_size(comm));
        }
    }
    int b = 4242;
    CHECK_MPI(MPI_Bcast(&b, 1, MPI_INT, me == 0 ? MPI_ROOT : MPI_PROC_NULL, ic));
    MPI_Comm merged;
    CHECK_MPI(MPI_Intercomm_merge(ic, 0, &merged));
    CHECK_EQ(mt_rank(merged), me);
    int one = 1, sum = 0;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK_EQ(sum, nchild + mt_size(comm));
    CHECK_MPI(MPI_Comm_free(&merged));
    merge_tie(ic, 0);
    CHECK_MPI(MPI_Comm_disconnect(&ic));
    CHECK(ic == MPI_COMM_NULL, "disconnect sets the handle to MPI_COMM_NULL");
}

static void spawn_world(const char *self)
{
    MPI_Comm ic;
    int errs[NCHILD];
    char *args[] = {"child", "single", NULL};
    for (int i = 0; i < NCHILD; i++) errs[i] = -1;
    CHECK_MPI(MPI_Comm_spawn(self, args, NCHILD, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, errs));
    for (int i = 0; i < NCHILD; i++) CHECK_EQ(errs[i], MPI_SUCCESS);
    talk_to_children(MPI_COMM_WORLD, ic, NCHILD);
    mt_pass("spawn over MPI_COMM_WORLD");
}

/* Every rank spawns its own job at the same time, and the arguments
 * matter only at the root (NULL elsewhere). */
static void spawn_self_and_args_at_root(const char *self)
{
    MPI_Comm ic;
    char *args[] = {"child", "wdir", NULL};
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "wdir", "/"));
    CHECK_MPI(MPI_Comm_spawn(self, args, NCHILD, info, 0, MPI_COMM_SELF, &ic, MPI_ERRCODES_IGNORE));
    CHECK_MPI(MPI_Info_free(&info));
    talk_to_children(MPI_COMM_SELF, ic, NCHILD);
    /* the last rank is the root; the others pass nothing */
    char *plain[] = {"child", "single", NULL};
    int root = mt_size(MPI_COMM_WORLD) - 1;
    if (mt_rank(MPI_COMM_WORLD) == root)
        CHECK_MPI(MPI_Comm_spawn(self, plain, NCHILD, MPI_INFO_NULL, root, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE));
    else CHECK_MPI(MPI_Comm_spawn(NULL, NULL, -1, MPI_INFO_NULL, root, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE));
    talk_to_children(MPI_COMM_WORLD, ic, NCHILD);
    mt_pass("spawn with arguments at the root only");
}

static void spawn_multiple(const char *self)
{
    char *cmds[3] = {(char *)self, (char *)self, (char *)self};
    char *a0[] = {"child", "multiple", "app0", NULL}, *a1[] = {"child", "multiple", "app1", NULL},
         *a2[] = {"child", "multiple", "app2", NULL};
    char **argvs[3] = {a0, a1, a2};
    int maxprocs[3] = {1, 2, 3};
    MPI_Info infos[3] = {MPI_INFO_NULL, MPI_INFO_NULL, MPI_INFO_NULL};
    int errs[6];
    MPI_Comm ic;
    CHECK_MPI(MPI_Comm_spawn_multiple(3, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &ic, errs));
    for (int i = 0; i < 6; i++) CHECK_EQ(errs[i], MPI_SUCCESS);
    talk_to_children(MPI_COMM_WORLD, ic, 6);
    mt_pass("spawn_multiple: appnum and arguments per command");
}

static void spawn_errors(const char *self)
{
    MPI_Comm ic = MPI_COMM_WORLD;
    int errs[2] = {-1, -1};
    int rc = MPI_Comm_spawn("/nonexistent/leanmpi-program", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic,
                            errs);
    CHECK_ERRCLASS(rc, MPI_ERR_SPAWN);
    CHECK(ic == MPI_COMM_NULL, "no intercommunicator after a failed spawn");
    CHECK_EQ(errs[0], MPI_ERR_SPAWN);
    CHECK_EQ(errs[1], MPI_ERR_SPAWN);
    char *args[] = {"child", NULL};
    rc = MPI_Comm_spawn(self, args, -1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    CHECK_ERRCLASS(rc, MPI_ERR_ARG);
    /* more processes than the universe holds: nothing starts */
    rc = MPI_Comm_spawn(self, args, 1 << 20, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    CHECK_ERRCLASS(rc, MPI_ERR_SPAWN);
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "host", "no-such-host.invalid"));
    rc = MPI_Comm_spawn(self, args, 1, info, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    CHECK_ERRCLASS(rc, MPI_ERR_SPAWN);
    CHECK_MPI(MPI_Info_free(&info));
    /* children that end before MPI_Init: all of them (a program that is
     * no MPI program), and one of three while the others wait in
     * MPI_Init for it (they are ended) */
    char *false_args[] = {NULL};
    rc = MPI_Comm_spawn("/bin/false", false_args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, errs);
    CHECK_ERRCLASS(rc, MPI_ERR_SPAWN);
    CHECK(ic == MPI_COMM_NULL && errs[0] == MPI_ERR_SPAWN && errs[1] == MPI_ERR_SPAWN,
          "a spawn whose children die before MPI_Init fails with MPI_ERR_SPAWN");
    char *die_args[] = {"die-one", NULL};
    rc = MPI_Comm_spawn(self, die_args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    CHECK_ERRCLASS(rc, MPI_ERR_SPAWN);
    /* the job goes on */
    int one = 1, sum = 0;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_EQ(sum, mt_size(MPI_COMM_WORLD));
    mt_pass("spawn errors: MPI_ERR_SPAWN, error codes, the job goes on");
}

int main(int argc, char **argv)
{
    /* a spawned child that dies before MPI_Init (rank 1 of its job) */
    const char *me = getenv("LEANMPI_RANK");
    if (argc > 1 && strcmp(argv[1], "die-one") == 0 && me && atoi(me) == 1) return 3;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm parent;
    CHECK_MPI(MPI_Comm_get_parent(&parent));
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        CHECK(parent != MPI_COMM_NULL, "a spawned process has a parent");
        child(argc, argv, parent);
    } else {
        CHECK(parent == MPI_COMM_NULL, "the first job has no parent");
        mt_errors_return();
        /* the children of one spawn run in another directory (wdir) */
        char self[4096];
        CHECK(realpath(argv[0], self) != NULL, "the program's own path");
        spawn_world(self);
        spawn_self_and_args_at_root(self);
        spawn_multiple(self);
        spawn_errors(self);
    }
    CHECK_MPI(MPI_Finalize());
    return 0;
}
