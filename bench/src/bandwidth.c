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
 * With -p every rank takes part, in pairs (osu_mbw_mr style): rank i of the
 * lower half with rank i + n/2 of the upper half (an odd last rank idles);
 * the lower rank of each pair plays rank 0, the upper rank 1, all pairs at
 * once, and the rates count every pair over the slowest rank's time.
 *
 * Output per size: "size=<bytes> iters=<n> window=<w> mb_s=<10^6 bytes/s>
 * msgs_s=<messages per second>" (the message rate counts every message of
 * every pair and direction). */
#include "bench_common.h"

#define WINDOW_MAX 64
#define WINDOW_BYTES (64u << 20)

/* Which pair a rank is in and its side: 0 sends (rank 0's part), 1
 * receives and acks; -1: no part. Without -p only ranks 0 and 1 pair. */
static int npairs = 1;
static int side_of(int rank, int *peer)
{
    if (rank < npairs) {
        *peer = rank + npairs;
        return 0;
    }
    if (rank < 2 * npairs) {
        *peer = rank - npairs;
        return 1;
    }
    return -1;
}

/* One window: `win` messages of `sz` bytes, then the ack (or, bidirectional,
 * a window each way), in every pair. */
static void window(char *sbuf, char *rbuf, size_t sz, int win, int rank, int bidir)
{
    MPI_Request req[2 * WINDOW_MAX];
    int ack = 0, nr = 0, peer;
    int side = side_of(rank, &peer);

    if (side < 0) return;
    if (bidir) {
        for (int w = 0; w < win; w++)
            MPI_Irecv(rbuf + (size_t)w * sz, (int)sz, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[nr++]);
        for (int w = 0; w < win; w++)
            MPI_Isend(sbuf + (size_t)w * sz, (int)sz, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[nr++]);
        MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
    } else if (side == 0) {
        for (int w = 0; w < win; w++)
            MPI_Isend(sbuf + (size_t)w * sz, (int)sz, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[nr++]);
        MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        for (int w = 0; w < win; w++)
            MPI_Irecv(rbuf + (size_t)w * sz, (int)sz, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[nr++]);
        MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
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
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-b") == 0) bidir = 1;
        if (strcmp(argv[i], "-p") == 0) npairs = nranks / 2;
    }
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

    if (rank == 0) printf("# bench=%s ranks=%d pairs=%d\n", bidir ? "bibw" : "bw", nranks, npairs);

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
        double t = MPI_Wtime() - t0, slowest = 0.0;
        MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double msgs = (double)win * iters * npairs * (bidir ? 2.0 : 1.0);
            printf("size=%zu iters=%ld window=%d mb_s=%.2f msgs_s=%.0f\n", sz, iters, win,
                   msgs * (double)sz / slowest / 1e6, msgs / slowest);
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
