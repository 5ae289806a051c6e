/* Collective latency: the time of one call, back to back, on all ranks of
 * MPI_COMM_WORLD.  Measures MPI_Barrier, MPI_Bcast, MPI_Reduce,
 * MPI_Allreduce, MPI_Allgather and MPI_Alltoall at 8 B and 1 MiB, and on
 * request MPI_Alltoallv (equal blocks laid out as alltoall's).
 *
 * The size is the message of one call for bcast and the reductions (a vector
 * of MPI_DOUBLE summed with MPI_SUM; root 0), and each rank's block for
 * allgather and alltoall (so an 8-rank alltoall of 1 MiB sends 7 MiB per
 * rank).  Barrier is reported with size 0.  The time reported is that of the
 * slowest rank: the largest per-rank average over the timed loop.
 *
 * Output per collective and size:
 *   "coll=allreduce size=8 iters=<n> lat_us=<microseconds>"
 *
 * Options (besides the common ones; -m is ignored):
 *   -c LIST   comma-separated collectives to run (default: all but
 *             alltoallv, which the multi-host harness asks for)
 *   -s LIST   comma-separated sizes in bytes (default: 8,1048576)
 */
#include "bench_common.h"

enum { BARRIER, BCAST, REDUCE, ALLREDUCE, ALLGATHER, ALLTOALL, ALLTOALLV, NCOLL };
static const char *const names[NCOLL] = {"barrier",   "bcast",    "reduce",   "allreduce",
                                         "allgather", "alltoall", "alltoallv"};

struct bufs {
    char *send, *recv;
    int *counts, *displs; /* alltoallv: every block sz bytes, block i at i * sz */
};

static void call(int coll, struct bufs *b, size_t sz)
{
    int count = (int)(sz / sizeof(double));
    switch (coll) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(b->send, (int)sz, MPI_CHAR, 0, MPI_COMM_WORLD); break;
    case REDUCE: MPI_Reduce(b->send, b->recv, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(b->send, b->recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLGATHER: MPI_Allgather(b->send, (int)sz, MPI_CHAR, b->recv, (int)sz, MPI_CHAR, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(b->send, (int)sz, MPI_CHAR, b->recv, (int)sz, MPI_CHAR, MPI_COMM_WORLD); break;
    case ALLTOALLV:
        MPI_Alltoallv(b->send, b->counts, b->displs, MPI_CHAR, b->recv, b->counts, b->displs, MPI_CHAR, MPI_COMM_WORLD);
        break;
    }
}

/* Is `word` an item of the comma-separated `list`? */
static int listed(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0) return 1;
        p += len + (e ? 1 : 0);
    }
    return 0;
}

static int parse_sizes(const char *list, size_t *sizes)
{
    int n = 0;
    for (const char *p = list; *p && n < BENCH_MAX_SIZES;) {
        char *end;
        unsigned long long v = strtoull(p, &end, 0);
        if (end == p) break;
        if (v >= sizeof(double)) sizes[n++] = (size_t)v;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    size_t sizes[BENCH_MAX_SIZES] = {8, 1u << 20};
    int nsizes = 2, rank, nranks;
    const char *colls = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_require_two(nranks, rank);
    bench_parse_args(argc, argv, &o);
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "-c") == 0) colls = argv[++i];
        else if (strcmp(argv[i], "-s") == 0) nsizes = parse_sizes(argv[++i], sizes);
    }
    /* A collective of 12 values has a shorter budget than one size of a
     * series program, so that a whole run stays within a few seconds. */
    double budget = o.budget_s / 3;
    bench_print_library(rank);

    size_t maxsz = 0;
    for (int k = 0; k < nsizes; k++)
        if (sizes[k] > maxsz) maxsz = sizes[k];
    struct bufs b = {bench_alloc(maxsz * (size_t)nranks), bench_alloc(maxsz * (size_t)nranks),
                     (int *)bench_alloc(sizeof(int) * (size_t)nranks),
                     (int *)bench_alloc(sizeof(int) * (size_t)nranks)};
    /* Doubles that stay finite however often they are summed. */
    for (size_t i = 0; i < maxsz * (size_t)nranks / sizeof(double); i++)
        ((double *)b.send)[i] = 1.0 / (double)(1 + (i % 7));
    if (rank == 0) printf("# bench=coll ranks=%d\n", nranks);

    for (int c = 0; c < NCOLL; c++) {
        if (colls ? !listed(colls, names[c]) : c == ALLTOALLV) continue;
        for (int k = 0; k < (c == BARRIER ? 1 : nsizes); k++) {
            size_t sz = c == BARRIER ? 0 : sizes[k];
            for (int i = 0; i < nranks; i++) {
                b.counts[i] = (int)sz;
                b.displs[i] = (int)(sz * (size_t)i);
            }
            size_t moved = c == BARRIER ? 8 : sz * (size_t)nranks;
            long iters = bench_iters(moved, 512.0 * (1 << 20), 20, 50000, o.quick);
            long warm = iters / 10;
            warm = warm < 10 ? 10 : (warm > 200 ? 200 : warm);

            /* First calls set up connections and caches; then a two-call
             * probe sizes the warm-up, and the warm-up the timed loop. */
            call(c, &b, sz);
            MPI_Barrier(MPI_COMM_WORLD);
            double tp = MPI_Wtime();
            for (long i = 0; i < 2; i++) call(c, &b, sz);
            warm = bench_fit(warm, 2, MPI_Wtime() - tp, budget / 4, 2, rank);

            double tw = MPI_Wtime();
            for (long i = 0; i < warm; i++) call(c, &b, sz);
            iters = bench_fit(iters, warm, MPI_Wtime() - tw, budget, 5, rank);

            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (long i = 0; i < iters; i++) call(c, &b, sz);
            double t = (MPI_Wtime() - t0) / (double)iters, tmax = 0.0;
            MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                printf("coll=%s size=%zu iters=%ld lat_us=%.4f\n", names[c], sz, iters, tmax * 1e6);
                fflush(stdout);
            }
        }
    }
    free(b.send);
    free(b.recv);
    free(b.counts);
    free(b.displs);
    MPI_Finalize();
    return 0;
}
