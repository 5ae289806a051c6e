/* Shared-memory windows: MPI_Win_allocate_shared over the ranks of a node
 * gives memory that the other ranks really see through the addresses
 * MPI_Win_shared_query returns; parts are contiguous by default; the
 * segment leaves nothing behind in /dev/shm. */
#include "mpitest.h"
#include <dirent.h>
#include <stdint.h>

/* Entries of /dev/shm whose name contains "leanmpi" (none ever should). */
static int shm_files(void)
{
    DIR *d = opendir("/dev/shm");
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, "leanmpi")) n++;
    closedir(d);
    return n;
}

static void fence(MPI_Comm comm)
{
    /* the test's own ordering of plain loads and stores: a full memory
     * barrier on each side of a barrier */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    CHECK_MPI(MPI_Barrier(comm));
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void exercise(MPI_Comm node, int noncontig, int large_count)
{
    int rank = mt_rank(node), size = mt_size(node);
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    }
    /* rank r holds 3 + r ints; every third rank holds nothing */
    int mine = rank % 3 == 2 ? 0 : 3 + rank;
    int *base = NULL;
    MPI_Win win;
#if MPI_VERSION >= 4
    if (large_count)
        CHECK_MPI(MPI_Win_allocate_shared_c((MPI_Aint)(mine * sizeof(int)), sizeof(int), info, node, &base, &win));
    else
#endif
        CHECK_MPI(MPI_Win_allocate_shared((MPI_Aint)(mine * sizeof(int)), sizeof(int), info, node, &base, &win));
    if (info != MPI_INFO_NULL) CHECK_MPI(MPI_Info_free(&info));

    int flag, *fl;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    CHECK_EQ(*fl, MPI_WIN_FLAVOR_SHARED);
    void *b;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(b == base, "MPI_WIN_BASE is the allocated base");

    /* each rank fills its own part */
    for (int i = 0; i < mine; i++) base[i] = 1000 * rank + i;
    fence(node);

    /* and reads every other part through the pointers shared_query gives */
    for (int r = 0; r < size; r++) {
        MPI_Aint sz = -1;
        int *p = NULL;
        int du = -1;
#if MPI_VERSION >= 4
        if (large_count) {
            MPI_Aint dua = -1;
            CHECK_MPI(MPI_Win_shared_query_c(win, r, &sz, &dua, &p));
            du = (int)dua;
        } else
#endif
            CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &du, &p));
        int n = r % 3 == 2 ? 0 : 3 + r;
        CHECK_EQ(sz, n * (MPI_Aint)sizeof(int));
        CHECK_EQ(du, sizeof(int));
        if (r == rank) CHECK(p == base, "shared_query of my own rank gives my base");
        for (int i = 0; i < n; i++) CHECK_EQ(p[i], 1000 * r + i);
    }
    /* contiguous by default: a part starts where the previous non-empty
     * one ends (where an empty part lies is not specified) */
    if (!noncontig) {
        char *expect = NULL;
        for (int r = 0; r < size; r++) {
            MPI_Aint sz;
            int du;
            char *p;
            CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &du, &p));
            if (sz == 0) continue;
            if (expect) CHECK(p == expect, "rank %d's part begins right after the previous part", r);
            expect = p + sz;
        }
    }
    fence(node);

    /* writes through another rank's pointer reach that rank: each rank
     * writes into the next one's part */
    int next = (rank + 1) % size;
    MPI_Aint nsz;
    int ndu, *np;
    CHECK_MPI(MPI_Win_shared_query(win, next, &nsz, &ndu, &np));
    if (nsz > 0) np[0] = -1 - rank;
    fence(node);
    int prev = (rank + size - 1) % size;
    if (mine > 0) CHECK_EQ(base[0], -1 - prev);

    /* MPI_PROC_NULL: the lowest rank with memory (rank 0 has some) */
    MPI_Aint sz;
    int du, *p;
    CHECK_MPI(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p));
    CHECK_EQ(sz, 3 * (MPI_Aint)sizeof(int));
    MPI_Aint sz0;
    int *p0;
    CHECK_MPI(MPI_Win_shared_query(win, 0, &sz0, &du, &p0));
    CHECK(p == p0, "MPI_PROC_NULL gives rank 0's part");

    MPI_Info used;
    CHECK_MPI(MPI_Win_get_info(win, &used));
    char v[MPI_MAX_INFO_VAL + 1];
    CHECK_MPI(MPI_Info_get(used, "alloc_shared_noncontig", MPI_MAX_INFO_VAL, v, &flag));
    if (flag && noncontig) CHECK(!strcmp(v, "true"), "alloc_shared_noncontig = %.64s", v);
    CHECK_MPI(MPI_Info_free(&used));
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int before = shm_files();
    MPI_Comm node;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    exercise(node, 0, 0);
    exercise(node, 1, 0);
    exercise(node, 0, 1);
    /* a window over one process */
    exercise(MPI_COMM_SELF, 0, 0);
    mt_pass("MPI_Win_allocate_shared and MPI_Win_shared_query");

    /* windows of the other flavors may be queried (MPI-4.1) unless dynamic;
     * a process's part that cannot be shared reads as empty */
    MPI_Win win;
    char *base;
    CHECK_MPI(MPI_Win_allocate(64, 1, MPI_INFO_NULL, node, &base, &win));
    MPI_Aint sz;
    int du;
    char *p;
    int ver, sub;
    CHECK_MPI(MPI_Get_version(&ver, &sub));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int rc = MPI_Win_shared_query(win, 0, &sz, &du, &p);
    if (ver * 10 + sub < 41) { /* before MPI-4.1, only shared windows could be queried */
        if (rc != MPI_SUCCESS) CHECK_ERRCLASS(rc, MPI_ERR_RMA_FLAVOR);
        sz = 0;
        p = NULL;
    } else CHECK_MPI(rc);
    if (sz > 0) CHECK(p != NULL, "a non-empty shared part has an address");
    else CHECK(p == NULL, "an empty part has no address");
    /* where a part is shared, a store through its address reaches its owner */
    int me = mt_rank(node), nn = mt_size(node), next = (me + 1) % nn;
    CHECK_MPI(MPI_Win_fence(0, win));
    rc = ver * 10 + sub < 41 ? MPI_ERR_RMA_FLAVOR : MPI_Win_shared_query(win, next, &sz, &du, &p);
    if (rc == MPI_SUCCESS && sz >= 1) p[0] = (char)(10 + me);
    CHECK_MPI(MPI_Win_fence(0, win));
    if (rc == MPI_SUCCESS && sz >= 1) CHECK_EQ(base[0], 10 + (me + nn - 1) % nn);
    CHECK_MPI(MPI_Win_free(&win));

    /* many windows created and freed leave nothing mapped or named */
    for (int i = 0; i < 50; i++) {
        int *b;
        CHECK_MPI(MPI_Win_allocate_shared(1 << 16, 1, MPI_INFO_NULL, node, &b, &win));
        b[0] = i;
        CHECK_MPI(MPI_Win_free(&win));
    }
    CHECK_MPI(MPI_Comm_free(&node));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_EQ(shm_files(), before);
    mt_pass("no shared-memory file left behind");
    CHECK_MPI(MPI_Finalize());
    return 0;
}
