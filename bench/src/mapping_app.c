/* Programs for the placement study (bench/leanmpi_mapping.py): each runs
 * one communication pattern on the ranks of MPI_COMM_WORLD reordered by
 * keys (MPI_Comm_split(MPI_COMM_WORLD, 0, key[world rank])), so that one
 * launch in block order can try any placement of the program's ranks.
 *
 *   mapping_app -p PATTERN [-b BYTES] [-i ITERS] [-k "k0 k1 ..."]
 *
 * PATTERN (BYTES: one block, or the whole message for bcast, reduce and
 * allreduce; default 262144):
 *   allreduce, alltoall, bcast, reduce   IMB-style: the collective on all
 *                                        ranks, back to back
 *   transpose   FT-style: the ranks form a grid of 2 columns (rank r is in
 *               column r % 2); an MPI_Alltoall of BYTES blocks within each
 *               column, then an MPI_Allreduce of 8 doubles on all ranks
 *
 * Prints (rank 0) "pattern=P ranks=N bytes=B iters=I time_us=T": the time
 * of one iteration, the slowest rank's average over the timed loop (after
 * 2 warm-up iterations). Standard MPI only: built with every MPI. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is(const char *a, const char *b) { return strcmp(a, b) == 0; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wrank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *pattern = "alltoall", *keys = NULL;
    long bytes = 262144, iters = 20;
    for (int i = 1; i + 1 < argc; i++) {
        if (is(argv[i], "-p")) pattern = argv[++i];
        else if (is(argv[i], "-b")) bytes = strtol(argv[++i], NULL, 10);
        else if (is(argv[i], "-i")) iters = strtol(argv[++i], NULL, 10);
        else if (is(argv[i], "-k")) keys = argv[++i];
    }
    int key = wrank;
    if (keys) {
        char *end = (char *)keys;
        for (int r = 0; r <= wrank; r++) {
            long k = strtol(end, &end, 10);
            if (r == wrank) key = (int)k;
        }
    }
    MPI_Comm comm, column;
    MPI_Comm_split(MPI_COMM_WORLD, 0, key, &comm);
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_split(comm, rank % 2, rank, &column);
    int csize;
    MPI_Comm_size(column, &csize);

    size_t blocks = is(pattern, "alltoall") ? (size_t)n : is(pattern, "transpose") ? (size_t)csize : 1;
    char *a = malloc((size_t)bytes * blocks), *b = malloc((size_t)bytes * blocks);
    if (!a || !b) MPI_Abort(MPI_COMM_WORLD, 1);
    memset(a, rank, (size_t)bytes * blocks);
    int count = (int)(bytes / (long)sizeof(double));
    double small[8] = {0}, small_out[8];
    double t = 0;
    for (long it = -2; it < iters; it++) {
        if (it == 0) {
            MPI_Barrier(comm);
            t = MPI_Wtime();
        }
        if (is(pattern, "allreduce")) MPI_Allreduce(a, b, count, MPI_DOUBLE, MPI_SUM, comm);
        else if (is(pattern, "alltoall")) MPI_Alltoall(a, (int)bytes, MPI_CHAR, b, (int)bytes, MPI_CHAR, comm);
        else if (is(pattern, "bcast")) MPI_Bcast(a, (int)bytes, MPI_CHAR, 0, comm);
        else if (is(pattern, "reduce")) MPI_Reduce(a, b, count, MPI_DOUBLE, MPI_SUM, 0, comm);
        else if (is(pattern, "transpose")) {
            MPI_Alltoall(a, (int)bytes, MPI_CHAR, b, (int)bytes, MPI_CHAR, column);
            MPI_Allreduce(small, small_out, 8, MPI_DOUBLE, MPI_SUM, comm);
        } else {
            if (rank == 0) fprintf(stderr, "mapping_app: unknown pattern %s\n", pattern);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    double mine = (MPI_Wtime() - t) / (double)(iters > 0 ? iters : 1), slowest;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (rank == 0)
        printf("pattern=%s ranks=%d bytes=%ld iters=%ld time_us=%.1f\n", pattern, n, bytes, iters, slowest * 1e6);
    free(a);
    free(b);
    MPI_Comm_free(&column);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
