/* The ACP basic layer (include/acp.h), built with acpcc and run with
 * mpirun beside bench/src/rma.c's MPI one-sided operations.
 *
 * Default mode, 3 processes (2 are enough for all but the copies between
 * two other processes): process 0 issues, the others wait in acp_sync.
 * Starter memory (acp_init is given --acp-startermemsize, as acprun
 * appends it) holds the targets; "reg_" operations use memory each process
 * registered instead (its private memory). The time of one operation:
 *   copy_l2r      acp_copy of 8 bytes from process 0 to process 1 + acp_complete
 *   copy_r2l      from process 1 to process 0
 *   copy_r2r      from process 1 to process 2 (neither is the caller)
 *   add8, cas8    acp_add8 / acp_cas8 on process 1's memory + acp_complete
 * and the bandwidth of 1 MiB copies (..._bw): a round of 4 copies, each
 * to its own 1 MiB slot, then one acp_complete(ACP_HANDLE_ALL); MB = 10^6
 * bytes. Output:
 *   "op=copy_l2r size=8 iters=<n> lat_us=<microseconds>"
 *   "op=copy_r2l_bw size=1048576 iters=<rounds> window=4 mb_s=<MB/s>"
 *
 * -p (One_put_all, as in rma.c): process 0 copies from its starter memory
 * to every other process's, then acp_complete(ACP_HANDLE_ALL), for each
 * size: 0 B and 1 B to 32 KiB 1000 rounds each, 64 KiB 640 rounds, halving
 * as the size doubles, down to 4 MiB 10 rounds (-q: a tenth); each process
 * writes its own starter memory first (pages only process 0 touched would
 * count as its private memory). Then process 0's private memory and VmRSS:
 *   "op=one_put_all size=<processes> private_kb=<kB> rss_kb=<kB> time_s=<s> rounds=<n> planned=<n>"
 *
 * Options: -q and -t as in bench_common.h, -p. */
#define _POSIX_C_SOURCE 200809L
#include <acp.h>
#include "bench_common.h"
#include <stdint.h>
#include <time.h>

#define WINDOW 4
#define BW_SIZE ((size_t)1 << 20)
#define DATA_OFF ((size_t)4096)
#define STARTER (DATA_OFF + WINDOW * BW_SIZE)
#define PUTALL_MAX ((size_t)4 << 20)
#define PUTALL_CAP 0.5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fail(const char *what)
{
    fprintf(stderr, "acp bench: %s failed\n", what);
    acp_abort(what);
}

enum { COPY_L2R, COPY_R2L, COPY_R2R, ADD8, CAS8, REG_L2R, REG_R2L, NLAT };
static const char *const lat_names[NLAT] = {"copy_l2r", "copy_r2l",     "copy_r2r",    "add8",
                                            "cas8",     "reg_copy_l2r", "reg_copy_r2l"};

struct place {
    acp_ga_t me, one, two; /* process 0's, 1's and 2's memory (starter or registered) */
};

/* One operation of process 0; a bandwidth round when bw. */
static void step(int op, int bw, const struct place *s, const struct place *r)
{
    const struct place *p = op >= REG_L2R ? r : s;
    acp_ga_t dst = 0, src = 0;
    switch (op) {
    case COPY_L2R:
    case REG_L2R: dst = p->one, src = p->me; break;
    case COPY_R2L:
    case REG_R2L: dst = p->me, src = p->one; break;
    case COPY_R2R: dst = p->two, src = p->one; break;
    case ADD8:
        if (acp_add8(s->me, s->one, 1, ACP_HANDLE_NULL) == (acp_handle_t)ACP_HANDLE_NULL) fail("acp_add8");
        acp_complete(ACP_HANDLE_ALL);
        return;
    case CAS8:
        if (acp_cas8(s->me, s->one, 0, 0, ACP_HANDLE_NULL) == (acp_handle_t)ACP_HANDLE_NULL) fail("acp_cas8");
        acp_complete(ACP_HANDLE_ALL);
        return;
    }
    if (!bw) {
        acp_handle_t h = acp_copy(dst + 64, src + 64, 8, ACP_HANDLE_NULL);
        if (h == (acp_handle_t)ACP_HANDLE_NULL) fail("acp_copy");
        acp_complete(h);
        return;
    }
    for (int w = 0; w < WINDOW; w++) {
        size_t off = DATA_OFF + (size_t)w * BW_SIZE;
        if (acp_copy(dst + off, src + off, BW_SIZE, ACP_HANDLE_NULL) == (acp_handle_t)ACP_HANDLE_NULL) fail("acp_copy");
    }
    acp_complete(ACP_HANDLE_ALL);
}

static void measure(const struct bench_opts *o, int op, int bw, const struct place *s, const struct place *r)
{
    long iters = bw ? bench_iters(WINDOW * BW_SIZE, 256.0 * (1 << 20), 5, 2000, o->quick)
                    : bench_iters(8, 256.0 * (1 << 20), 20, 20000, o->quick);
    long warm = iters / 10;
    warm = warm < 10 ? 10 : (warm > 200 ? 200 : warm);
    step(op, bw, s, r); /* first contact */
    double tp = now();
    for (int i = 0; i < 2; i++) step(op, bw, s, r);
    warm = bench_fit_alone(warm, 2, now() - tp, o->budget_s / 4, 2);
    double tw = now();
    for (long i = 0; i < warm; i++) step(op, bw, s, r);
    iters = bench_fit_alone(iters, warm, now() - tw, o->budget_s, 5);
    double t0 = now();
    for (long i = 0; i < iters; i++) step(op, bw, s, r);
    double t = now() - t0;
    if (bw)
        printf("op=%s_bw size=%zu iters=%ld window=%d mb_s=%.2f\n", lat_names[op], BW_SIZE, iters, WINDOW,
               (double)BW_SIZE * WINDOW * (double)iters / t / 1e6);
    else printf("op=%s size=8 iters=%ld lat_us=%.4f\n", lat_names[op], iters, t * 1e6 / (double)iters);
    fflush(stdout);
}

/* The global address process rank left in its starter memory at offset 0. */
static acp_ga_t published(int rank)
{
    acp_ga_t into = acp_query_starter_ga(acp_rank()) + 8;
    acp_complete(acp_copy(into, acp_query_starter_ga(rank), 8, ACP_HANDLE_NULL));
    acp_ga_t ga;
    memcpy(&ga, (char *)acp_query_address(into), 8);
    return ga;
}

static void run_ops(const struct bench_opts *o, int rank, int n)
{
    char *starter = acp_query_address(acp_query_starter_ga(rank));
    memset(starter, 0, STARTER); /* page faults are not timed */
    char *mem = bench_alloc(STARTER);
    memset(mem, 0, STARTER);
    acp_atkey_t key = acp_register_memory(mem, STARTER, 0);
    if (key == ACP_ATKEY_NULL) fail("acp_register_memory");
    acp_ga_t mine = acp_query_ga(key, mem);
    memcpy(starter, &mine, 8);
    acp_sync();
    struct place s = {acp_query_starter_ga(0), acp_query_starter_ga(1), acp_query_starter_ga(n > 2 ? 2 : 1)};
    struct place r = {0, 0, 0};
    if (rank == 0) r = (struct place){mine, published(1), published(n > 2 ? 2 : 1)};
    acp_sync();
    if (rank == 0) {
        printf("# bench=acp ranks=%d window=%d\n", n, WINDOW);
        for (int op = 0; op < NLAT; op++) {
            if (op == COPY_R2R && n < 3) continue;
            measure(o, op, 0, &s, &r);
            if (op != ADD8 && op != CAS8) measure(o, op, 1, &s, &r);
        }
    }
    acp_sync(); /* where the others wait */
    acp_unregister_memory(key);
    free(mem);
}

static void run_put_all(const struct bench_opts *o, int rank, int n)
{
    acp_ga_t mine = acp_query_starter_ga(rank);
    memset(acp_query_address(mine), 0, PUTALL_MAX);
    acp_sync();
    if (rank == 0) {
        long rounds = 0, planned = 0;
        double t0 = now();
        for (size_t sz = 0; sz <= PUTALL_MAX; sz = sz ? sz << 1 : 1) {
            long reps = sz <= ((size_t)32 << 10) ? 1000 : 640 / (long)(sz >> 16);
            if (o->quick) reps = reps / 10 < 1 ? 1 : reps / 10;
            planned += reps;
            double ts = now();
            for (long i = 0; i < reps; i++) {
                for (int r = 1; r < n; r++)
                    if (acp_copy(acp_query_starter_ga(r), mine, sz, ACP_HANDLE_NULL) == (acp_handle_t)ACP_HANDLE_NULL)
                        fail("acp_copy");
                acp_complete(ACP_HANDLE_ALL);
                rounds++;
                if (now() - ts > PUTALL_CAP * o->budget_s) break;
            }
        }
        double t = now() - t0;
        bench_report_putall("acp_putall", n, t, rounds, planned);
    }
    acp_sync();
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_parse_args(argc, argv, &o);
    int put_all = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-p")) put_all = 1;
    /* the starter memory's size, given the way acprun gives it */
    char size_arg[64];
    snprintf(size_arg, sizeof size_arg, "--acp-startermemsize=%zu", put_all ? PUTALL_MAX : STARTER);
    char *args[] = {argv[0], size_arg, NULL};
    int nargs = 2;
    char **pargs = args;
    if (acp_init(&nargs, &pargs) != 0) return 1;
    int rank = acp_rank(), n = acp_procs();
    if (n < 2) {
        if (rank == 0) fprintf(stderr, "acp bench: needs at least 2 processes\n");
        acp_finalize();
        return 1;
    }
    if (rank == 0) printf("# library=LeanMPI ACP basic layer (libacp)\n");
    if (put_all) run_put_all(&o, rank, n);
    else run_ops(&o, rank, n);
    acp_finalize();
    return 0;
}
