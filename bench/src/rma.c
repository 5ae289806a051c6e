/* One-sided communication (MPI-3 RMA) on windows from MPI_Win_allocate.
 *
 * Default mode, 2 ranks (more are allowed; only ranks 0 and 1 take part):
 * rank 0 acts on rank 1's window while rank 1 calls nothing until the end
 * barrier of each operation (passive target).  The time of one operation:
 *   put, get      8 bytes + MPI_Win_flush, inside one MPI_Win_lock_all epoch
 *   acc           MPI_Accumulate of one double, MPI_SUM, + MPI_Win_flush
 *   fop           MPI_Fetch_and_op of one long long, MPI_SUM, + MPI_Win_flush
 *   lock_shared, lock_exclusive
 *                 MPI_Win_lock(shared or exclusive, 1) + MPI_Win_unlock(1),
 *                 no operation inside (size 0)
 *   lock_all      MPI_Win_lock_all + MPI_Win_unlock_all (size 0)
 * and the bandwidth of 1 MiB transfers (put_bw, get_bw): a round of 4
 * operations, each to its own 1 MiB slot of the target window, then one
 * MPI_Win_flush; MB = 10^6 bytes.  Output, from rank 0:
 *   "op=put size=8 iters=<n> lat_us=<microseconds>"
 *   "op=get_bw size=1048576 iters=<rounds> window=4 mb_s=<MB/s>"
 * Rank 0 sizes its loops alone (a two-operation probe sizes the warm-up,
 * the warm-up the timed loop, within the -t budget): the target takes no
 * part in the agreement.
 *
 * -c MODES (contention; MODES: shared, exclusive or shared,exclusive): every
 * rank takes the lock on rank 0 and releases it ITER times (ITER fitted to
 * the -t budget on the slowest rank's warm-up, the same on all ranks):
 *   shared     MPI_Win_lock(MPI_LOCK_SHARED, 0) + MPI_Get of 8 bytes +
 *              MPI_Win_unlock(0)
 *   exclusive  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0) + MPI_Accumulate of one
 *              long long (1, MPI_SUM) on a counter + MPI_Win_unlock(0)
 * Output per mode, from rank 0:
 *   "op=contended_exclusive size=<ranks> iters=<ITER> lat_us=<slowest rank's total / ITER>"
 *   "# totals_us=<each rank's total, comma-separated>"
 * After the exclusive run, rank 0 checks that the counter is ranks * ITER
 * and prints "# check=ok", or aborts with a message.
 *
 * -p (One_put_all): under MPI_Win_lock_all, rank 0 puts to every other rank,
 * then MPI_Win_flush_all, for each size: 0 B and 1 B to 32 KiB (doubling)
 * 1000 rounds each, 64 KiB 640 rounds, halving as the size doubles, down to
 * 4 MiB 10 rounds (-q: a tenth of the rounds, at least 1); 4 MiB windows,
 * each written by its owner first.  A size whose rounds take longer than
 * half the -t budget stops after the round that passes it (an MPI whose
 * flush waits for each target to be scheduled needs minutes on an
 * oversubscribed node): rounds= says how many of the planned rounds ran,
 * time_s is their time; every size runs at least once.  Rank 0 then reads its private memory (Private_Clean + Private_Dirty
 * of /proc/self/smaps_rollup; VmRSS where that file is missing, with a
 * "# private_from=VmRSS" line) and its VmRSS:
 *   "op=one_put_all size=<ranks> private_kb=<kB> rss_kb=<kB> time_s=<s> rounds=<n> planned=<n>"
 *
 * Options: the common -q and -t (-m is ignored), plus -c MODES or -p.
 */
#include "bench_common.h"

#define WINDOW 4                  /* bandwidth: operations per flush */
#define BW_SIZE ((size_t)1 << 20) /* bandwidth: bytes per operation */
#define DATA_OFF ((MPI_Aint)4096) /* bandwidth slots start here */
#define PUTALL_MAX ((size_t)4 << 20)
#define PUTALL_CAP 0.5 /* -p: seconds per size, in units of the -t budget */

enum { PUT, GET, ACC, FOP, PUT_BW, GET_BW, LOCK_SHARED, LOCK_EXCLUSIVE, LOCK_ALL, NOPS };
static const char *const names[NOPS] = {
    "put", "get", "acc", "fop", "put_bw", "get_bw", "lock_shared", "lock_exclusive", "lock_all"};

/* Offsets in the target's window (disp_unit 1). */
#define ACC_OFF 0  /* double */
#define FOP_OFF 8  /* long long */
#define PUT_OFF 64 /* 8 bytes for put and get */

struct ctx {
    MPI_Win win;
    char *local; /* origin / result buffer, WINDOW * BW_SIZE bytes */
    double one;
    long long one_ll, fetched;
};

/* One iteration of operation `op` by rank 0 on rank 1. */
static void step(int op, struct ctx *c)
{
    const int t = 1;
    switch (op) {
    case PUT:
        MPI_Put(c->local, 8, MPI_BYTE, t, PUT_OFF, 8, MPI_BYTE, c->win);
        MPI_Win_flush(t, c->win);
        break;
    case GET:
        MPI_Get(c->local, 8, MPI_BYTE, t, PUT_OFF, 8, MPI_BYTE, c->win);
        MPI_Win_flush(t, c->win);
        break;
    case ACC:
        MPI_Accumulate(&c->one, 1, MPI_DOUBLE, t, ACC_OFF, 1, MPI_DOUBLE, MPI_SUM, c->win);
        MPI_Win_flush(t, c->win);
        break;
    case FOP:
        MPI_Fetch_and_op(&c->one_ll, &c->fetched, MPI_LONG_LONG, t, FOP_OFF, MPI_SUM, c->win);
        MPI_Win_flush(t, c->win);
        break;
    case PUT_BW:
    case GET_BW:
        for (int w = 0; w < WINDOW; w++) {
            char *buf = c->local + (size_t)w * BW_SIZE;
            MPI_Aint disp = DATA_OFF + (MPI_Aint)w * (MPI_Aint)BW_SIZE;
            if (op == PUT_BW) MPI_Put(buf, (int)BW_SIZE, MPI_BYTE, t, disp, (int)BW_SIZE, MPI_BYTE, c->win);
            else MPI_Get(buf, (int)BW_SIZE, MPI_BYTE, t, disp, (int)BW_SIZE, MPI_BYTE, c->win);
        }
        MPI_Win_flush(t, c->win);
        break;
    case LOCK_SHARED:
    case LOCK_EXCLUSIVE:
        MPI_Win_lock(op == LOCK_SHARED ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, t, 0, c->win);
        MPI_Win_unlock(t, c->win);
        break;
    case LOCK_ALL:
        MPI_Win_lock_all(0, c->win);
        MPI_Win_unlock_all(c->win);
        break;
    }
}

static void run_ops(const struct bench_opts *o, int rank)
{
    struct ctx c = {MPI_WIN_NULL, NULL, 1.0, 1, 0};
    char *base = NULL;
    MPI_Aint winsz = DATA_OFF + (MPI_Aint)(WINDOW * BW_SIZE);
    if (rank > 1) winsz = 0; /* only ranks 0 and 1 take part */
    MPI_Win_allocate(winsz, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &c.win);
    if (winsz > 0) memset(base, 0, (size_t)winsz); /* page faults are not timed */
    c.local = bench_alloc(WINDOW * BW_SIZE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("# bench=rma ranks=2 window=%d\n", WINDOW);

    for (int op = 0; op < NOPS; op++) {
        if (rank == 0) {
            int bw = op == PUT_BW || op == GET_BW;
            int epoch = op < LOCK_SHARED; /* data operations run in one lock_all epoch */
            size_t sz = bw ? BW_SIZE : (op < PUT_BW ? 8 : 0);
            long iters = bw ? bench_iters(WINDOW * BW_SIZE, 256.0 * (1 << 20), 5, 2000, o->quick)
                            : bench_iters(8, 256.0 * (1 << 20), 20, 2000000, o->quick);
            long warm = iters / 10;
            warm = warm < 10 ? 10 : (warm > 200 ? 200 : warm);

            if (epoch) MPI_Win_lock_all(0, c.win);
            step(op, &c); /* first contact */
            double tp = MPI_Wtime();
            for (long i = 0; i < 2; i++) step(op, &c);
            warm = bench_fit_alone(warm, 2, MPI_Wtime() - tp, o->budget_s / 4, 2);
            double tw = MPI_Wtime();
            for (long i = 0; i < warm; i++) step(op, &c);
            iters = bench_fit_alone(iters, warm, MPI_Wtime() - tw, o->budget_s, 5);

            double t0 = MPI_Wtime();
            for (long i = 0; i < iters; i++) step(op, &c);
            double t = MPI_Wtime() - t0;
            if (epoch) MPI_Win_unlock_all(c.win);
            if (bw)
                printf("op=%s size=%zu iters=%ld window=%d mb_s=%.2f\n", names[op], sz, iters, WINDOW,
                       (double)sz * WINDOW * (double)iters / t / 1e6);
            else printf("op=%s size=%zu iters=%ld lat_us=%.4f\n", names[op], sz, iters, t * 1e6 / (double)iters);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* where the target waits */
    }
    MPI_Win_free(&c.win);
    free(c.local);
}

/* ---- -c: contention on rank 0's lock ------------------------------------ */

static void acquire(int exclusive, MPI_Win win, long long *buf)
{
    static const long long one = 1;
    if (exclusive) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, win);
    } else {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Get(buf, 8, MPI_BYTE, 0, 8, 8, MPI_BYTE, win);
    }
    MPI_Win_unlock(0, win);
}

/* bench_fit on the slowest rank's time: under contention the ranks are
 * served unequally (rank 0, the target, is often served first), and the
 * loop must fit the budget on every rank. */
static long fit_slowest(long iters, long done, double done_s, double budget_s, long floor)
{
    double slowest = 0.0;
    MPI_Allreduce(&done_s, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return bench_fit_alone(iters, done, slowest, budget_s, floor);
}

static void run_contention(const struct bench_opts *o, int exclusive, int rank, int nranks)
{
    MPI_Win win;
    long long *base = NULL, buf = 0, zero = 0, count = -1;
    MPI_Win_allocate(rank == 0 ? 64 : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    if (rank == 0) memset(base, 0, 64);
    MPI_Barrier(MPI_COMM_WORLD);

    long iters = o->quick ? 1000 : 10000, warm = o->quick ? 20 : 100;
    acquire(exclusive, win, &buf); /* first contact */
    MPI_Barrier(MPI_COMM_WORLD);
    double tp = MPI_Wtime();
    for (long i = 0; i < 2; i++) acquire(exclusive, win, &buf);
    warm = fit_slowest(warm, 2, MPI_Wtime() - tp, o->budget_s / 4, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    double tw = MPI_Wtime();
    for (long i = 0; i < warm; i++) acquire(exclusive, win, &buf);
    iters = fit_slowest(iters, warm, MPI_Wtime() - tw, o->budget_s, 5);

    /* The counter counts the timed loop only. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&zero, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) acquire(exclusive, win, &buf);
    double t = MPI_Wtime() - t0;
    double *totals = rank == 0 ? malloc(sizeof(double) * (size_t)nranks) : NULL;
    MPI_Gather(&t, 1, MPI_DOUBLE, totals, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's unlocks have completed */

    if (rank == 0) {
        double tmax = 0.0;
        for (int r = 0; r < nranks; r++)
            if (totals[r] > tmax) tmax = totals[r];
        printf("op=contended_%s size=%d iters=%ld lat_us=%.4f\n", exclusive ? "exclusive" : "shared", nranks, iters,
               tmax * 1e6 / (double)iters);
        printf("# totals_us=");
        for (int r = 0; r < nranks; r++) printf("%s%.1f", r ? "," : "", totals[r] * 1e6);
        printf("\n");
        if (exclusive) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Get(&count, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, win);
            MPI_Win_unlock(0, win);
            if (count != (long long)nranks * iters) {
                fprintf(stderr, "rma: counter is %lld after the exclusive run, expected %d * %ld = %lld\n", count,
                        nranks, iters, (long long)nranks * iters);
                fflush(stdout);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            printf("# check=ok\n");
        }
        fflush(stdout);
        free(totals);
    }
    MPI_Win_free(&win);
}

/* ---- -p: One_put_all --------------------------------------------------- */

static void run_put_all(const struct bench_opts *o, int rank, int nranks)
{
    MPI_Win win;
    char *base = NULL;
    MPI_Win_allocate((MPI_Aint)PUTALL_MAX, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    /* Each rank touches its own window: pages of a shared segment that only
     * rank 0's puts fault in would count as rank 0's private memory. */
    memset(base, 0, PUTALL_MAX);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char *src = bench_alloc(PUTALL_MAX);
        long rounds = 0, planned = 0;
        double t0 = MPI_Wtime();
        MPI_Win_lock_all(0, win);
        for (size_t sz = 0; sz <= PUTALL_MAX; sz = sz ? sz << 1 : 1) {
            long reps = sz <= ((size_t)32 << 10) ? 1000 : 640 / (long)(sz >> 16);
            if (o->quick) reps = reps / 10 < 1 ? 1 : reps / 10;
            planned += reps;
            double ts = MPI_Wtime();
            for (long i = 0; i < reps; i++) {
                for (int r = 1; r < nranks; r++) MPI_Put(src, (int)sz, MPI_BYTE, r, 0, (int)sz, MPI_BYTE, win);
                MPI_Win_flush_all(win);
                rounds++;
                if (MPI_Wtime() - ts > PUTALL_CAP * o->budget_s) break; /* see the header */
            }
        }
        MPI_Win_unlock_all(win);
        double t = MPI_Wtime() - t0;
        bench_report_putall("rma_putall", nranks, t, rounds, planned);
        free(src);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* where the targets wait */
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int rank, nranks, put_all = 0;
    const char *modes = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_require_two(nranks, rank);
    bench_parse_args(argc, argv, &o);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) modes = argv[++i];
        else if (strcmp(argv[i], "-p") == 0) put_all = 1;
    }
    bench_print_library(rank);

    if (modes) {
        if (rank == 0) printf("# bench=rma_contention ranks=%d\n", nranks);
        int shared = strstr(modes, "shared") != NULL, exclusive = strstr(modes, "exclusive") != NULL;
        if (!shared && !exclusive) {
            if (rank == 0) fprintf(stderr, "rma: -c takes shared, exclusive or shared,exclusive\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (shared) run_contention(&o, 0, rank, nranks);
        if (exclusive) run_contention(&o, 1, rank, nranks);
    } else if (put_all) {
        run_put_all(&o, rank, nranks);
    } else {
        run_ops(&o, rank);
    }
    MPI_Finalize();
    return 0;
}
