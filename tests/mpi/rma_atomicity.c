/* Atomicity of concurrent RMA accumulates: every rank hits the same
 * locations at once inside MPI_Win_lock_all epochs, and the outcome must be
 * as if the operations ran one after another at the target (MPI-4.1
 * section 12.7.1, "accumulate functions ... same predefined datatype").
 * A lost or torn update shows up as a wrong total, a repeated or missing
 * fetched value, or a half-written word:
 *  (a) MPI_Accumulate(MPI_SUM) of 1 onto one int and one long long, some
 *      ranks flushing after each call and some only now and then;
 *  (b) MPI_Fetch_and_op(MPI_SUM) counters: the fetched values are distinct,
 *      increase on each rank, and together are exactly 0 .. N*size-1;
 *  (c) MPI_Compare_and_swap as a spinlock around a non-atomic
 *      MPI_Get + MPI_Put increment (bounded retries);
 *  (d) MPI_Get_accumulate with MPI_REPLACE as a swap (old values plus the
 *      final one are every token exactly once) and MPI_NO_OP as an atomic
 *      read of a 64-bit word whose halves writers keep equal;
 *  (e) element-wise atomicity of accumulates of arrays (64 doubles, also
 *      through a derived datatype, and 1024 long longs) onto every rank;
 *  (f) several ops on one location, in phases of one op each (the default
 *      accumulate_ops hint, same_op_no_op, lets an implementation assume
 *      that concurrent accumulates to a location use one op or MPI_NO_OP):
 *      MPI_SUM with concurrent MPI_NO_OP readers that must see the value
 *      grow, then MPI_BXOR, MPI_MAX and MPI_BOR, whose combined result is
 *      independent of the order within a phase.
 * Each runs on windows from MPI_Win_allocate, MPI_Win_create,
 * MPI_Win_allocate_shared (over the ranks sharing a node) and
 * MPI_Win_create_dynamic. */
#include "mpitest.h"

#define NA 200 /* accumulates per rank in (a) */
#define NB 100 /* fetch_and_ops per rank in (b) */
#define NC 48  /* critical sections in all in (c), at least 4 per rank */
#define ND 100 /* swaps per rank in (d) */
#define NE 30  /* array accumulates per rank and target in (e) */
#define NF 100 /* accumulates per rank and phase in (f) */
#define NVEC 64
#define NBIG 1024
#define BATCH 20 /* calls in flight between flushes in (b) and (d) */
#define MAX_ATTEMPTS 5000000L

/* byte offsets inside every rank's part of the window (disp_unit 1) */
enum {
    OFF_INT = 0,              /* int, (a) */
    OFF_LL = 8,               /* long long, (a) */
    OFF_FOP = 16,             /* int, (b) */
    OFF_FOPLL = 24,           /* long long, (b) */
    OFF_LOCK = 32,            /* int, (c): 0 free, else holder rank + 1 */
    OFF_CRIT = 40,            /* long long, (c) */
    OFF_SWAP = 48,            /* int, (d) */
    OFF_PAIR = 56,            /* long long, (d) */
    OFF_MIX = 64,             /* long long, (f) */
    OFF_DLOC = 72,            /* MPI_DOUBLE_INT (16 bytes with padding), (g) */
    OFF_ILOC = 88,            /* MPI_2INT, (g) */
    OFF_VEC = 128,            /* NVEC doubles, (e) */
    OFF_BIG = 128 + NVEC * 8, /* NBIG long longs, (e) */
    WIN_BYTES = OFF_BIG + NBIG * 8
};

enum { FL_ALLOCATE, FL_CREATE, FL_SHARED, FL_DYNAMIC, NFLAVORS };
static const char *flavor_name[NFLAVORS] = {"MPI_Win_allocate", "MPI_Win_create", "MPI_Win_allocate_shared",
                                            "MPI_Win_create_dynamic"};

typedef struct {
    MPI_Comm comm;
    MPI_Win win;
    int rank, size, flavor;
    MPI_Aint *tbase; /* per target: the displacement of its part (an address for dynamic windows) */
    char *mem;       /* memory this program allocated for the window, if any */
} ctx;

static MPI_Aint disp(const ctx *c, int target, int off) { return c->tbase[target] + off; }

static void pass(const ctx *c, const char *what)
{
    char s[256];
    snprintf(s, sizeof s, "%s (%s)", what, flavor_name[c->flavor]);
    mt_pass(s);
}

static void open_win(ctx *c, int flavor)
{
    memset(c, 0, sizeof *c);
    c->flavor = flavor;
    if (flavor == FL_SHARED)
        CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c->comm));
    else CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c->comm));
    c->rank = mt_rank(c->comm);
    c->size = mt_size(c->comm);
    c->tbase = calloc((size_t)c->size, sizeof(MPI_Aint));
    CHECK(c->tbase != NULL, "calloc");
    char *base = NULL;
    switch (flavor) {
    case FL_ALLOCATE: CHECK_MPI(MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, c->comm, &base, &c->win)); break;
    case FL_CREATE:
        c->mem = calloc(1, WIN_BYTES);
        CHECK(c->mem != NULL, "calloc");
        base = c->mem;
        CHECK_MPI(MPI_Win_create(base, WIN_BYTES, 1, MPI_INFO_NULL, c->comm, &c->win));
        break;
    case FL_SHARED: CHECK_MPI(MPI_Win_allocate_shared(WIN_BYTES, 1, MPI_INFO_NULL, c->comm, &base, &c->win)); break;
    case FL_DYNAMIC: {
        c->mem = calloc(1, WIN_BYTES);
        CHECK(c->mem != NULL, "calloc");
        base = c->mem;
        CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, c->comm, &c->win));
        CHECK_MPI(MPI_Win_attach(c->win, base, WIN_BYTES));
        MPI_Aint mine;
        CHECK_MPI(MPI_Get_address(base, &mine));
        CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, c->tbase, 1, MPI_AINT, c->comm));
        break;
    }
    }
    /* zero my part under an exclusive lock on myself, the way local stores
     * into a window become visible to RMA in either memory model */
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, 0, c->win));
    memset(base, 0, WIN_BYTES);
    CHECK_MPI(MPI_Win_unlock(c->rank, c->win));
    CHECK_MPI(MPI_Barrier(c->comm));
}

static void close_win(ctx *c)
{
    CHECK_MPI(MPI_Barrier(c->comm));
    if (c->flavor == FL_DYNAMIC) CHECK_MPI(MPI_Win_detach(c->win, c->mem));
    CHECK_MPI(MPI_Win_free(&c->win));
    free(c->mem);
    free(c->tbase);
    CHECK_MPI(MPI_Comm_free(&c->comm));
}

/* Everyone's operations of a part are complete at their targets (each rank
 * flushed before the barrier): read a value back in an epoch of its own. */
static long long read_ll(const ctx *c, int target, int off, MPI_Datatype t)
{
    long long v = 0;
    int iv = 0;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, c->win));
    if (t == MPI_INT) CHECK_MPI(MPI_Get(&iv, 1, MPI_INT, target, disp(c, target, off), 1, MPI_INT, c->win));
    else CHECK_MPI(MPI_Get(&v, 1, MPI_LONG_LONG, target, disp(c, target, off), 1, MPI_LONG_LONG, c->win));
    CHECK_MPI(MPI_Win_unlock(target, c->win));
    return t == MPI_INT ? iv : v;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* (a) */
static void part_sum(ctx *c)
{
    const int one = 1;
    const long long one_ll = 1;
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    for (int i = 0; i < NA; i++) {
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, 0, disp(c, 0, OFF_INT), 1, MPI_INT, MPI_SUM, c->win));
        CHECK_MPI(MPI_Accumulate(&one_ll, 1, MPI_LONG_LONG, 0, disp(c, 0, OFF_LL), 1, MPI_LONG_LONG, MPI_SUM, c->win));
        /* even ranks flush after each of the first calls, then now and
         * then; odd ones leave theirs in flight to the end (the origin
         * buffers are constant, so that is allowed) */
        if (c->rank % 2 == 0 && (i < 16 || i % 16 == 15)) CHECK_MPI(MPI_Win_flush(0, c->win));
    }
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    CHECK_MPI(MPI_Barrier(c->comm));
    CHECK_EQ(read_ll(c, 0, OFF_INT, MPI_INT), (long long)NA * c->size);
    CHECK_EQ(read_ll(c, 0, OFF_LL, MPI_LONG_LONG), (long long)NA * c->size);
    pass(c, "concurrent MPI_Accumulate(MPI_SUM) onto one int and one long long");
}

/* Rank 0 checks that the gathered values, sorted, are exactly lo .. lo+n-1. */
static void check_permutation(const ctx *c, long long *mine, int per_rank, long long lo, long long extra,
                              const char *what)
{
    int n = per_rank * c->size + (extra >= 0);
    long long *all = c->rank == 0 ? malloc(sizeof(long long) * (size_t)n) : NULL;
    CHECK_MPI(MPI_Gather(mine, per_rank, MPI_LONG_LONG, all, per_rank, MPI_LONG_LONG, 0, c->comm));
    if (c->rank == 0) {
        if (extra >= 0) all[n - 1] = extra;
        qsort(all, (size_t)n, sizeof(long long), cmp_ll);
        for (int i = 0; i < n; i++)
            CHECK(all[i] == lo + i, "%s: sorted value %d is %lld, expected %lld (%s)", what, i, all[i], lo + i,
                  i > 0 && all[i] == all[i - 1] ? "a value came twice" : "a value is missing");
        free(all);
    }
}

/* (b) */
static void part_fetch_and_op(ctx *c)
{
    long long got[NB], got_ll[NB];
    int r[BATCH];
    long long rl[BATCH];
    const int one = 1;
    const long long one_ll = 1;
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    for (int i = 0; i < NB; i += BATCH) {
        /* a batch in flight at once, each with a result buffer of its own */
        for (int j = 0; j < BATCH; j++) {
            CHECK_MPI(MPI_Fetch_and_op(&one, &r[j], MPI_INT, 0, disp(c, 0, OFF_FOP), MPI_SUM, c->win));
            CHECK_MPI(MPI_Fetch_and_op(&one_ll, &rl[j], MPI_LONG_LONG, 0, disp(c, 0, OFF_FOPLL), MPI_SUM, c->win));
        }
        CHECK_MPI(MPI_Win_flush(0, c->win));
        for (int j = 0; j < BATCH; j++) {
            int k = i + j;
            got[k] = r[j];
            got_ll[k] = rl[j];
            /* my own updates are ordered (accumulate_ordering defaults to
             * rar,raw,war,waw), so I see the counter grow */
            if (k > 0) {
                CHECK(got[k] > got[k - 1], "int fetch %d: %lld after %lld", k, got[k], got[k - 1]);
                CHECK(got_ll[k] > got_ll[k - 1], "long long fetch %d: %lld after %lld", k, got_ll[k], got_ll[k - 1]);
            }
        }
    }
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    CHECK_MPI(MPI_Barrier(c->comm));
    check_permutation(c, got, NB, 0, -1, "MPI_Fetch_and_op int counter");
    check_permutation(c, got_ll, NB, 0, -1, "MPI_Fetch_and_op long long counter");
    CHECK_EQ(read_ll(c, 0, OFF_FOP, MPI_INT), (long long)NB * c->size);
    CHECK_EQ(read_ll(c, 0, OFF_FOPLL, MPI_LONG_LONG), (long long)NB * c->size);
    pass(c, "MPI_Fetch_and_op counters hand out every value once");
}

/* (c) */
static void part_spinlock(ctx *c)
{
    const int me = c->rank + 1, zero = 0;
    const long long one = 1;
    /* every round trip here waits for the target: a fixed total keeps the
     * part short at many processes */
    int rounds = NC / c->size < 4 ? 4 : NC / c->size;
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    for (int i = 0; i < rounds; i++) {
        /* acquire */
        double t0 = MPI_Wtime();
        long attempts = 0;
        for (;;) {
            int prev = -1;
            CHECK_MPI(MPI_Compare_and_swap(&me, &zero, &prev, MPI_INT, 0, disp(c, 0, OFF_LOCK), c->win));
            CHECK_MPI(MPI_Win_flush(0, c->win));
            if (prev == 0) break;
            CHECK(prev >= 1 && prev <= c->size && prev != me, "lock word holds %d (I am %d)", prev, me);
            attempts++;
            CHECK(attempts < MAX_ATTEMPTS && MPI_Wtime() - t0 < MT_POLL_LIMIT_S,
                  "no lock after %ld attempts in %.1f s (held by %d)", attempts, MPI_Wtime() - t0, prev - 1);
        }
        /* the unprotected read-modify-write */
        long long v = -1, again = -1;
        CHECK_MPI(MPI_Get(&v, 1, MPI_LONG_LONG, 0, disp(c, 0, OFF_CRIT), 1, MPI_LONG_LONG, c->win));
        CHECK_MPI(MPI_Win_flush(0, c->win));
        CHECK(v >= 0 && v < (long long)rounds * c->size, "counter %lld", v);
        long long next = v + one;
        CHECK_MPI(MPI_Put(&next, 1, MPI_LONG_LONG, 0, disp(c, 0, OFF_CRIT), 1, MPI_LONG_LONG, c->win));
        CHECK_MPI(MPI_Win_flush(0, c->win));
        CHECK_MPI(MPI_Get(&again, 1, MPI_LONG_LONG, 0, disp(c, 0, OFF_CRIT), 1, MPI_LONG_LONG, c->win));
        CHECK_MPI(MPI_Win_flush(0, c->win));
        CHECK(again == next, "counter changed to %lld under my lock (I wrote %lld)", again, next);
        /* release: only the holder may find its own mark there */
        int prev = -1;
        CHECK_MPI(MPI_Compare_and_swap(&zero, &me, &prev, MPI_INT, 0, disp(c, 0, OFF_LOCK), c->win));
        CHECK_MPI(MPI_Win_flush(0, c->win));
        CHECK(prev == me, "releasing the lock found %d, expected my %d", prev, me);
    }
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    CHECK_MPI(MPI_Barrier(c->comm));
    CHECK_EQ(read_ll(c, 0, OFF_CRIT, MPI_LONG_LONG), (long long)rounds * c->size);
    CHECK_EQ(read_ll(c, 0, OFF_LOCK, MPI_INT), 0);
    pass(c, "MPI_Compare_and_swap spinlock around MPI_Get + MPI_Put");
}

/* (d) */
static void part_swap(ctx *c)
{
    long long old[ND];
    long long max_token = (long long)ND * c->size;
    /* origin and result buffers stay untouched until the flush */
    int tok[BATCH], o[BATCH];
    long long pair[BATCH], seen[BATCH];
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    for (int i = 0; i < ND; i += BATCH) {
        for (int j = 0; j < BATCH; j++) {
            tok[j] = c->rank * ND + i + j + 1;
            CHECK_MPI(MPI_Get_accumulate(&tok[j], 1, MPI_INT, &o[j], 1, MPI_INT, 0, disp(c, 0, OFF_SWAP), 1, MPI_INT,
                                         MPI_REPLACE, c->win));
            /* a 64-bit word with equal halves, replaced whole ... */
            pair[j] = ((long long)tok[j] << 32) | tok[j];
            CHECK_MPI(MPI_Accumulate(&pair[j], 1, MPI_LONG_LONG, 0, disp(c, 0, OFF_PAIR), 1, MPI_LONG_LONG, MPI_REPLACE,
                                     c->win));
            /* ... and read whole, by both forms of atomic read; ordered
             * after my own replace, so never the initial 0 */
            if (j % 2)
                CHECK_MPI(MPI_Fetch_and_op(NULL, &seen[j], MPI_LONG_LONG, 0, disp(c, 0, OFF_PAIR), MPI_NO_OP, c->win));
            else
                CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, &seen[j], 1, MPI_LONG_LONG, 0,
                                             disp(c, 0, OFF_PAIR), 1, MPI_LONG_LONG, MPI_NO_OP, c->win));
        }
        CHECK_MPI(MPI_Win_flush(0, c->win));
        for (int j = 0; j < BATCH; j++) {
            old[i + j] = o[j];
            long long hi = seen[j] >> 32, lo = seen[j] & 0xffffffffLL;
            CHECK(hi == lo && lo >= 1 && lo <= max_token, "atomic read of a pair gave 0x%llx",
                  (unsigned long long)seen[j]);
        }
    }
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    CHECK_MPI(MPI_Barrier(c->comm));
    /* the old values and the one left are 0 (the start) and every token */
    long long last = read_ll(c, 0, OFF_SWAP, MPI_INT);
    check_permutation(c, old, ND, 0, last, "MPI_Get_accumulate(MPI_REPLACE) swap");
    pass(c, "MPI_Get_accumulate swap (MPI_REPLACE) and atomic read (MPI_NO_OP)");
}

/* (e) */
static void part_arrays(ctx *c)
{
    double vec[NVEC];
    static long long big[NBIG];
    for (int k = 0; k < NVEC; k++) vec[k] = c->rank + 1 + k;
    for (int k = 0; k < NBIG; k++) big[k] = ((long long)(c->rank + 1) << 20) + k;
    MPI_Datatype vtype;
    CHECK_MPI(MPI_Type_contiguous(NVEC, MPI_DOUBLE, &vtype));
    CHECK_MPI(MPI_Type_commit(&vtype));
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    for (int i = 0; i < NE; i++) {
        for (int j = 0; j < c->size; j++) {
            int t = (c->rank + i + j) % c->size;
            if (i % 2)
                CHECK_MPI(MPI_Accumulate(vec, NVEC, MPI_DOUBLE, t, disp(c, t, OFF_VEC), 1, vtype, MPI_SUM, c->win));
            else
                CHECK_MPI(
                    MPI_Accumulate(vec, NVEC, MPI_DOUBLE, t, disp(c, t, OFF_VEC), NVEC, MPI_DOUBLE, MPI_SUM, c->win));
            if (i % 3 == 0)
                CHECK_MPI(MPI_Accumulate(big, NBIG, MPI_LONG_LONG, t, disp(c, t, OFF_BIG), NBIG, MPI_LONG_LONG, MPI_SUM,
                                         c->win));
        }
        if (i % 4 == 3) CHECK_MPI(MPI_Win_flush_all(c->win));
    }
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    CHECK_MPI(MPI_Barrier(c->comm));
    /* each rank checks its own part */
    double got[NVEC];
    static long long gotbig[NBIG];
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, c->rank, 0, c->win));
    CHECK_MPI(MPI_Get(got, NVEC, MPI_DOUBLE, c->rank, disp(c, c->rank, OFF_VEC), NVEC, MPI_DOUBLE, c->win));
    CHECK_MPI(MPI_Get(gotbig, NBIG, MPI_LONG_LONG, c->rank, disp(c, c->rank, OFF_BIG), NBIG, MPI_LONG_LONG, c->win));
    CHECK_MPI(MPI_Win_unlock(c->rank, c->win));
    long long n = c->size, ranks_sum = n * (n + 1) / 2, big_rounds = (NE + 2) / 3;
    for (int k = 0; k < NVEC; k++) {
        double want = (double)NE * (double)(ranks_sum + n * k);
        CHECK(got[k] == want, "element %d of the double array is %.1f, expected %.1f", k, got[k], want);
    }
    for (int k = 0; k < NBIG; k++) {
        long long want = big_rounds * ((ranks_sum << 20) + n * k);
        CHECK(gotbig[k] == want, "element %d of the long long array is %lld, expected %lld", k, gotbig[k], want);
    }
    CHECK_MPI(MPI_Type_free(&vtype));
    CHECK_MPI(MPI_Barrier(c->comm));
    pass(c, "element-wise atomic MPI_Accumulate of arrays onto every rank");
}

static unsigned long long pattern(int rank, int i)
{
    unsigned long long x = (unsigned long long)(rank * 7919 + i * 104729 + 1) * 0x9e3779b97f4a7c15ULL;
    return (x >> 20) & 0xffffffffULL; /* below 2^32 */
}

/* (f) */
/* (g) value-index pairs: MPI_MINLOC on MPI_DOUBLE_INT (a pair with
 * padding) and MPI_MAXLOC on MPI_2INT with ties (the lowest index wins),
 * from every rank onto rank 0, then read back atomically. */
static void part_loc(ctx *c)
{
    struct {
        double v;
        int i;
    } dl = {-(double)c->rank, c->rank}, dread = {99.0, 99};
    struct {
        int v, i;
    } il = {c->rank % 2, c->rank}, iread = {99, 99};
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    CHECK_MPI(MPI_Accumulate(&dl, 1, MPI_DOUBLE_INT, 0, disp(c, 0, OFF_DLOC), 1, MPI_DOUBLE_INT, MPI_MINLOC, c->win));
    CHECK_MPI(MPI_Accumulate(&il, 1, MPI_2INT, 0, disp(c, 0, OFF_ILOC), 1, MPI_2INT, MPI_MAXLOC, c->win));
    CHECK_MPI(MPI_Win_flush_all(c->win));
    CHECK_MPI(MPI_Barrier(c->comm));
    CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE_INT, &dread, 1, MPI_DOUBLE_INT, 0, disp(c, 0, OFF_DLOC), 1,
                                 MPI_DOUBLE_INT, MPI_NO_OP, c->win));
    CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_2INT, &iread, 1, MPI_2INT, 0, disp(c, 0, OFF_ILOC), 1, MPI_2INT,
                                 MPI_NO_OP, c->win));
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    CHECK_MPI(MPI_Barrier(c->comm));
    /* the window starts zeroed: (0.0, 0) and (0, 0) take part too */
    double vmin = -(double)(c->size - 1);
    CHECK(dread.v == vmin && dread.i == c->size - 1, "MPI_MINLOC on MPI_DOUBLE_INT: (%g, %d), expected (%g, %d)",
          dread.v, dread.i, vmin, c->size - 1);
    int vmax = c->size > 1 ? 1 : 0, imax = c->size > 1 ? 1 : 0;
    CHECK(iread.v == vmax && iread.i == imax, "MPI_MAXLOC on MPI_2INT: (%d, %d), expected (%d, %d)", iread.v, iread.i,
          vmax, imax);
    pass(c, "MPI_MINLOC and MPI_MAXLOC accumulate value-index pairs");
}

static void part_mixed(ctx *c)
{
    long long n = c->size;
    long long after_sum = NF * n * (n + 1) / 2;
    unsigned long long xor_all = 0;
    for (int r = 0; r < c->size; r++)
        for (int i = 0; i < NF; i++) xor_all ^= pattern(r, i);
    long long after_xor = (long long)((unsigned long long)after_sum ^ xor_all);
    long long max_base = 1LL << 40; /* above anything the first phases leave */
    long long after_max = max_base + (n - 1) * NF + NF - 1;
    long long or_bits = 0;
    for (int r = 0; r < c->size; r++) or_bits |= 1LL << (48 + r % 8);
    long long after_or = after_max | or_bits;
    /* origin and result buffers of calls in flight are never reused before
     * the flush that completes them */
    long long in[NF], out[NF];

    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    /* phase 1: MPI_SUM; odd ranks also read with MPI_NO_OP now and then and
     * must never see the value go down */
    long long add = c->rank + 1, last_seen = 0;
    for (int i = 0; i < NF; i++) {
        CHECK_MPI(MPI_Accumulate(&add, 1, MPI_LONG_LONG, 0, disp(c, 0, OFF_MIX), 1, MPI_LONG_LONG, MPI_SUM, c->win));
        if (c->rank % 2 && i % 20 == 19) {
            long long v = -1;
            CHECK_MPI(MPI_Fetch_and_op(NULL, &v, MPI_LONG_LONG, 0, disp(c, 0, OFF_MIX), MPI_NO_OP, c->win));
            CHECK_MPI(MPI_Win_flush(0, c->win));
            CHECK(v >= last_seen + 20 * add && v <= after_sum,
                  "MPI_NO_OP read %lld after %lld (20 adds of %lld since, total %lld)", v, last_seen, add, after_sum);
            last_seen = v;
        }
    }
    CHECK_MPI(MPI_Win_flush(0, c->win));
    CHECK_MPI(MPI_Barrier(c->comm));
    /* phase 2: MPI_BXOR */
    for (int i = 0; i < NF; i++) {
        in[i] = (long long)pattern(c->rank, i);
        CHECK_MPI(MPI_Accumulate(&in[i], 1, MPI_LONG_LONG, 0, disp(c, 0, OFF_MIX), 1, MPI_LONG_LONG, MPI_BXOR, c->win));
    }
    CHECK_MPI(MPI_Win_flush(0, c->win));
    CHECK_MPI(MPI_Barrier(c->comm));
    if (c->rank == 0) {
        long long v = -1;
        CHECK_MPI(MPI_Fetch_and_op(NULL, &v, MPI_LONG_LONG, 0, disp(c, 0, OFF_MIX), MPI_NO_OP, c->win));
        CHECK_MPI(MPI_Win_flush(0, c->win));
        CHECK(v == after_xor, "after the MPI_BXOR phase: 0x%llx, expected 0x%llx", (unsigned long long)v,
              (unsigned long long)after_xor);
    }
    CHECK_MPI(MPI_Barrier(c->comm));
    /* phase 3: MPI_MAX, with Get_accumulate so that the old values are
     * checked too: the value before the phase or one of the maxima */
    for (int i = 0; i < NF; i++) {
        in[i] = max_base + c->rank * NF + i;
        out[i] = -1;
        CHECK_MPI(MPI_Get_accumulate(&in[i], 1, MPI_LONG_LONG, &out[i], 1, MPI_LONG_LONG, 0, disp(c, 0, OFF_MIX), 1,
                                     MPI_LONG_LONG, MPI_MAX, c->win));
        if (i % 20 == 19) CHECK_MPI(MPI_Win_flush(0, c->win));
    }
    CHECK_MPI(MPI_Win_flush(0, c->win));
    for (int i = 0; i < NF; i++) {
        CHECK(out[i] == after_xor || (out[i] >= max_base && out[i] <= after_max), "MPI_MAX phase: old value %lld",
              out[i]);
        /* ordered after my own earlier, smaller maxima */
        if (i > 0)
            CHECK(out[i] >= in[i - 1], "MPI_MAX phase: old value %lld below my previous %lld", out[i], in[i - 1]);
    }
    CHECK_MPI(MPI_Barrier(c->comm));
    /* phase 4: MPI_BOR of one bit per rank (ranks r and r+8 share one) */
    long long bit = 1LL << (48 + c->rank % 8);
    for (int i = 0; i < NF / 4; i++)
        CHECK_MPI(MPI_Accumulate(&bit, 1, MPI_LONG_LONG, 0, disp(c, 0, OFF_MIX), 1, MPI_LONG_LONG, MPI_BOR, c->win));
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    CHECK_MPI(MPI_Barrier(c->comm));
    CHECK_EQ(read_ll(c, 0, OFF_MIX, MPI_LONG_LONG), after_or);
    pass(c, "MPI_SUM with MPI_NO_OP readers, then MPI_BXOR, MPI_MAX, MPI_BOR on one location");
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    for (int f = 0; f < NFLAVORS; f++) {
        ctx c;
        open_win(&c, f);
        part_sum(&c);
        part_fetch_and_op(&c);
        part_spinlock(&c);
        part_swap(&c);
        part_arrays(&c);
        part_mixed(&c);
        part_loc(&c);
        close_win(&c);
    }
    CHECK_MPI(MPI_Finalize());
    return 0;
}
