/* Passive-target locks under contention: many rounds of MPI_Win_lock from
 * every rank, shared and exclusive mixed, must exclude each other the way
 * MPI-4.1 section 12.5.3 says (an exclusive lock excludes every other lock
 * on the target, shared locks exclude only exclusive ones).
 *
 * Each rank's window holds a counter and a copy of it. An exclusive holder
 * reads both, checks a few times (MPI_Get + flush) that nobody changes them
 * while it holds the lock, then raises them with two separately flushed
 * MPI_Puts, so for a moment they differ. Shared holders only read: the two
 * words must be equal (nobody is between the two puts), must not change
 * while the lock is held, and never go down from one epoch to the next. At
 * the end each counter equals the number of exclusive epochs on it.
 *
 * Rounds target rank 0 (all contend for one lock), then a rotating target;
 * then one rank's MPI_Win_lock_all epochs interleave with the other ranks'
 * exclusive locks; then locks on two targets are held at once (taken in
 * ascending rank order so that no cycle of waits can form, released in
 * either order); then MPI_MODE_NOCHECK where the program guarantees there
 * is no conflict (after a barrier, each rank locks only itself; all take
 * MPI_Win_lock_all while nobody holds an exclusive lock). On windows from
 * MPI_Win_allocate and MPI_Win_create. */
#include "mpitest.h"

/* Fixed totals over all ranks: each epoch is several round trips to a
 * target that may have to be scheduled first, so the work per rank shrinks
 * as ranks are added (at least MIN_ROUNDS each). */
#define R_ONE 48     /* epochs on rank 0 */
#define R_ROT 48     /* epochs on rotating targets */
#define R_ALL 32     /* lock_all / exclusive epochs */
#define R_TWO 32     /* two-target epochs */
#define MIN_ROUNDS 4 /* per rank and part */
#define VERIFY 2     /* re-reads while holding a lock */
#define NOCHECK 8    /* rounds with MPI_MODE_NOCHECK, per rank */

/* four words: MPICH 4.0.2 reads a remote part of an MPI_Win_allocate
 * window 8 bytes off when the size is not a multiple of 16 */
enum { W_CNT, W_COPY, W_SCRATCH, W_PAD, NWORDS };

typedef struct {
    MPI_Win win;
    int rank, size;
    long long *last_seen; /* per target: the counter as I last saw it */
    long long *excl;      /* per target: my exclusive epochs on it */
    const char *flavor;
} ctx;

static int rounds(const ctx *c, int total)
{
    int r = total / c->size;
    return r < MIN_ROUNDS ? MIN_ROUNDS : r;
}

/* Reads counter and copy of target t; they must be equal. */
static long long read_pair(const ctx *c, int t, const char *where)
{
    long long p[2] = {-1, -1};
    CHECK_MPI(MPI_Get(p, 2, MPI_LONG_LONG, t, W_CNT, 2, MPI_LONG_LONG, c->win));
    CHECK_MPI(MPI_Win_flush(t, c->win));
    CHECK(p[0] == p[1], "%s on %d: counter %lld and copy %lld differ (%s)", where, t, p[0], p[1], c->flavor);
    CHECK(p[0] >= c->last_seen[t], "%s on %d: counter %lld went down from %lld (%s)", where, t, p[0], c->last_seen[t],
          c->flavor);
    return p[0];
}

/* Under MPI_Win_lock_all: every target's pair, all in flight at once. */
static void read_all_pairs(const ctx *c, long long *v, const char *where)
{
    long long *p = malloc(sizeof(long long) * 2 * (size_t)c->size);
    for (int t = 0; t < c->size; t++) {
        p[2 * t] = p[2 * t + 1] = -1;
        CHECK_MPI(MPI_Get(&p[2 * t], 2, MPI_LONG_LONG, t, W_CNT, 2, MPI_LONG_LONG, c->win));
    }
    CHECK_MPI(MPI_Win_flush_all(c->win));
    for (int t = 0; t < c->size; t++) {
        CHECK(p[2 * t] == p[2 * t + 1], "%s on %d: counter %lld and copy %lld differ (%s)", where, t, p[2 * t],
              p[2 * t + 1], c->flavor);
        CHECK(p[2 * t] >= c->last_seen[t], "%s on %d: counter %lld went down from %lld (%s)", where, t, p[2 * t],
              c->last_seen[t], c->flavor);
        v[t] = p[2 * t];
    }
    free(p);
}

/* Under a lock on t (of either type) the pair must stay v. */
static void hold_still(const ctx *c, int t, long long v, const char *where)
{
    for (int k = 0; k < VERIFY; k++) {
        long long again = read_pair(c, t, where);
        CHECK(again == v, "%s on %d: counter changed from %lld to %lld under my lock (%s)", where, t, v, again,
              c->flavor);
    }
}

/* The body of an exclusive epoch on t, the lock already held. */
static void bump(ctx *c, int t)
{
    long long v = read_pair(c, t, "exclusive");
    hold_still(c, t, v, "exclusive");
    long long next = v + 1;
    /* two separate, completed puts: between them the words differ */
    CHECK_MPI(MPI_Put(&next, 1, MPI_LONG_LONG, t, W_CNT, 1, MPI_LONG_LONG, c->win));
    CHECK_MPI(MPI_Win_flush(t, c->win));
    CHECK_MPI(MPI_Put(&next, 1, MPI_LONG_LONG, t, W_COPY, 1, MPI_LONG_LONG, c->win));
    CHECK_MPI(MPI_Win_flush(t, c->win));
    c->last_seen[t] = read_pair(c, t, "exclusive, after the update");
    CHECK(c->last_seen[t] == next, "exclusive on %d: wrote %lld, read back %lld (%s)", t, next, c->last_seen[t],
          c->flavor);
    c->excl[t]++;
}

/* The body of a shared epoch on t, the lock already held. */
static void look(ctx *c, int t)
{
    long long v = read_pair(c, t, "shared");
    hold_still(c, t, v, "shared");
    c->last_seen[t] = v;
}

static void epoch(ctx *c, int t, int exclusive)
{
    CHECK_MPI(MPI_Win_lock(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t, 0, c->win));
    if (exclusive) bump(c, t);
    else look(c, t);
    CHECK_MPI(MPI_Win_unlock(t, c->win));
}

static void pass(const ctx *c, const char *what)
{
    char s[256];
    snprintf(s, sizeof s, "%s (%s)", what, c->flavor);
    mt_pass(s);
}

static void one_target(ctx *c)
{
    int n = rounds(c, R_ONE);
    for (int i = 0; i < n; i++) epoch(c, 0, (i + c->rank) % 3 == 0);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    pass(c, "shared and exclusive MPI_Win_lock from every rank on rank 0");
}

static void rotating(ctx *c)
{
    int n = rounds(c, R_ROT);
    for (int i = 0; i < n; i++) epoch(c, (c->rank + i) % c->size, (i * 7 + c->rank) % 3 == 0);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    pass(c, "shared and exclusive MPI_Win_lock on a rotating target");
}

/* Rank 0 takes MPI_Win_lock_all and reads every target twice; the others
 * meanwhile take exclusive locks on one target at a time. One lock_all
 * holder only: lock_all takes its shared locks target by target, in no
 * order the standard fixes, so two holders (one holding A and waiting for
 * B, the other holding B and waiting for A, exclusive requests queued at
 * both) may wait on each other for good. With every even rank taking
 * lock_all, MPICH 4.0.2 hung in this part in 3 of 8 runs at 4 processes;
 * whether MPI must prevent that is an open question of interpretation. */
static void lock_all_vs_exclusive(ctx *c)
{
    int n = rounds(c, R_ALL);
    long long *v = malloc(sizeof(long long) * (size_t)c->size), *again = malloc(sizeof(long long) * (size_t)c->size);
    for (int i = 0; i < n; i++) {
        if (c->rank == 0) {
            CHECK_MPI(MPI_Win_lock_all(0, c->win));
            read_all_pairs(c, v, "lock_all");
            for (int k = 0; k < VERIFY; k++) {
                read_all_pairs(c, again, "lock_all");
                for (int t = 0; t < c->size; t++)
                    CHECK(again[t] == v[t], "lock_all: counter of %d changed from %lld to %lld under my lock (%s)", t,
                          v[t], again[t], c->flavor);
            }
            for (int t = 0; t < c->size; t++) c->last_seen[t] = v[t];
            CHECK_MPI(MPI_Win_unlock_all(c->win));
        } else {
            epoch(c, (c->rank + i) % c->size, 1);
        }
    }
    free(v);
    free(again);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    pass(c, "MPI_Win_lock_all interleaved with other ranks' exclusive locks");
}

/* Two targets locked at once: the lower rank first, each lock made real by
 * a read and flush before the next is requested, released in either order. */
static void two_targets(ctx *c)
{
    if (c->size < 2) return;
    int n = rounds(c, R_TWO);
    for (int i = 0; i < n; i++) {
        int a = (c->rank + i) % c->size;
        int b = (a + 1 + i % (c->size - 1)) % c->size;
        int lo = a < b ? a : b, hi = a < b ? b : a;
        int xlo = (i + c->rank) % 3 == 0, xhi = (i + 2 * c->rank) % 4 == 1;
        CHECK_MPI(MPI_Win_lock(xlo ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, lo, 0, c->win));
        long long vlo = read_pair(c, lo, "first of two");
        CHECK_MPI(MPI_Win_lock(xhi ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, hi, 0, c->win));
        long long vhi = read_pair(c, hi, "second of two");
        /* the first lock still holds while the second is held */
        hold_still(c, lo, vlo, "first of two");
        if (xhi) {
            bump(c, hi);
        } else {
            hold_still(c, hi, vhi, "second of two");
            c->last_seen[hi] = vhi;
        }
        if (xlo) bump(c, lo);
        else c->last_seen[lo] = vlo;
        if (i % 2) {
            CHECK_MPI(MPI_Win_unlock(lo, c->win));
            CHECK_MPI(MPI_Win_unlock(hi, c->win));
        } else {
            CHECK_MPI(MPI_Win_unlock(hi, c->win));
            CHECK_MPI(MPI_Win_unlock(lo, c->win));
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    pass(c, "locks on two targets held at once, released in either order");
}

static void nocheck(ctx *c)
{
    int right = (c->rank + 1) % c->size;
    for (int i = 0; i < NOCHECK; i++) {
        /* between the barriers each rank locks only itself */
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        long long mark = 1000LL * c->rank + i, got = -1;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, MPI_MODE_NOCHECK, c->win));
        CHECK_MPI(MPI_Put(&mark, 1, MPI_LONG_LONG, c->rank, W_SCRATCH, 1, MPI_LONG_LONG, c->win));
        CHECK_MPI(MPI_Win_flush(c->rank, c->win));
        CHECK_MPI(MPI_Get(&got, 1, MPI_LONG_LONG, c->rank, W_SCRATCH, 1, MPI_LONG_LONG, c->win));
        CHECK_MPI(MPI_Win_unlock(c->rank, c->win));
        CHECK(got == mark, "NOCHECK lock on myself: wrote %lld, read %lld (%s)", mark, got, c->flavor);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        /* then only shared access: lock_all and a shared lock, both NOCHECK */
        long long seen = -1;
        if (i % 2) {
            CHECK_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, c->win));
            long long *v = malloc(sizeof(long long) * (size_t)c->size);
            read_all_pairs(c, v, "NOCHECK lock_all");
            free(v);
            CHECK_MPI(MPI_Get(&seen, 1, MPI_LONG_LONG, right, W_SCRATCH, 1, MPI_LONG_LONG, c->win));
            CHECK_MPI(MPI_Win_unlock_all(c->win));
        } else {
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOCHECK, c->win));
            read_pair(c, right, "NOCHECK shared");
            CHECK_MPI(MPI_Get(&seen, 1, MPI_LONG_LONG, right, W_SCRATCH, 1, MPI_LONG_LONG, c->win));
            CHECK_MPI(MPI_Win_unlock(right, c->win));
        }
        CHECK(seen == 1000LL * right + i, "NOCHECK: rank %d's mark is %lld, expected %lld (%s)", right, seen,
              1000LL * right + i, c->flavor);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    pass(c, "MPI_MODE_NOCHECK locks where no conflict can arise");
}

static void run(int use_create)
{
    ctx c;
    memset(&c, 0, sizeof c);
    c.rank = mt_rank(MPI_COMM_WORLD);
    c.size = mt_size(MPI_COMM_WORLD);
    c.flavor = use_create ? "MPI_Win_create" : "MPI_Win_allocate";
    c.last_seen = calloc((size_t)c.size, sizeof(long long));
    c.excl = calloc((size_t)c.size, sizeof(long long));
    long long *base = NULL, *mem = NULL;
    MPI_Aint bytes = NWORDS * sizeof(long long);
    if (use_create) {
        mem = calloc(NWORDS, sizeof(long long));
        base = mem;
        CHECK_MPI(MPI_Win_create(base, bytes, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &c.win));
    } else {
        CHECK_MPI(MPI_Win_allocate(bytes, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &c.win));
    }
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c.rank, 0, c.win));
    for (int k = 0; k < NWORDS; k++) base[k] = 0;
    CHECK_MPI(MPI_Win_unlock(c.rank, c.win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    one_target(&c);
    rotating(&c);
    lock_all_vs_exclusive(&c);
    two_targets(&c);
    nocheck(&c);

    /* every exclusive epoch raised its target's counter by one, no more */
    long long *total = malloc(sizeof(long long) * (size_t)c.size);
    CHECK_MPI(MPI_Allreduce(c.excl, total, c.size, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    long long p[2] = {-1, -1};
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, c.rank, 0, c.win));
    CHECK_MPI(MPI_Get(p, 2, MPI_LONG_LONG, c.rank, W_CNT, 2, MPI_LONG_LONG, c.win));
    CHECK_MPI(MPI_Win_unlock(c.rank, c.win));
    CHECK(p[0] == total[c.rank] && p[1] == total[c.rank], "counter %lld and copy %lld, exclusive epochs %lld (%s)",
          p[0], p[1], total[c.rank], c.flavor);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    pass(&c, "every counter equals the number of exclusive epochs on it");
    CHECK_MPI(MPI_Win_free(&c.win));
    free(mem);
    free(total);
    free(c.last_seen);
    free(c.excl);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    run(0);
    run(1);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
