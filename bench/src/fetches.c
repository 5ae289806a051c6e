/* Keys each rank fetched from the launcher or its server during MPI_Init:
 * the MPI_T counter boot_key_fetches, where the MPI has it (LeanMPI). Rank 0
 * prints the most any rank fetched:
 *   "key_fetches_max=<n> ranks=<N>"   (n = -1: the MPI has no such counter)
 * bench/leanmpi_launchers.py runs it under each launcher. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static long pvar(const char *want)
{
    int n = 0, idx = -1, provided;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return -1;
    MPI_T_pvar_get_num(&n);
    for (int i = 0; i < n && idx < 0; i++) {
        char name[256], desc[1024];
        int nl = sizeof name, dl = sizeof desc, verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum et;
        if (MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &et, desc, &dl, &bind, &ro, &cont, &atomic) ==
                MPI_SUCCESS &&
            !strcmp(name, want) && dt == MPI_UNSIGNED_LONG_LONG)
            idx = i;
    }
    unsigned long long v = 0;
    long out = -1;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    if (idx >= 0 && MPI_T_pvar_session_create(&s) == MPI_SUCCESS) {
        if (MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count) == MPI_SUCCESS) {
            if (MPI_T_pvar_read(s, h, &v) == MPI_SUCCESS) out = (long)v;
            MPI_T_pvar_handle_free(s, &h);
        }
        MPI_T_pvar_session_free(&s);
    }
    MPI_T_finalize();
    return out;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    long mine = pvar("boot_key_fetches"), most = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Reduce(&mine, &most, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("key_fetches_max=%ld ranks=%d\n", most, size);
    MPI_Finalize();
    return 0;
}
