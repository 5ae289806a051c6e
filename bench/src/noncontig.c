/* Non-contiguous data: a strided layout of 15 of every 16 ints
 * (MPI_Type_vector(n, 15, 16, MPI_INT)), the shape of a halo or of a
 * column block, at data sizes from 4 KiB up to -m bytes (default 64 MiB).
 *
 * Default: ping-pong between ranks 0 and 1, rank 0 sending the strided
 * layout and receiving it back into the same layout, rank 1 receiving and
 * returning plain ints; the rate is data bytes per half round trip.
 * With -p: rank 0 alone packs the layout into a contiguous buffer and
 * unpacks it back (MPI_Pack, MPI_Unpack); the rate is data bytes over the
 * time of one pack plus one unpack, halved (a copy each way).
 * For comparison, -c does the same with two memcpy calls of the data size:
 * the machine's copy rate, the ceiling for both.
 *
 * Output per size: "size=<data bytes> iters=<n> gb_s=<10^9 data bytes/s>". */
#include "bench_common.h"

#define MIN_SIZE (4u << 10)

static void round_trip(int *strided, int *plain, MPI_Datatype t, int n, int rank)
{
    if (rank == 0) {
        MPI_Send(strided, 1, t, 1, 5, MPI_COMM_WORLD);
        MPI_Recv(strided, 1, t, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(plain, n, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(plain, n, MPI_INT, 0, 6, MPI_COMM_WORLD);
    }
}

static void pack_unpack(int *strided, int *plain, MPI_Datatype t, int n, int memcpy_only)
{
    if (memcpy_only) {
        memcpy(plain, strided, (size_t)n * sizeof(int));
        memcpy(strided, plain, (size_t)n * sizeof(int));
        return;
    }
    int pos = 0, bytes = n * (int)sizeof(int);
    MPI_Pack(strided, 1, t, plain, bytes, &pos, MPI_COMM_SELF);
    pos = 0;
    MPI_Unpack(plain, bytes, &pos, strided, 1, t, MPI_COMM_SELF);
}

/* One iteration of the measured operation (rank 0 alone packs). */
static void step(int *strided, int *plain, MPI_Datatype t, int n, int rank, int pack, int copy)
{
    if (!pack) round_trip(strided, plain, t, n, rank);
    else if (rank == 0) pack_unpack(strided, plain, t, n, copy);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int rank, nranks, pack = 0, copy = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_parse_args(argc, argv, &o);
    if (o.max_size == BENCH_MAX_SIZE_DEFAULT) o.max_size = 64u << 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-p") == 0) pack = 1;
        if (strcmp(argv[i], "-c") == 0) pack = copy = 1;
    }
    if (!pack) bench_require_two(nranks, rank);
    bench_print_library(rank);
    if (rank == 0) printf("# bench=%s ranks=%d\n", copy ? "memcpy" : pack ? "pack" : "strided", nranks);

    /* data sizes: powers of 4 (quick: of 16) from 4 KiB, multiples of 60 bytes */
    size_t top = o.max_size / 60 * 60;
    int *strided = (int *)bench_alloc(top / 15 * 16 + 64), *plain = (int *)bench_alloc(top + 64);
    for (size_t i = 0; i < top / 15 * 16 / sizeof(int); i++) strided[i] = (int)i;
    for (size_t sz = MIN_SIZE; sz <= o.max_size; sz *= o.quick ? 16 : 4) {
        size_t data = sz / 60 * 60;
        int n = (int)(data / sizeof(int));
        MPI_Datatype t;
        MPI_Type_vector(n / 15, 15, 16, MPI_INT, &t);
        MPI_Type_commit(&t);
        long iters = bench_iters(data, 1024.0 * (1 << 20), 5, 20000, o.quick);
        long warm = iters / 10 < 2 ? 2 : (iters / 10 > 50 ? 50 : iters / 10);
        double tw = MPI_Wtime();
        for (long i = 0; i < warm; i++) step(strided, plain, t, n, rank, pack, copy);
        iters = bench_fit(iters, warm, MPI_Wtime() - tw, o.budget_s, 3, rank);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) step(strided, plain, t, n, rank, pack, copy);
        double dt = MPI_Wtime() - t0;
        if (rank == 0) {
            printf("size=%zu iters=%ld gb_s=%.3f\n", data, iters, (double)data * 2 * iters / dt / 1e9);
            fflush(stdout);
        }
        MPI_Type_free(&t);
    }
    free(strided);
    free(plain);
    MPI_Finalize();
    return 0;
}
