/* Streaming bandwidth from rank 0 to rank 1.
 *
 * Each iteration rank 0 posts a window of nonblocking sends, rank 1 a window
 * of matching receives; after both complete rank 1 sends a 4-byte ack.  The
 * window is 64 messages, reduced for large sizes so that one window stays
 * within 64 MiB; every message of a window has its own buffer slot, so no
 * two pending receives overlap.
 *
 * With -b the test is bidirectional: both ranks send a window to each other
 * at the same time and the reported rate counts the bytes of both directions.
 *
 * Output per size: "size=<bytes> iters=<n> window=<w> mb_s=<10^6 bytes/s>". */
#include "bench_common.h"

#define WINDOW_MAX 64
#define WINDOW_BYTES (64u << 20)

/* One window: `win` messages of `sz` bytes, then the ack (or, bidirectional,
 * a window each way).  Ranks above 1 take no part. */
static void window(char *sbuf, char *rbuf, size_t sz, int win, int rank, int bidir)
{
    MPI_Request req[2 * WINDOW_MAX];
    int ack = 0, nr = 0, peer = rank == 0 ? 1 : 0;

    if (rank > 1) return;
    if (bidir) {
        for (int w = 0; w < win; w++)
            MPI_Irecv(rbuf + (size_t)w * sz, (int)sz, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[nr++]);
        for (int w = 0; w < win; w++)
            MPI_Isend(sbuf + (size_t)w * sz, (int)sz, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[nr++]);
        MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
    } else if (rank == 0) {
        for (int w = 0; w < win; w++)
            MPI_Isend(sbuf + (size_t)w * sz, (int)sz, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &req[nr++]);
        MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        for (int w = 0; w < win; w++)
            MPI_Irecv(rbuf + (size_t)w * sz, (int)sz, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &req[nr++]);
        MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    size_t sizes[BENCH_MAX_SIZES];
    int rank, nranks, bidir = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_require_two(nranks, rank);
    bench_parse_args(argc, argv, &o);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-b") == 0) bidir = 1;
    bench_print_library(rank);

    int nsizes = bench_sizes(&o, sizes);
    size_t span = 0;
    for (int k = 0; k < nsizes; k++) {
        size_t w = WINDOW_BYTES / sizes[k];
        w = w > WINDOW_MAX ? WINDOW_MAX : (w < 1 ? 1 : w);
        if (w * sizes[k] > span) span = w * sizes[k];
    }
    char *sbuf = bench_alloc(span);
    char *rbuf = bench_alloc(span);

    if (rank == 0) printf("# bench=%s ranks=%d\n", bidir ? "bibw" : "bw", nranks);

    /* First contact (connection set-up, lazy allocation) is not part of
     * the warm-up the iteration count is calibrated on. */
    window(sbuf, rbuf, 1, 1, rank, bidir);
    window(sbuf, rbuf, sizes[nsizes - 1], 1, rank, bidir);

    for (int k = 0; k < nsizes; k++) {
        size_t sz = sizes[k];
        int win = (int)(WINDOW_BYTES / sz);
        win = win > WINDOW_MAX ? WINDOW_MAX : (win < 1 ? 1 : win);
        long iters = bench_iters(sz * (size_t)win, 512.0 * (1 << 20), 10, 2000, o.quick);
        long warm = iters / 10;
        warm = warm < 2 ? 2 : (warm > 20 ? 20 : warm);

        MPI_Barrier(MPI_COMM_WORLD);
        double tp = MPI_Wtime();
        for (long i = 0; i < 2; i++) window(sbuf, rbuf, sz, win, rank, bidir);
        warm = bench_fit(warm, 2, MPI_Wtime() - tp, o.budget_s / 4, 2, rank);

        double tw = MPI_Wtime();
        for (long i = 0; i < warm; i++) window(sbuf, rbuf, sz, win, rank, bidir);
        iters = bench_fit(iters, warm, MPI_Wtime() - tw, o.budget_s, 5, rank);

        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) window(sbuf, rbuf, sz, win, rank, bidir);
        double t = MPI_Wtime() - t0;
        if (rank == 0) {
            double bytes = (double)sz * win * iters * (bidir ? 2.0 : 1.0);
            printf("size=%zu iters=%ld window=%d mb_s=%.2f\n", sz, iters, win, bytes / t / 1e6);
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
