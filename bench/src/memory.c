/* Memory of each rank right after MPI_Init, and again after a first message
 * between every rank and rank 0 (so that lazily created per-peer state shows).
 *
 * Each rank reads its own VmRSS (/proc/self/status) and Pss
 * (/proc/self/smaps_rollup, or the sum over /proc/self/smaps on kernels
 * without it) before any communication; rank 0 gathers the numbers and prints
 * one line per rank and phase:
 *   "phase=init rank=<r> rss_kb=<kB> pss_kb=<kB>" */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long read_field_kb(const char *path, const char *key, int sum_all)
{
    FILE *f = fopen(path, "r");
    char line[512];
    size_t klen = strlen(key);
    long total = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            long v = strtol(line + klen + 1, NULL, 10);
            total = total < 0 ? v : total + v;
            if (!sum_all) break;
        }
    }
    fclose(f);
    return total;
}

static void sample(long out[2])
{
    out[0] = read_field_kb("/proc/self/status", "VmRSS", 0);
    out[1] = read_field_kb("/proc/self/smaps_rollup", "Pss", 0);
    if (out[1] < 0) out[1] = read_field_kb("/proc/self/smaps", "Pss", 1);
}

static void report(const char *phase, long mine[2], int rank, int nranks)
{
    long *all = rank == 0 ? malloc(sizeof(long) * 2 * (size_t)nranks) : NULL;
    MPI_Gather(mine, 2, MPI_LONG, all, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < nranks; r++)
            printf("phase=%s rank=%d rss_kb=%ld pss_kb=%ld\n", phase, r, all[2 * r], all[2 * r + 1]);
        fflush(stdout);
        free(all);
    }
}

int main(int argc, char **argv)
{
    long at_init[2], after_p2p[2];
    int rank, nranks;
    char byte = 0;

    MPI_Init(&argc, &argv);
    sample(at_init);

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0) {
        for (int r = 1; r < nranks; r++) {
            MPI_Send(&byte, 1, MPI_CHAR, r, 0, MPI_COMM_WORLD);
            MPI_Recv(&byte, 1, MPI_CHAR, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Recv(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
    sample(after_p2p);

    report("init", at_init, rank, nranks);
    report("p2p", after_p2p, rank, nranks);
    MPI_Finalize();
    return 0;
}
