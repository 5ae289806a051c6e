/* Node shared-memory schedules ("shm"): every rank of the communicator is
 * on this node and has a mailbox (coll_shm.h). A rank POSTs its data once
 * per call into its own entry; the ranks that need it FETCH it from there,
 * copying or reducing as they read. Flat: every rank reads the peers it
 * needs directly, so a call takes one round trip through shared memory
 * whatever the rank count (mailboxes exist only on small communicators).
 *
 * Reductions combine in rank order from the highest rank down (x0 op (x1
 * op (... op x(n-1)))), which is right for any associative op, commutative
 * or not, and gives every rank the same result bit for bit.
 *
 * A rank that reduces in place reads its own input back from its own post
 * (counted among that post's readers), since the accumulator overwrites it. */
#include "coll/sched_util.h"
#include "coll/coll_shm.h"

/* Bytes of the largest POST of the call. */
static size_t post_bytes(const lm_coll_spec *a)
{
    switch (a->kind) {
    case LM_COLL_SCATTER:
    case LM_COLL_ALLTOALL:
    case LM_COLL_REDUCE_SCATTER_BLOCK: return (size_t)a->size * a->bytes;
    default: return a->bytes;
    }
}

int lm_sched_shm_fits(const lm_coll_spec *a)
{
    return a->size <= LM_COLL_SHM_MAX_PROCS && post_bytes(a) <= LM_COLL_SHM_DATA;
}

/* Every rank posts, then every rank waits for every other's post. */
void lm_sched_barrier_shm(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    if (n < 2) return;
    lm_sched_post(s, LM_SLOT_SEND, 0, 0, 0, n - 1);
    lm_sched_round(s);
    for (int i = 0; i < n; i++)
        if (i != me) lm_sched_fetch(s, i, 0, LM_SLOT_RECV, 0, 0, 0);
    lm_sched_round(s);
}

void lm_sched_bcast_shm(lm_sched *s, const lm_coll_spec *a)
{
    if (!a->bytes || a->size < 2) return;
    if (a->rank == a->root) lm_sched_post(s, LM_SLOT_RECV, 0, 0, a->bytes, a->size - 1);
    else lm_sched_fetch(s, a->root, 0, LM_SLOT_RECV, 0, a->bytes, 0);
    lm_sched_round(s);
}

/* Combine into (RECV, dst) the block at `off` of ranks hi, hi-1, ..., lo
 * (hi's copied, the others reduced onto it from the left). `own` says where
 * this rank's block is: a local slot, or (slot < 0) its own post. */
static void combine_down(lm_sched *s, const lm_coll_spec *a, int hi, int lo, size_t off, size_t dst, int own_slot,
                         size_t own_off)
{
    size_t bytes = a->bytes;
    for (int i = hi; i >= lo; i--) {
        int reduce = i != hi;
        if (i == a->rank && own_slot >= 0) {
            if (reduce) lm_sched_reduce(s, own_slot, own_off, LM_SLOT_RECV, dst, bytes);
            else lm_sched_copy(s, own_slot, own_off, LM_SLOT_RECV, dst, bytes);
        } else {
            lm_sched_fetch(s, i, off, LM_SLOT_RECV, dst, bytes, reduce);
        }
        lm_sched_round(s);
    }
}

/* Reduce: the other ranks post their input for the root. A root reducing
 * in place posts its own too, to read it back at its turn. */
void lm_sched_reduce_shm(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    if (!a->bytes || n < 2) return;
    if (me != a->root) {
        lm_sched_post(s, LM_SLOT_SEND, 0, 0, a->bytes, 1);
        lm_sched_round(s);
        return;
    }
    if (a->in_place) {
        lm_sched_post(s, LM_SLOT_RECV, 0, 0, a->bytes, 1);
        lm_sched_round(s);
    }
    combine_down(s, a, n - 1, 0, 0, 0, a->in_place ? -1 : LM_SLOT_SEND, 0);
}

/* Allreduce: every rank posts its input and every rank combines all of
 * them, in the same order. */
void lm_sched_allreduce_shm(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size;
    if (!a->bytes || n < 2) return;
    lm_sched_post(s, input_slot(a), 0, 0, a->bytes, n - 1 + a->in_place);
    lm_sched_round(s);
    combine_down(s, a, n - 1, 0, 0, 0, a->in_place ? -1 : LM_SLOT_SEND, 0);
}

/* Reduce-scatter of equal blocks: every rank posts all n blocks of its
 * input; rank r combines block r of every rank. In place the result goes to
 * the start of the receive buffer, which held block 0 of the input. */
void lm_sched_reduce_scatter_block_shm(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    size_t b = a->bytes;
    if (!b || n < 2) return;
    lm_sched_post(s, input_slot(a), 0, 0, (size_t)n * b, n - 1 + a->in_place);
    lm_sched_round(s);
    combine_down(s, a, n - 1, 0, (size_t)me * b, 0, a->in_place ? -1 : LM_SLOT_SEND, (size_t)me * b);
}

/* Scan and exscan: rank w's input is read by the ranks above it. Rank r
 * starts from its own input (scan) or from r-1's (exscan) and reduces the
 * lower ranks' onto it. */
void lm_sched_scan_shm(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank, ex = a->kind == LM_COLL_EXSCAN;
    if (!a->bytes || n < 2) return;
    if (me + 1 < n) {
        lm_sched_post(s, input_slot(a), 0, 0, a->bytes, n - 1 - me);
        lm_sched_round(s);
    }
    if (ex) {
        if (me > 0) combine_down(s, a, me - 1, 0, 0, 0, -1, 0);
        return;
    }
    if (!a->in_place) {
        lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, 0, a->bytes);
        lm_sched_round(s);
    }
    if (me > 0) {
        /* own input already in RECV: continue from the rank below */
        for (int i = me - 1; i >= 0; i--) {
            lm_sched_fetch(s, i, 0, LM_SLOT_RECV, 0, a->bytes, 1);
            lm_sched_round(s);
        }
    }
}

/* Gather: the others post their block, the root reads each into place. */
void lm_sched_gather_shm(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    size_t b = a->bytes;
    if (!b || n < 2) return;
    if (me != a->root) {
        lm_sched_post(s, LM_SLOT_SEND, 0, 0, b, 1);
        lm_sched_round(s);
        return;
    }
    if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, (size_t)me * b, b);
    for (int i = 0; i < n; i++)
        if (i != me) lm_sched_fetch(s, i, 0, LM_SLOT_RECV, (size_t)i * b, b, 0);
    lm_sched_round(s);
}

/* Scatter: the root posts all n blocks, every other rank reads its own. */
void lm_sched_scatter_shm(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    size_t b = a->bytes;
    if (!b || n < 2) return;
    if (me == a->root) {
        lm_sched_post(s, LM_SLOT_SEND, 0, 0, (size_t)n * b, n - 1);
        if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, (size_t)me * b, LM_SLOT_RECV, 0, b);
    } else {
        lm_sched_fetch(s, a->root, (size_t)me * b, LM_SLOT_RECV, 0, b, 0);
    }
    lm_sched_round(s);
}

/* Allgather: every rank posts its block and reads everyone else's. */
void lm_sched_allgather_shm(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    size_t b = a->bytes;
    if (!b || n < 2) return;
    if (a->in_place) lm_sched_post(s, LM_SLOT_RECV, (size_t)me * b, 0, b, n - 1);
    else lm_sched_post(s, LM_SLOT_SEND, 0, 0, b, n - 1);
    lm_sched_round(s);
    if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, (size_t)me * b, b);
    for (int i = 0; i < n; i++)
        if (i != me) lm_sched_fetch(s, i, 0, LM_SLOT_RECV, (size_t)i * b, b, 0);
    lm_sched_round(s);
}

/* Alltoall: every rank posts all its blocks; rank r reads block r of each
 * peer. The post comes first, so in place the blocks that arrive cannot
 * overwrite what is still to be posted. */
void lm_sched_alltoall_shm(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    size_t b = a->bytes;
    if (!b || n < 2) return;
    lm_sched_post(s, a->in_place ? LM_SLOT_RECV : LM_SLOT_SEND, 0, 0, (size_t)n * b, n - 1);
    lm_sched_round(s);
    if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, (size_t)me * b, LM_SLOT_RECV, (size_t)me * b, b);
    for (int j = 0; j < n; j++)
        if (j != me) lm_sched_fetch(s, j, (size_t)me * b, LM_SLOT_RECV, (size_t)j * b, b, 0);
    lm_sched_round(s);
}

/* ---- by address ----------------------------------------------------------
 * Every member in one address space: the same schedules, with posts that
 * publish where the data is (lm_sched_by_address). In place, an alltoall,
 * a reduction or a scan would post the very buffer it writes its result
 * into, so there the input is first copied to scratch and the schedule
 * generated as if it had been sent from there. Bcast, gather, scatter and
 * allgather never write what they posted. */
static void by_address(lm_sched *s, const lm_coll_spec *a, lm_coll_gen gen, size_t staged)
{
    if (lm_sched_alltoall_replace_wanted(a)) {
        /* the whole buffer staged would double it: block by block instead
         * (between ranks of one address space, each block one memcpy) */
        lm_sched_alltoall_replace(s, a);
        return;
    }
    if (!a->in_place || !staged) {
        gen(s, a);
        lm_sched_by_address(s);
        return;
    }
    lm_coll_spec b = *a;
    b.in_place = 0;
    size_t t = lm_sched_scratch(s, staged);
    lm_sched_copy(s, LM_SLOT_RECV, 0, LM_SLOT_SCRATCH, t, staged);
    lm_sched_round(s);
    size_t first = s->nsteps;
    gen(s, &b);
    for (size_t i = first; i < s->nsteps; i++) {
        lm_step *st = &s->steps[i];
        int reads_src = st->kind == LM_STEP_SEND || st->kind == LM_STEP_COPY || st->kind == LM_STEP_REDUCE ||
                        st->kind == LM_STEP_POST;
        if (reads_src && st->src_slot == LM_SLOT_SEND) {
            st->src_slot = LM_SLOT_SCRATCH;
            st->src_off += t;
        }
    }
    lm_sched_by_address(s);
}

#define BY_ADDRESS(name, staged)                                      \
    void lm_sched_##name##_direct(lm_sched *s, const lm_coll_spec *a) \
    {                                                                 \
        by_address(s, a, lm_sched_##name##_shm, staged);              \
    }
BY_ADDRESS(bcast, 0)
BY_ADDRESS(gather, 0)
BY_ADDRESS(scatter, 0)
BY_ADDRESS(allgather, 0)
BY_ADDRESS(reduce, a->bytes)
BY_ADDRESS(allreduce, a->bytes)
BY_ADDRESS(scan, a->bytes)
BY_ADDRESS(reduce_scatter_block, (size_t)a->size * a->bytes)
BY_ADDRESS(alltoall, (size_t)a->size * a->bytes)
