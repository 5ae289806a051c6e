/* Ping-pong latency between ranks 0 and 1: half of the round-trip time.
 * Output per size: "size=<bytes> iters=<n> lat_us=<microseconds>". */
#include "bench_common.h"

static void exchange(char *buf, size_t sz, int rank)
{
    if (rank == 0) {
        MPI_Send(buf, (int)sz, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, (int)sz, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(buf, (int)sz, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, (int)sz, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    size_t sizes[BENCH_MAX_SIZES];
    int rank, nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_require_two(nranks, rank);
    bench_parse_args(argc, argv, &o);
    bench_print_library(rank);

    int nsizes = bench_sizes(&o, sizes);
    char *buf = bench_alloc(sizes[nsizes - 1]);
    if (rank == 0) printf("# bench=pingpong ranks=%d\n", nranks);

    /* First contact (connection set-up, lazy allocation) is not part of
     * the warm-up the iteration count is calibrated on. */
    for (int i = 0; i < 10; i++) exchange(buf, 1, rank);
    exchange(buf, sizes[nsizes - 1], rank);

    for (int k = 0; k < nsizes; k++) {
        size_t sz = sizes[k];
        long iters = bench_iters(2 * sz, 256.0 * (1 << 20), 20, 20000, o.quick);
        long warm = iters / 10;
        warm = warm < 10 ? 10 : (warm > 200 ? 200 : warm);

        MPI_Barrier(MPI_COMM_WORLD);
        double tp = MPI_Wtime();
        for (long i = 0; i < 2; i++) exchange(buf, sz, rank);
        warm = bench_fit(warm, 2, MPI_Wtime() - tp, o.budget_s / 4, 2, rank);

        double tw = MPI_Wtime();
        for (long i = 0; i < warm; i++) exchange(buf, sz, rank);
        iters = bench_fit(iters, warm, MPI_Wtime() - tw, o.budget_s, 5, rank);

        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) exchange(buf, sz, rank);
        double t = MPI_Wtime() - t0;
        if (rank == 0) {
            printf("size=%zu iters=%ld lat_us=%.4f\n", sz, iters, t * 1e6 / (2.0 * iters));
            fflush(stdout);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
