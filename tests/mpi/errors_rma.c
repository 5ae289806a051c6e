/* LMTEST-LEANMPI-ONLY: checks the classes LeanMPI gives erroneous RMA calls
 * (synchronisation misuse, ranges, lock types, asserts) where the standard
 * leaves the class or the detection open.
 *
 * Bad input to RMA communication and synchronisation under
 * MPI_ERRORS_RETURN (on the window, and on MPI_COMM_WORLD/MPI_COMM_SELF for
 * calls on a freed handle). After each group of errors:
 *  - each erroneous call returned its class and did nothing: every rank's
 *    window memory, and a guard zone right after it, still holds its
 *    sentinels;
 *  - no process hangs: an erroneous call is made either by every rank, or
 *    by rank 0 alone while the others wait in a barrier;
 *  - a failed call left no epoch behind (the calls that would need one
 *    still fail with MPI_ERR_RMA_SYNC) and did not end the one it was made
 *    in (a correct call in the same epoch works);
 *  - the window is still usable: a put to the right neighbour and a get of
 *    what the left one put carry the right values.
 * Run at 1, 2 and 4 processes. Every rank's part of the window has a
 * different size, so a range check must use the target's size, not the
 * caller's. */
#include "mpitest.h"
#include <limits.h>

#define WIN_INTS 16 /* rank r exposes WIN_INTS + r ints */
#define GUARD 8     /* ints after the window, never to be written */
#define SCRATCH 0   /* the one int correct calls write; the rest are sentinels */
#define BAD_ASSERT (1 << 30)

typedef struct {
    MPI_Win win;
    int rank, size, left, right;
    int *buf;    /* WIN_INTS + rank + GUARD ints, the first WIN_INTS + rank exposed */
    int scratch; /* what my scratch int must hold */
    int seq;     /* rounds of the usability check */
} ctx;

static int nints(int r) { return WIN_INTS + r; }
static int sentinel(int r, int i) { return 0x5e000000 + 1000 * r + i; }

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

/* Every rank's memory is as it was: the scratch int holds what correct
 * calls put there, everything else its sentinel, the guard zone included. */
static void check_memory(ctx *c, const char *after)
{
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, c->rank, 0, c->win));
    CHECK(c->buf[SCRATCH] == c->scratch, "after %s: scratch int is %d, expected %d", after, c->buf[SCRATCH],
          c->scratch);
    for (int i = 1; i < nints(c->rank) + GUARD; i++)
        CHECK(c->buf[i] == sentinel(c->rank, i), "after %s: int %d of my %s is 0x%x, expected 0x%x", after, i,
              i < nints(c->rank) ? "window" : "guard zone", c->buf[i], sentinel(c->rank, i));
    CHECK_MPI(MPI_Win_unlock(c->rank, c->win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* A correct put and get through the window still work. */
static void usable(ctx *c, const char *after)
{
    c->seq++;
    int out = 100 * c->seq + c->rank, in = -1, far = -1;
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    CHECK_MPI(MPI_Put(&out, 1, MPI_INT, c->right, SCRATCH, 1, MPI_INT, c->win));
    CHECK_MPI(MPI_Win_flush(c->right, c->win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Get(&in, 1, MPI_INT, c->rank, SCRATCH, 1, MPI_INT, c->win));
    /* the right neighbour's last int: its size, not mine, bounds it */
    CHECK_MPI(MPI_Get(&far, 1, MPI_INT, c->right, nints(c->right) - 1, 1, MPI_INT, c->win));
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    c->scratch = 100 * c->seq + c->left;
    CHECK(in == c->scratch, "after %s: my scratch int holds %d, expected %d from rank %d", after, in, c->scratch,
          c->left);
    CHECK(far == sentinel(c->right, nints(c->right) - 1), "after %s: last int of rank %d is 0x%x", after, c->right,
          far);
    check_memory(c, after);
}

/* Calls that need an access epoch, made outside any: MPI_ERR_RMA_SYNC. */
static void no_epoch(ctx *c, const char *when)
{
    int x = 7, r = -1, cmp = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    int t = c->right, d = 1;
    MPI_Win w = c->win;
    CHECK_ERRCLASS(MPI_Put(&x, 1, MPI_INT, t, d, 1, MPI_INT, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Get(&r, 1, MPI_INT, t, d, 1, MPI_INT, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Accumulate(&x, 1, MPI_INT, t, d, 1, MPI_INT, MPI_SUM, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Get_accumulate(&x, 1, MPI_INT, &r, 1, MPI_INT, t, d, 1, MPI_INT, MPI_SUM, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Fetch_and_op(&x, &r, MPI_INT, t, d, MPI_SUM, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Compare_and_swap(&x, &cmp, &r, MPI_INT, t, d, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Rput(&x, 1, MPI_INT, t, d, 1, MPI_INT, w, &req), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Rget(&r, 1, MPI_INT, t, d, 1, MPI_INT, w, &req), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Raccumulate(&x, 1, MPI_INT, t, d, 1, MPI_INT, MPI_SUM, w, &req), MPI_ERR_RMA_SYNC);
    CHECK(req == MPI_REQUEST_NULL, "%s: a failed request-based call gave a request", when);
    /* flushes outside a passive-target epoch */
    CHECK_ERRCLASS(MPI_Win_flush(t, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Win_flush_all(w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Win_flush_local(t, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Win_flush_local_all(w), MPI_ERR_RMA_SYNC);
    /* ends of epochs that were never started */
    CHECK_ERRCLASS(MPI_Win_unlock(t, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Win_unlock_all(w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Win_complete(w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Win_wait(w), MPI_ERR_RMA_SYNC);
    int flag = -1;
    CHECK_ERRCLASS(MPI_Win_test(w, &flag), MPI_ERR_RMA_SYNC);
}

/* Rank 0 alone misuses passive-target synchronisation on the last rank
 * while the others wait in a barrier. */
static void lock_misuse(ctx *c)
{
    if (c->rank == 0) {
        int t = c->size - 1, x = 1, r = -1;
        MPI_Win w = c->win;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w));
        CHECK_ERRCLASS(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Win_lock_all(0, w), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Win_unlock_all(w), MPI_ERR_RMA_SYNC);
        if (c->size > 1) {
            /* rank 0 itself is not locked: no epoch to it */
            CHECK_ERRCLASS(MPI_Win_unlock(0, w), MPI_ERR_RMA_SYNC);
            CHECK_ERRCLASS(MPI_Put(&x, 1, MPI_INT, 0, 1, 1, MPI_INT, w), MPI_ERR_RMA_SYNC);
            CHECK_ERRCLASS(MPI_Win_flush(0, w), MPI_ERR_RMA_SYNC);
        }
        /* the epoch on t survived all that */
        CHECK_MPI(MPI_Get(&r, 1, MPI_INT, t, 1, 1, MPI_INT, w));
        CHECK_MPI(MPI_Win_flush(t, w));
        CHECK_EQ(r, sentinel(t, 1));
        CHECK_MPI(MPI_Win_unlock(t, w));
        CHECK_ERRCLASS(MPI_Win_unlock(t, w), MPI_ERR_RMA_SYNC);

        CHECK_MPI(MPI_Win_lock_all(0, w));
        CHECK_ERRCLASS(MPI_Win_lock_all(0, w), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Win_unlock(t, w), MPI_ERR_RMA_SYNC); /* lock_all ends with unlock_all only */
        r = -1;
        CHECK_MPI(MPI_Get(&r, 1, MPI_INT, t, 2, 1, MPI_INT, w));
        CHECK_MPI(MPI_Win_flush_all(w));
        CHECK_EQ(r, sentinel(t, 2));
        CHECK_MPI(MPI_Win_unlock_all(w));
        CHECK_ERRCLASS(MPI_Win_unlock_all(w), MPI_ERR_RMA_SYNC);
        no_epoch(c, "passive-target misuse");
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    usable(c, "passive-target misuse by one rank");
    mt_pass("second lock, unlock without lock, unlock_all without lock_all (MPI_ERR_RMA_SYNC)");
}

/* Argument errors inside a valid MPI_Win_lock_all epoch, on every rank. */
static void bad_arguments(ctx *c)
{
    MPI_Win w = c->win;
    int t = c->right, nt = nints(t);
    int x = 1, two[2] = {1, 1}, r = -1, rr[2], cmp = 0;
    double dx = 1.0, dcmp = 0.0, dr = -1.0;
    float fx = 1.0f, fcmp = 0.0f, fr = -1.0f;
    MPI_Request req = MPI_REQUEST_NULL;
    CHECK_MPI(MPI_Win_lock_all(0, w));

    /* target rank out of range */
    int bad_ranks[3] = {c->size, -7, INT_MIN};
    for (int k = 0; k < 3; k++) {
        int b = bad_ranks[k];
        CHECK_ERRCLASS(MPI_Put(&x, 1, MPI_INT, b, 1, 1, MPI_INT, w), MPI_ERR_RANK);
        CHECK_ERRCLASS(MPI_Get(&r, 1, MPI_INT, b, 1, 1, MPI_INT, w), MPI_ERR_RANK);
        CHECK_ERRCLASS(MPI_Accumulate(&x, 1, MPI_INT, b, 1, 1, MPI_INT, MPI_SUM, w), MPI_ERR_RANK);
        CHECK_ERRCLASS(MPI_Get_accumulate(&x, 1, MPI_INT, &r, 1, MPI_INT, b, 1, 1, MPI_INT, MPI_SUM, w), MPI_ERR_RANK);
        CHECK_ERRCLASS(MPI_Fetch_and_op(&x, &r, MPI_INT, b, 1, MPI_SUM, w), MPI_ERR_RANK);
        CHECK_ERRCLASS(MPI_Compare_and_swap(&x, &cmp, &r, MPI_INT, b, 1, w), MPI_ERR_RANK);
        CHECK_ERRCLASS(MPI_Rput(&x, 1, MPI_INT, b, 1, 1, MPI_INT, w, &req), MPI_ERR_RANK);
        CHECK_ERRCLASS(MPI_Win_flush(b, w), MPI_ERR_RANK);
        CHECK_ERRCLASS(MPI_Win_flush_local(b, w), MPI_ERR_RANK);
        CHECK_ERRCLASS(MPI_Win_lock(MPI_LOCK_SHARED, b, 0, w), MPI_ERR_RANK);
        CHECK_ERRCLASS(MPI_Win_unlock(b, w), MPI_ERR_RANK);
    }
    /* MPI_PROC_NULL is a valid target that nothing happens to */
    CHECK_MPI(MPI_Put(&x, 1, MPI_INT, MPI_PROC_NULL, 1, 1, MPI_INT, w));
    CHECK_MPI(MPI_Accumulate(&x, 1, MPI_INT, MPI_PROC_NULL, 1, 1, MPI_INT, MPI_SUM, w));
    r = -1;
    CHECK_MPI(MPI_Get(&r, 1, MPI_INT, MPI_PROC_NULL, 1, 1, MPI_INT, w));
    CHECK_MPI(MPI_Win_flush_all(w));
    CHECK_EQ(r, -1);

    /* beyond the end of the target's part: MPI_ERR_RMA_RANGE (the right
     * neighbour's part may be longer or, for the last rank, shorter than
     * mine) */
    CHECK_ERRCLASS(MPI_Put(&x, 1, MPI_INT, t, nt, 1, MPI_INT, w), MPI_ERR_RMA_RANGE);
    CHECK_ERRCLASS(MPI_Put(two, 2, MPI_INT, t, nt - 1, 2, MPI_INT, w), MPI_ERR_RMA_RANGE);
    CHECK_ERRCLASS(MPI_Get(rr, 2, MPI_INT, t, nt - 1, 2, MPI_INT, w), MPI_ERR_RMA_RANGE);
    CHECK_ERRCLASS(MPI_Get(&r, 1, MPI_INT, t, nt + 1000, 1, MPI_INT, w), MPI_ERR_RMA_RANGE);
    CHECK_ERRCLASS(MPI_Accumulate(&x, 1, MPI_INT, t, nt, 1, MPI_INT, MPI_SUM, w), MPI_ERR_RMA_RANGE);
    CHECK_ERRCLASS(MPI_Accumulate(two, 2, MPI_INT, t, nt - 1, 2, MPI_INT, MPI_SUM, w), MPI_ERR_RMA_RANGE);
    CHECK_ERRCLASS(MPI_Get_accumulate(&x, 1, MPI_INT, &r, 1, MPI_INT, t, nt, 1, MPI_INT, MPI_SUM, w),
                   MPI_ERR_RMA_RANGE);
    CHECK_ERRCLASS(MPI_Fetch_and_op(&x, &r, MPI_INT, t, nt, MPI_SUM, w), MPI_ERR_RMA_RANGE);
    CHECK_ERRCLASS(MPI_Compare_and_swap(&x, &cmp, &r, MPI_INT, t, nt, w), MPI_ERR_RMA_RANGE);
    CHECK_ERRCLASS(MPI_Rput(&x, 1, MPI_INT, t, nt, 1, MPI_INT, w, &req), MPI_ERR_RMA_RANGE);
    /* a derived target type whose extent runs past the end */
    MPI_Datatype four;
    CHECK_MPI(MPI_Type_contiguous(4, MPI_INT, &four));
    CHECK_MPI(MPI_Type_commit(&four));
    int zeros[4] = {0, 0, 0, 0};
    CHECK_ERRCLASS(MPI_Put(zeros, 4, MPI_INT, t, nt - 3, 1, four, w), MPI_ERR_RMA_RANGE);
    CHECK_ERRCLASS(MPI_Accumulate(zeros, 4, MPI_INT, t, nt - 3, 1, four, MPI_SUM, w), MPI_ERR_RMA_RANGE);
    /* negative displacements are bad displacements before anything else */
    CHECK_ERRCLASS(MPI_Put(&x, 1, MPI_INT, t, -1, 1, MPI_INT, w), MPI_ERR_DISP);
    CHECK_ERRCLASS(MPI_Get(&r, 1, MPI_INT, t, -1, 1, MPI_INT, w), MPI_ERR_DISP);
    CHECK_ERRCLASS(MPI_Accumulate(&x, 1, MPI_INT, t, -4, 1, MPI_INT, MPI_SUM, w), MPI_ERR_DISP);
    /* an origin buffer that is not one, where the rest would be fine */
    CHECK_ERRCLASS(MPI_Put(NULL, 1, MPI_INT, t, 1, 1, MPI_INT, w), MPI_ERR_BUFFER);
    CHECK_ERRCLASS(MPI_Get(NULL, 1, MPI_INT, t, 1, 1, MPI_INT, w), MPI_ERR_BUFFER);
    CHECK_ERRCLASS(MPI_Put(MPI_IN_PLACE, 1, MPI_INT, t, 1, 1, MPI_INT, w), MPI_ERR_BUFFER);
    CHECK_ERRCLASS(MPI_Accumulate(NULL, 1, MPI_INT, t, 1, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    CHECK_ERRCLASS(MPI_Fetch_and_op(NULL, &r, MPI_INT, t, 1, MPI_SUM, w), MPI_ERR_BUFFER);
    CHECK_ERRCLASS(MPI_Fetch_and_op(&x, NULL, MPI_INT, t, 1, MPI_SUM, w), MPI_ERR_BUFFER);
    CHECK_ERRCLASS(MPI_Fetch_and_op(MPI_IN_PLACE, &r, MPI_INT, t, 1, MPI_NO_OP, w), MPI_ERR_BUFFER);
    CHECK_ERRCLASS(MPI_Compare_and_swap(&x, NULL, &r, MPI_INT, t, 1, w), MPI_ERR_BUFFER);
    CHECK_ERRCLASS(MPI_Compare_and_swap(NULL, &cmp, &r, MPI_INT, t, 1, w), MPI_ERR_BUFFER);
    CHECK_ERRCLASS(MPI_Compare_and_swap(&x, &cmp, NULL, MPI_INT, t, 1, w), MPI_ERR_BUFFER);
    /* counts that do not describe the same bytes on both sides */
    CHECK_ERRCLASS(MPI_Put(two, 2, MPI_INT, t, 1, 1, MPI_INT, w), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Put(&x, -1, MPI_INT, t, 1, -1, MPI_INT, w), MPI_ERR_COUNT);
    /* the last int of the target is in range: reading it works */
    r = -1;
    CHECK_MPI(MPI_Get(&r, 1, MPI_INT, t, nt - 1, 1, MPI_INT, w));
    /* accumulating zeros through a derived type of one basic type is fine
     * (and changes nothing) */
    CHECK_MPI(MPI_Accumulate(zeros, 4, MPI_INT, t, nt - 4, 1, four, MPI_SUM, w));
    CHECK_MPI(MPI_Win_flush(t, w));
    CHECK_EQ(r, sentinel(t, nt - 1));

    /* negative counts */
    CHECK_ERRCLASS(MPI_Put(&x, -1, MPI_INT, t, 1, 1, MPI_INT, w), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Put(&x, 1, MPI_INT, t, 1, -1, MPI_INT, w), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Get(&r, -1, MPI_INT, t, 1, 1, MPI_INT, w), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Get(&r, 1, MPI_INT, t, 1, -2, MPI_INT, w), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Accumulate(&x, -1, MPI_INT, t, 1, 1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Accumulate(&x, 1, MPI_INT, t, 1, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Get_accumulate(&x, 1, MPI_INT, &r, -1, MPI_INT, t, 1, 1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);

    /* ops: user-defined ones and MPI_OP_NULL are not for RMA */
    MPI_Op uop;
    CHECK_MPI(MPI_Op_create(user_fn, 1, &uop));
    CHECK_ERRCLASS(MPI_Accumulate(&x, 1, MPI_INT, t, 1, 1, MPI_INT, uop, w), MPI_ERR_OP);
    CHECK_ERRCLASS(MPI_Get_accumulate(&x, 1, MPI_INT, &r, 1, MPI_INT, t, 1, 1, MPI_INT, uop, w), MPI_ERR_OP);
    CHECK_ERRCLASS(MPI_Fetch_and_op(&x, &r, MPI_INT, t, 1, uop, w), MPI_ERR_OP);
    CHECK_ERRCLASS(MPI_Accumulate(&x, 1, MPI_INT, t, 1, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP);
    CHECK_MPI(MPI_Op_free(&uop));

    /* datatypes: accumulate needs one basic type on both sides */
    MPI_Datatype mixed;
    struct {
        int i;
        double d;
    } s = {0, 0.0};
    int bl[2] = {1, 1};
    MPI_Aint disps[2] = {0, (MPI_Aint)((char *)&s.d - (char *)&s)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    CHECK_MPI(MPI_Type_create_struct(2, bl, disps, types, &mixed));
    CHECK_MPI(MPI_Type_commit(&mixed));
    CHECK_ERRCLASS(MPI_Accumulate(&s, 1, mixed, t, 1, 1, mixed, MPI_SUM, w), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Accumulate(&s, 1, mixed, t, 1, 1, mixed, MPI_REPLACE, w), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Get_accumulate(&s, 1, mixed, rr, 2, MPI_INT, t, 1, 1, mixed, MPI_SUM, w), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Accumulate(&x, 1, MPI_INT, t, 1, 1, MPI_FLOAT, MPI_SUM, w), MPI_ERR_TYPE);
    /* compare_and_swap: integer, logical, byte types only; fetch_and_op
     * and compare_and_swap: predefined types only */
    CHECK_ERRCLASS(MPI_Compare_and_swap(&dx, &dcmp, &dr, MPI_DOUBLE, t, 1, w), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Compare_and_swap(&fx, &fcmp, &fr, MPI_FLOAT, t, 1, w), MPI_ERR_TYPE);
    MPI_Datatype one_int;
    CHECK_MPI(MPI_Type_contiguous(1, MPI_INT, &one_int));
    CHECK_MPI(MPI_Type_commit(&one_int));
    CHECK_ERRCLASS(MPI_Compare_and_swap(&x, &cmp, &r, one_int, t, 1, w), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Fetch_and_op(&x, &r, one_int, t, 1, MPI_SUM, w), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Fetch_and_op(&s, &s, mixed, t, 1, MPI_SUM, w), MPI_ERR_TYPE);
    /* a compare_and_swap that does not match swaps nothing */
    cmp = sentinel(t, 1) + 1;
    r = -1;
    CHECK_MPI(MPI_Compare_and_swap(&x, &cmp, &r, MPI_INT, t, 1, w));
    CHECK_MPI(MPI_Win_flush(t, w));
    CHECK_EQ(r, sentinel(t, 1));
    CHECK(req == MPI_REQUEST_NULL, "a failed MPI_Rput gave a request");
    CHECK_MPI(MPI_Win_unlock_all(w));
    CHECK_MPI(MPI_Type_free(&mixed));
    CHECK_MPI(MPI_Type_free(&one_int));
    CHECK_MPI(MPI_Type_free(&four));
    usable(c, "bad arguments");
    mt_pass("bad rank, range, displacement, count, op and datatype inside an epoch");
}

/* Bad lock types and asserts, every rank: the failed call opens nothing. */
static void bad_sync_arguments(ctx *c)
{
    MPI_Win w = c->win;
    int t = c->right, x = 1;
    CHECK_ERRCLASS(MPI_Win_lock(12345, t, 0, w), MPI_ERR_LOCKTYPE);
    CHECK_ERRCLASS(MPI_Win_lock(-1, t, 0, w), MPI_ERR_LOCKTYPE);
    CHECK_ERRCLASS(MPI_Win_unlock(t, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Win_lock(MPI_LOCK_SHARED, t, BAD_ASSERT, w), MPI_ERR_ASSERT);
    CHECK_ERRCLASS(MPI_Win_unlock(t, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Win_lock_all(BAD_ASSERT, w), MPI_ERR_ASSERT);
    CHECK_ERRCLASS(MPI_Win_unlock_all(w), MPI_ERR_RMA_SYNC);
    /* collective, and every rank passes the same bad assert */
    CHECK_ERRCLASS(MPI_Win_fence(BAD_ASSERT, w), MPI_ERR_ASSERT);
    CHECK_ERRCLASS(MPI_Put(&x, 1, MPI_INT, t, 1, 1, MPI_INT, w), MPI_ERR_RMA_SYNC);
    MPI_Group all;
    CHECK_MPI(MPI_Win_get_group(w, &all));
    CHECK_ERRCLASS(MPI_Win_post(all, BAD_ASSERT, w), MPI_ERR_ASSERT);
    CHECK_ERRCLASS(MPI_Win_start(all, BAD_ASSERT, w), MPI_ERR_ASSERT);
    CHECK_MPI(MPI_Group_free(&all));
    no_epoch(c, "bad lock types and asserts");
    usable(c, "bad lock types and asserts");
    mt_pass("bad lock type (MPI_ERR_LOCKTYPE) and asserts (MPI_ERR_ASSERT) open no epoch");
}

/* Active target: a fence epoch and a PSCW epoch with misuse inside. */
static void active_target(ctx *c)
{
    MPI_Win w = c->win;
    int x = 0, r = -1;

    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, w));
    /* flushes belong to passive-target epochs */
    CHECK_ERRCLASS(MPI_Win_flush(c->right, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Win_flush_all(w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Win_unlock_all(w), MPI_ERR_RMA_SYNC);
    c->seq++;
    x = 100 * c->seq + c->rank;
    CHECK_MPI(MPI_Put(&x, 1, MPI_INT, c->right, SCRATCH, 1, MPI_INT, w));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));
    c->scratch = 100 * c->seq + c->left;
    check_memory(c, "misuse inside a fence epoch");
    no_epoch(c, "a fence epoch ended with MPI_MODE_NOSUCCEED");

    /* PSCW: I access my right neighbour, my left one accesses me */
    MPI_Group all, gl, gr;
    CHECK_MPI(MPI_Win_get_group(w, &all));
    CHECK_MPI(MPI_Group_incl(all, 1, &c->left, &gl));
    CHECK_MPI(MPI_Group_incl(all, 1, &c->right, &gr));
    CHECK_MPI(MPI_Win_post(gl, 0, w));
    CHECK_ERRCLASS(MPI_Win_post(gl, 0, w), MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Win_start(gr, 0, w));
    CHECK_ERRCLASS(MPI_Win_start(gr, 0, w), MPI_ERR_RMA_SYNC);
    if (c->size > 1) {
        /* I am not in my access group */
        CHECK_ERRCLASS(MPI_Put(&x, 1, MPI_INT, c->rank, 1, 1, MPI_INT, w), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Get(&r, 1, MPI_INT, c->rank, 1, 1, MPI_INT, w), MPI_ERR_RMA_SYNC);
    }
    CHECK_ERRCLASS(MPI_Win_flush(c->right, w), MPI_ERR_RMA_SYNC);
    CHECK_ERRCLASS(MPI_Win_lock(MPI_LOCK_SHARED, c->right, 0, w), MPI_ERR_RMA_SYNC);
    c->seq++;
    x = 100 * c->seq + c->rank;
    CHECK_MPI(MPI_Put(&x, 1, MPI_INT, c->right, SCRATCH, 1, MPI_INT, w));
    CHECK_MPI(MPI_Get(&r, 1, MPI_INT, c->right, 2, 1, MPI_INT, w));
    CHECK_MPI(MPI_Win_complete(w));
    CHECK_ERRCLASS(MPI_Win_complete(w), MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Win_wait(w));
    CHECK_ERRCLASS(MPI_Win_wait(w), MPI_ERR_RMA_SYNC);
    CHECK_EQ(r, sentinel(c->right, 2));
    c->scratch = 100 * c->seq + c->left;
    CHECK_MPI(MPI_Group_free(&gl));
    CHECK_MPI(MPI_Group_free(&gr));
    CHECK_MPI(MPI_Group_free(&all));
    check_memory(c, "misuse inside a PSCW epoch");
    no_epoch(c, "a PSCW epoch");
    usable(c, "active-target misuse");
    mt_pass("misuse inside fence and PSCW epochs, complete/wait twice (MPI_ERR_RMA_SYNC)");
}

/* Flavor and handle errors. */
static void flavor_and_handles(ctx *c)
{
    int spare[4], x = 1, r = -1, cmp = 0;
    CHECK_ERRCLASS(MPI_Win_attach(c->win, spare, sizeof spare), MPI_ERR_RMA_FLAVOR);
    CHECK_ERRCLASS(MPI_Win_detach(c->win, c->buf), MPI_ERR_RMA_FLAVOR);

    /* a freed window: errors go to MPI_COMM_SELF's handler */
    MPI_Win w;
    int *base;
    CHECK_MPI(MPI_Win_allocate(64, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w));
    MPI_Win stale = w;
    CHECK_MPI(MPI_Win_free(&w));
    MPI_Win bad[2] = {stale, MPI_WIN_NULL};
    for (int k = 0; k < 2; k++) {
        MPI_Win b = bad[k];
        CHECK_ERRCLASS(MPI_Put(&x, 1, MPI_INT, c->right, 0, 1, MPI_INT, b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Get(&r, 1, MPI_INT, c->right, 0, 1, MPI_INT, b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Accumulate(&x, 1, MPI_INT, c->right, 0, 1, MPI_INT, MPI_SUM, b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Fetch_and_op(&x, &r, MPI_INT, c->right, 0, MPI_SUM, b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Compare_and_swap(&x, &cmp, &r, MPI_INT, c->right, 0, b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Win_lock(MPI_LOCK_SHARED, c->right, 0, b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Win_unlock(c->right, b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Win_lock_all(0, b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Win_unlock_all(b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Win_flush(c->right, b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Win_flush_all(b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Win_sync(b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Win_fence(0, b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Win_complete(b), MPI_ERR_WIN);
        CHECK_ERRCLASS(MPI_Win_wait(b), MPI_ERR_WIN);
    }
    CHECK_ERRCLASS(MPI_Win_free(&stale), MPI_ERR_WIN);
    /* the surviving window never noticed */
    no_epoch(c, "errors on a freed window");
    usable(c, "errors on a freed window");
    mt_pass("attach to a non-dynamic window (MPI_ERR_RMA_FLAVOR), freed window (MPI_ERR_WIN)");
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    mt_errors_return();
    ctx c;
    memset(&c, 0, sizeof c);
    c.rank = mt_rank(MPI_COMM_WORLD);
    c.size = mt_size(MPI_COMM_WORLD);
    c.right = (c.rank + 1) % c.size;
    c.left = (c.rank + c.size - 1) % c.size;
    int n = nints(c.rank);
    c.buf = malloc(sizeof(int) * (size_t)(n + GUARD));
    CHECK(c.buf != NULL, "malloc");
    for (int i = 0; i < n + GUARD; i++) c.buf[i] = sentinel(c.rank, i);
    c.buf[SCRATCH] = c.scratch = 0;
    CHECK_MPI(MPI_Win_create(c.buf, (MPI_Aint)(n * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &c.win));
    CHECK_MPI(MPI_Win_set_errhandler(c.win, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* before any epoch was ever opened */
    no_epoch(&c, "the start");
    check_memory(&c, "calls outside any epoch");
    usable(&c, "calls outside any epoch");
    mt_pass("communication, flushes, unlock, complete and wait outside any epoch (MPI_ERR_RMA_SYNC)");

    lock_misuse(&c);
    bad_arguments(&c);
    bad_sync_arguments(&c);
    active_target(&c);
    flavor_and_handles(&c);

    CHECK_MPI(MPI_Win_free(&c.win));
    free(c.buf);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
