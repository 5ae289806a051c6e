/* A job started by another launcher (tests/foreign/test_foreign.py):
 *   boot_job BOOT N [abort|wait] [--id=TOKEN]
 * checks that MPI_Init took the bootstrap BOOT (pmix, pmi2, pmi1) with N
 * ranks, that the ranks are one job (distinct ranks, allreduce), that the
 * ranks of a node share memory (a shared window written by every rank and
 * read by the others) and can exchange small and large messages around a
 * ring; prints "OK <boot> <N> <ranks on rank 0's node>" on rank 0.
 * With "abort", rank N-1 calls MPI_Abort(MPI_COMM_WORLD, 7) while the
 * others wait for a message that never comes: the launcher must end them.
 * With "wait", rank 0 prints READY once all ranks are in MPI_Init's job and
 * every rank waits (sleeping) until it is killed, 2 minutes at most.
 * --id=TOKEN is ignored: the test finds its job's processes by it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *lm_boot_name(void); /* the library's own, for this test */

#define CHECK(c, ...)                                     \
    do {                                                  \
        if (!(c)) {                                       \
            fprintf(stderr, "boot_job: rank %d: ", rank); \
            fprintf(stderr, __VA_ARGS__);                 \
            fprintf(stderr, "\n");                        \
            MPI_Abort(MPI_COMM_WORLD, 3);                 \
        }                                                 \
    } while (0)

int main(int argc, char **argv)
{
    int rank = -1, size, want;
    if (argc < 3) return fprintf(stderr, "usage: boot_job BOOT N [abort|wait]\n"), 2;
    want = atoi(argv[2]);
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "boot_job: MPI_Init failed\n");
        return 3;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(!strcmp(lm_boot_name(), argv[1]), "bootstrap %s, expected %s", lm_boot_name(), argv[1]);
    CHECK(size == want, "size %d, expected %d", size, want);

    if (argc > 3 && !strcmp(argv[3], "abort")) { /* before any --id= */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == size - 1) MPI_Abort(MPI_COMM_WORLD, 7);
        int x;
        MPI_Recv(&x, 1, MPI_INT, size - 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(0, "received a message nobody sent");
    }

    if (argc > 3 && !strcmp(argv[3], "wait")) {
        /* a job that runs until something outside ends it (scancel, a
         * launcher killed): rank 0 says READY once every rank is in, then
         * all wait, sleeping, for a message that never comes */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) printf("READY\n"), fflush(stdout);
        int x, done = 0;
        MPI_Request r;
        MPI_Irecv(&x, 1, MPI_INT, 0, 98, MPI_COMM_WORLD, &r);
        for (int i = 0; i < 1200 && !done; i++) { /* 2 minutes at most */
            MPI_Test(&r, &done, MPI_STATUS_IGNORE);
            usleep(100000);
        }
        CHECK(0, "still running 2 minutes after READY");
    }

    /* one job: every rank once */
    int *all = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) CHECK(all[i] == i, "rank %d reported %d", i, all[i]);
    long sum = 0, expect = (long)size * (size - 1) / 2, mine = rank;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == expect, "allreduce %ld, expected %ld", sum, expect);
    int *univ, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &univ, &flag);
    CHECK(flag && *univ >= size, "universe size %d (flag %d) below the job's %d", flag ? *univ : -1, flag, size);

    /* the node's ranks share memory */
    MPI_Comm node;
    int lrank, lsize;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_size(node, &lsize);
    int *mem;
    MPI_Win win;
    MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mem, &win);
    MPI_Win_lock_all(0, win);
    *mem = 1000 + rank;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    for (int i = 0; i < lsize; i++) {
        MPI_Aint sz;
        int du, *peer, peer_world;
        MPI_Win_shared_query(win, i, &sz, &du, &peer);
        MPI_Group g, wg;
        MPI_Comm_group(node, &g);
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_translate_ranks(g, 1, &i, wg, &peer_world);
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
        CHECK(*peer == 1000 + peer_world, "node rank %d's memory holds %d, expected %d", i, *peer, 1000 + peer_world);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);

    /* a ring of small and large messages */
    size_t big = 1 << 20;
    char *out = malloc(big), *in = malloc(big);
    for (size_t i = 0; i < big; i++) out[i] = (char)(rank * 7 + i);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int token = rank, got = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == left, "token %d from %d", got, left);
    MPI_Sendrecv(out, (int)big, MPI_CHAR, right, 2, in, (int)big, MPI_CHAR, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (size_t i = 0; i < big; i++) CHECK(in[i] == (char)(left * 7 + i), "byte %zu from %d wrong", i, left);

    int node0 = lsize;
    MPI_Bcast(&node0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("OK %s %d %d\n", lm_boot_name(), size, node0);
    free(out);
    free(in);
    free(all);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
