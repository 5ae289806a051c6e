/* Blocking collectives called back to back, many times: a root that only
 * sends (bcast) or ranks that only send (reduce) run far ahead, so the
 * receivers' unexpected queues fill and senders run out of transport
 * resources; every call's data is checked. The same with nonblocking and
 * persistent collectives in flight on the same communicator, started
 * before and completed after the blocking ones, with message sizes from a
 * few bytes to rendezvous and with a datatype that has gaps (staged). */
#include "mpitest.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FLOOD 20000

static int64_t value(int64_t i, int root, int k) { return i * 7919 + root * 131 + k; }

/* Many tiny bcasts from each of two roots, then reductions into them. */
static void flood_small(MPI_Comm comm)
{
    int me = mt_rank(comm), n = mt_size(comm);
    int roots[2] = {0, n - 1};
    for (int r = 0; r < 2; r++) {
        int root = roots[r];
        for (int64_t i = 0; i < FLOOD; i++) {
            int64_t v = me == root ? value(i, root, 0) : -1;
            CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT64_T, root, comm));
            CHECK(v == value(i, root, 0), "bcast %lld from %d: got %lld", (long long)i, root, (long long)v);
        }
        for (int64_t i = 0; i < FLOOD; i++) {
            int64_t in[2] = {value(i, me, 1), me}, out[2] = {-1, -1};
            CHECK_MPI(MPI_Reduce(in, out, 2, MPI_INT64_T, MPI_SUM, root, comm));
            if (me == root) {
                int64_t want = 0;
                for (int q = 0; q < n; q++) want += value(i, q, 1);
                CHECK(out[0] == want && out[1] == (int64_t)n * (n - 1) / 2, "reduce %lld to %d: %lld %lld",
                      (long long)i, root, (long long)out[0], (long long)out[1]);
            }
        }
    }
    for (int64_t i = 0; i < FLOOD / 4; i++) {
        int64_t in = value(i, me, 2), out = -1;
        CHECK_MPI(MPI_Allreduce(&in, &out, 1, MPI_INT64_T, MPI_MAX, comm));
        CHECK(out == value(i, n - 1, 2), "allreduce %lld: %lld", (long long)i, (long long)out);
    }
    mt_pass("back-to-back small bcast, reduce, allreduce");
}

/* Bcasts past the size kept inside an unexpected record, and past eager. */
static void flood_sizes(MPI_Comm comm)
{
    int me = mt_rank(comm);
    const size_t sizes[] = {63, 65, 1000, 16384, 65536};
    const int reps[] = {2000, 2000, 2000, 300, 100};
    char *buf = malloc(65536);
    CHECK(buf != NULL, "malloc");
    for (int s = 0; s < 5; s++) {
        for (int i = 0; i < reps[s]; i++) {
            for (size_t b = 0; b < sizes[s]; b++) buf[b] = me == 0 ? (char)(b * 3 + (size_t)i + (size_t)s) : 0;
            CHECK_MPI(MPI_Bcast(buf, (int)sizes[s], MPI_CHAR, 0, comm));
            for (size_t b = 0; b < sizes[s]; b++)
                CHECK(buf[b] == (char)(b * 3 + (size_t)i + (size_t)s), "bcast of %zu bytes, call %d: byte %zu",
                      sizes[s], i, b);
        }
    }
    free(buf);
    mt_pass("back-to-back bcast of 63 B to 64 KiB");
}

/* Blocking collectives while nonblocking and persistent ones started
 * earlier on the same communicator are still pending. */
static void mixed_with_pending(MPI_Comm comm)
{
    int me = mt_rank(comm), n = mt_size(comm);
    enum { NB = 64, BIG = 20000 };
    int64_t ib[NB], ired_in[NB], ired_out[NB], pers[4];
    int *big = malloc(BIG * sizeof *big);
    CHECK(big != NULL, "malloc");
    for (int k = 0; k < NB; k++) {
        ib[k] = me == 0 ? value(k, 0, 3) : -1;
        ired_in[k] = value(k, me, 4);
        ired_out[k] = -1;
    }
    for (int k = 0; k < BIG; k++) big[k] = me == n - 1 ? k ^ 0x5a5a : -1;
    for (int k = 0; k < 4; k++) pers[k] = me == 0 ? value(k, 0, 5) : -1;
    MPI_Request req[5];
    MPI_Status st[5];
    CHECK_MPI(MPI_Bcast_init(pers, 4, MPI_INT64_T, 0, comm, MPI_INFO_NULL, &req[4]));
    CHECK_MPI(MPI_Start(&req[4]));
    CHECK_MPI(MPI_Ibcast(ib, NB, MPI_INT64_T, 0, comm, &req[0]));
    CHECK_MPI(MPI_Iallreduce(ired_in, ired_out, NB, MPI_INT64_T, MPI_SUM, comm, &req[1]));
    CHECK_MPI(MPI_Ibarrier(comm, &req[2]));
    CHECK_MPI(MPI_Ibcast(big, BIG, MPI_INT, n - 1, comm, &req[3]));
    for (int64_t i = 0; i < 2000; i++) {
        int64_t v = me == 1 % n ? value(i, 1, 6) : -1;
        CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT64_T, 1 % n, comm));
        CHECK(v == value(i, 1, 6), "bcast %lld among pending ones: %lld", (long long)i, (long long)v);
        int64_t in = me + i, out = -1;
        CHECK_MPI(MPI_Reduce(&in, &out, 1, MPI_INT64_T, MPI_SUM, 0, comm));
        if (me == 0)
            CHECK(out == (int64_t)n * (n - 1) / 2 + n * i, "reduce %lld among pending ones: %lld", (long long)i,
                  (long long)out);
        if (i % 500 == 0) CHECK_MPI(MPI_Barrier(comm));
    }
    CHECK_MPI(MPI_Waitall(5, req, st));
    for (int k = 0; k < NB; k++) {
        int64_t want = 0;
        for (int q = 0; q < n; q++) want += value(k, q, 4);
        CHECK(ib[k] == value(k, 0, 3), "ibcast element %d: %lld", k, (long long)ib[k]);
        CHECK(ired_out[k] == want, "iallreduce element %d: %lld", k, (long long)ired_out[k]);
    }
    for (int k = 0; k < BIG; k++) CHECK(big[k] == (k ^ 0x5a5a), "large ibcast element %d: %d", k, big[k]);
    for (int k = 0; k < 4; k++)
        CHECK(pers[k] == value(k, 0, 5), "persistent bcast element %d: %lld", k, (long long)pers[k]);
    CHECK_MPI(MPI_Request_free(&req[4]));
    free(big);
    mt_pass("blocking collectives with nonblocking and persistent ones pending");
}

/* A datatype with gaps (staged) back to back: every other int of 6. */
static void flood_strided(MPI_Comm comm)
{
    int me = mt_rank(comm), n = mt_size(comm);
    MPI_Datatype every_other;
    CHECK_MPI(MPI_Type_vector(3, 1, 2, MPI_INT, &every_other));
    CHECK_MPI(MPI_Type_commit(&every_other));
    for (int i = 0; i < 3000; i++) {
        int root = i % n, b[6];
        for (int k = 0; k < 6; k++) b[k] = me == root ? i * 10 + k : -7;
        CHECK_MPI(MPI_Bcast(b, 1, every_other, root, comm));
        for (int k = 0; k < 6; k++) {
            int want = k % 2 == 0 || me == root ? i * 10 + k : -7;
            CHECK(b[k] == want, "strided bcast %d from %d: [%d] = %d", i, root, k, b[k]);
        }
    }
    CHECK_MPI(MPI_Type_free(&every_other));
    mt_pass("back-to-back bcast of a strided type");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    flood_small(MPI_COMM_WORLD);
    flood_sizes(dup);
    mixed_with_pending(MPI_COMM_WORLD);
    flood_strided(dup);
    CHECK_MPI(MPI_Comm_free(&dup));
    MPI_Finalize();
    return 0;
}
