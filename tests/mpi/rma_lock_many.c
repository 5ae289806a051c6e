/* Many passive-target locks held at once by one process.
 *
 * Part 1 (3 or more processes): rank 0 holds an exclusive lock on every
 * other rank at once (on 15 of them at most). Rank 1 holds rank 2's lock first and writes a value
 * under it before letting go, so that rank 0, already holding rank 1's
 * lock, queues for rank 2's; it must then read rank 1's value. Locks are
 * released out of the order they were taken (the queued one first), and
 * the rounds repeat so that the queued lock's slot is reused.
 *
 * Part 2 (17 or more processes): the limit of exclusive locks one process
 * holds on one window at once (15): the 16th exclusive lock is refused
 * with MPI_ERR_RMA_SYNC, while shared locks and MPI_MODE_NOCHECK locks do
 * not count against it; once one exclusive lock is released another may
 * be taken. Below 17 processes this part reports itself skipped. */
#include "mpitest.h"
#include <unistd.h>

#define ROUNDS 4
#define LIMIT 15 /* exclusive locks at once, documented in docs/ARCHITECTURE.md */

static void many_exclusive(MPI_Win win, int rank, int size, long long *mine)
{
    int end = size < LIMIT + 1 ? size : LIMIT + 1; /* rank 0 locks 1 .. end-1 */
    for (int round = 0; round < ROUNDS; round++) {
        long long want = 1000 + round;
        if (rank == 1) CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 2, 0, win));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            usleep(20000); /* rank 0 is queued behind this lock by now, most likely */
            CHECK_MPI(MPI_Put(&want, 1, MPI_LONG_LONG, 2, 0, 1, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Win_unlock(2, win));
        }
        if (rank == 0) {
            long long got = -1;
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 2, 0, win));
            for (int t = 3; t < end; t++) CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            CHECK_MPI(MPI_Get(&got, 1, MPI_LONG_LONG, 2, 0, 1, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Win_unlock(2, win));
            CHECK(got == want, "round %d: read %lld under rank 2's lock, rank 1 wrote %lld before releasing it", round,
                  got, want);
            for (int t = end - 1; t >= 3; t--) {
                long long v = t;
                CHECK_MPI(MPI_Put(&v, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win));
                CHECK_MPI(MPI_Win_unlock(t, win));
            }
            CHECK_MPI(MPI_Win_unlock(1, win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
        long long v = *mine;
        CHECK_MPI(MPI_Win_unlock(rank, win));
        if (rank >= 3 && rank < end)
            CHECK(v == rank, "round %d: rank %d holds %lld, rank 0 put %d", round, rank, v, rank);
        if (rank == 2) CHECK(v == want, "round %d: rank 2 holds %lld, want %lld", round, v, want);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void exclusive_limit(MPI_Win win, int rank)
{
    if (rank == 0) {
        for (int t = 1; t <= LIMIT; t++) CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        CHECK_ERRCLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, LIMIT + 1, 0, win), MPI_ERR_RMA_SYNC);
        /* shared and unchecked locks do not count */
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, LIMIT + 1, 0, win));
        CHECK_MPI(MPI_Win_unlock(LIMIT + 1, win));
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, LIMIT + 1, MPI_MODE_NOCHECK, win));
        CHECK_MPI(MPI_Win_unlock(LIMIT + 1, win));
        /* a released one makes room */
        CHECK_MPI(MPI_Win_unlock(7, win));
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, LIMIT + 1, 0, win));
        CHECK_ERRCLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 7, 0, win), MPI_ERR_RMA_SYNC);
        for (int t = 1; t <= LIMIT + 1; t++)
            if (t != 7) CHECK_MPI(MPI_Win_unlock(t, win));
        /* and all of them are free again: every rank can take them */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, (rank + 1) % (LIMIT + 2), 0, win));
    CHECK_MPI(MPI_Win_unlock((rank + 1) % (LIMIT + 2), win));
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);
    long long *mine = NULL;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win));
    *mine = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (size >= 3) {
        many_exclusive(win, rank, size, mine);
        mt_pass("one process holding exclusive locks on many ranks, one of them queued for");
    }
    if (!mt_skip_unless(LIMIT + 2, "the limit of exclusive locks held at once")) {
        CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        exclusive_limit(win, rank);
        mt_pass("the limit of exclusive locks held at once");
    }
    CHECK_MPI(MPI_Win_free(&win));
    MPI_Finalize();
    return 0;
}
