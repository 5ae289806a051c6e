/* LMTEST-LEANMPI-ONLY: reads LeanMPI's own performance variables.
 *
 * The lock's cost in remote atomics is a documented number: an uncontended
 * shared lock plus unlock is two fetch-and-adds on the target's lock word,
 * an exclusive one two compare-and-swaps (free word to active and back:
 * nobody queues), MPI_MODE_NOCHECK none. Each rank
 * in turn locks rank 0 while the others wait in a barrier, so nothing
 * contends, and the onesided_* counters of MPI_T must move by exactly
 * those amounts; lock_all by one compare-and-swap on the node word plus one
 * fetch-and-add per rank each way. */
#include "mpitest.h"

static MPI_T_pvar_session session;

static MPI_T_pvar_handle handle_of(const char *name)
{
    int idx, count;
    MPI_T_pvar_handle h;
    CHECK_EQ(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_handle_alloc(session, idx, NULL, &h, &count), MPI_SUCCESS);
    CHECK_EQ(count, 1);
    return h;
}

static unsigned long long value(MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    CHECK_EQ(MPI_T_pvar_read(session, h, &v), MPI_SUCCESS);
    return v;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK_MPI(MPI_T_pvar_session_create(&session));
    MPI_T_pvar_handle atomics = handle_of("onesided_atomics");
    MPI_T_pvar_handle taken = handle_of("onesided_lock_acquisitions");
    MPI_T_pvar_handle waits = handle_of("onesided_lock_waits");
    int me = mt_rank(MPI_COMM_WORLD), n = mt_size(MPI_COMM_WORLD);
    int *base;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    static const struct {
        int type, assert;
        unsigned long long atomics, acquisitions;
    } cases[] = {
        {MPI_LOCK_SHARED, 0, 2, 1},
        {MPI_LOCK_EXCLUSIVE, 0, 2, 1},
        {MPI_LOCK_SHARED, MPI_MODE_NOCHECK, 0, 0},
        {MPI_LOCK_EXCLUSIVE, MPI_MODE_NOCHECK, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int turn = 0; turn < n; turn++) {
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
            if (turn != me) continue;
            unsigned long long a0 = value(atomics), t0 = value(taken), w0 = value(waits);
            CHECK_MPI(MPI_Win_lock(cases[c].type, 0, cases[c].assert, win));
            CHECK_MPI(MPI_Win_unlock(0, win));
            CHECK_EQ(value(atomics) - a0, cases[c].atomics);
            CHECK_EQ(value(taken) - t0, cases[c].acquisitions);
            CHECK_EQ(value(waits) - w0, 0);
        }
    mt_pass("uncontended lock and unlock cost the documented atomics");

    /* lock_all alone: the node word once each way, a shared lock per rank */
    for (int turn = 0; turn < n; turn++) {
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (turn != me) continue;
        unsigned long long a0 = value(atomics), t0 = value(taken);
        CHECK_MPI(MPI_Win_lock_all(0, win));
        CHECK_MPI(MPI_Win_unlock_all(win));
        CHECK_EQ(value(atomics) - a0, 2 + 2 * (unsigned long long)n);
        CHECK_EQ(value(taken) - t0, (unsigned long long)n);
    }
    mt_pass("uncontended lock_all takes every rank's lock once");

    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_T_pvar_handle_free(session, &atomics));
    CHECK_MPI(MPI_T_pvar_handle_free(session, &taken));
    CHECK_MPI(MPI_T_pvar_handle_free(session, &waits));
    CHECK_MPI(MPI_T_pvar_session_free(&session));
    CHECK_MPI(MPI_T_finalize());
    MPI_Finalize();
    return 0;
}
