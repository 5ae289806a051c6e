/* LMTEST-LEANMPI-ONLY: every process alternates at random between
 * MPI_Win_lock_all epochs that read a pair of words and exclusive locks
 * that update the pair with two separately flushed puts. Several
 * processes in lock_all at once while others wait for exclusive locks is
 * where a lock_all taken target by target can wait in a circle (MPICH 4.0
 * hangs here now and then); LeanMPI's lock_all is taken once per node.
 * Readers must never see the pair torn, and the counters must add up to
 * the exclusive epochs. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = mt_rank(MPI_COMM_WORLD), n = mt_size(MPI_COMM_WORLD);
    long long *base;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(2 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    base[0] = base[1] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    unsigned seed = 12345u + 977u * (unsigned)me;
    long long exclusive = 0;
    for (int r = 0; r < 600; r++) {
        seed = seed * 1103515245u + 12345u;
        int t = (int)((seed >> 8) % (unsigned)n);
        if ((seed >> 20) & 1) {
            long long v[2];
            CHECK_MPI(MPI_Win_lock_all(0, win));
            CHECK_MPI(MPI_Get(v, 2, MPI_LONG_LONG, t, 0, 2, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Win_flush(t, win));
            CHECK(v[0] == v[1], "round %d: rank %d's pair torn under lock_all: %lld %lld", r, t, v[0], v[1]);
            CHECK_MPI(MPI_Win_unlock_all(win));
        } else {
            long long v = -1;
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            CHECK_MPI(MPI_Get(&v, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Win_flush(t, win));
            v++;
            CHECK_MPI(MPI_Put(&v, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Win_flush(t, win));
            CHECK_MPI(MPI_Put(&v, 1, MPI_LONG_LONG, t, 1, 1, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Win_unlock(t, win));
            exclusive++;
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    long long epochs = 0, counted = 0;
    CHECK_MPI(MPI_Allreduce(&exclusive, &epochs, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Allreduce(&base[0], &counted, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK_EQ(counted, epochs);
    CHECK_MPI(MPI_Win_free(&win));
    mt_pass("lock_all epochs and exclusive locks mixed from every process");
    MPI_Finalize();
    return 0;
}
