/* Alltoall schedules (alltoallv and alltoallw through pairwise and linear,
 * whose blocks may differ in size). */
#include "coll/sched_util.h"
#include "util/lm_cvar.h"

/* Peers one rank posts at most per round in the linear algorithm. */
#define LINEAR_WINDOW 32

int lm_sched_alltoall_replace_wanted(const lm_coll_spec *a)
{
    return a->in_place && a->kind == LM_COLL_ALLTOALL && a->size > 1 &&
           (size_t)a->size * a->bytes > (size_t)lm_cvar(LM_CVAR_ALLTOALL_INPLACE_COPY_MAX);
}

/* In step k a rank exchanges its block for p = k - me (mod n) with p, whose
 * partner in that step it is; the block goes out from scratch (copied
 * there in the round before, while the previous exchange is in flight) and
 * the block from p lands in its place. Two blocks of scratch, not n: MPICH
 * does in-place alltoall so too (sendrecv_replace). */
void lm_sched_alltoall_replace(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank, step = 0, prev = -1;
    size_t b = a->bytes;
    if (!b) return;
    size_t t[2] = {lm_sched_scratch(s, b), lm_sched_scratch(s, b)};
    for (int k = 0; k <= n; k++) {
        int p = k < n ? ring_add(k, -me, n) : me;
        if (p != me) lm_sched_copy(s, LM_SLOT_RECV, (size_t)p * b, LM_SLOT_SCRATCH, t[step % 2], b);
        if (prev >= 0 && (p != me || k == n)) {
            lm_sched_send(s, prev, LM_SLOT_SCRATCH, t[(step + 1) % 2], b);
            lm_sched_recv(s, prev, LM_SLOT_RECV, (size_t)prev * b, b);
        }
        lm_sched_round(s);
        if (p != me) {
            prev = p;
            step++;
        }
    }
}

/* Where the send blocks are: in place, a copy of the receive buffer taken
 * before anything arrives (the send layout is then the receive layout). */
int lm_sched_alltoall_source(lm_sched *s, const lm_coll_spec *a, size_t *base)
{
    *base = 0;
    if (!a->in_place) return LM_SLOT_SEND;
    size_t end = 0;
    for (int i = 0; i < a->size; i++)
        if (blk_bytes(a, i) && blk_off(a, i) + blk_bytes(a, i) > end) end = blk_off(a, i) + blk_bytes(a, i);
    *base = lm_sched_scratch(s, end);
    lm_sched_copy(s, LM_SLOT_RECV, 0, LM_SLOT_SCRATCH, *base, end);
    lm_sched_round(s);
    return LM_SLOT_SCRATCH;
}

static void exchange(lm_sched *s, const lm_coll_spec *a, int src, size_t base, int k)
{
    int n = a->size, me = a->rank, to = ring_add(me, k, n), from = ring_add(me, -k, n);
    if (sblk_bytes(a, to)) lm_sched_send(s, to, src, base + sblk_off(a, to), sblk_bytes(a, to));
    if (blk_bytes(a, from)) lm_sched_recv(s, from, LM_SLOT_RECV, blk_off(a, from), blk_bytes(a, from));
}

static void own_block(lm_sched *s, const lm_coll_spec *a, int src, size_t base)
{
    if (!a->in_place)
        lm_sched_copy(s, src, base + sblk_off(a, a->rank), LM_SLOT_RECV, blk_off(a, a->rank), blk_bytes(a, a->rank));
}

/* n-1 steps; in step k a rank sends to me+k and receives from me-k. The
 * own block is copied in the first step, after its messages are posted,
 * so that the copy overlaps their transfer. */
void lm_sched_alltoall_pairwise(lm_sched *s, const lm_coll_spec *a)
{
    if (lm_sched_alltoall_replace_wanted(a)) {
        lm_sched_alltoall_replace(s, a);
        return;
    }
    size_t base;
    int src = lm_sched_alltoall_source(s, a, &base);
    for (int k = 1; k < a->size; k++) {
        exchange(s, a, src, base, k);
        if (k == 1) own_block(s, a, src, base);
        lm_sched_round(s);
    }
    if (a->size == 1) own_block(s, a, src, base);
    lm_sched_round(s);
}

/* Everything posted at once, in windows of LINEAR_WINDOW peers so that
 * the requests in flight stay bounded. */
void lm_sched_alltoall_linear(lm_sched *s, const lm_coll_spec *a)
{
    if (lm_sched_alltoall_replace_wanted(a)) {
        lm_sched_alltoall_replace(s, a);
        return;
    }
    size_t base;
    int src = lm_sched_alltoall_source(s, a, &base);
    for (int k = 1; k < a->size; k++) {
        exchange(s, a, src, base, k);
        if (k == (a->size - 1 < LINEAR_WINDOW ? a->size - 1 : LINEAR_WINDOW))
            own_block(s, a, src, base); /* overlaps the first window */
        if (k % LINEAR_WINDOW == 0) lm_sched_round(s);
    }
    if (a->size == 1) own_block(s, a, src, base);
    lm_sched_round(s);
}

/* The blocks i of t (0 < i < n) with bit d set, in order, are runs of d
 * blocks every 2d blocks (the last run may be shorter): pack them densely
 * at `packed` (pack = 1) or unpack them from there. Returns the blocks. */
static size_t bruck_runs(lm_sched *s, int n, int d, size_t b, size_t t, size_t packed, int pack)
{
    size_t run = (size_t)d * b;
    uint32_t full = n >= 2 * d ? (uint32_t)((n - 2 * d) / (2 * d) + 1) : 0;
    size_t tail_start = (size_t)d + 2 * (size_t)d * full, tail = tail_start < (size_t)n ? n - tail_start : 0;
    if (pack) {
        lm_sched_copy_blocks(s, LM_SLOT_SCRATCH, t + run, 2, LM_SLOT_SCRATCH, packed, 1, run, full);
        lm_sched_copy(s, LM_SLOT_SCRATCH, t + tail_start * b, LM_SLOT_SCRATCH, packed + full * run, tail * b);
    } else {
        lm_sched_copy_blocks(s, LM_SLOT_SCRATCH, packed, 1, LM_SLOT_SCRATCH, t + run, 2, run, full);
        lm_sched_copy(s, LM_SLOT_SCRATCH, packed + full * run, LM_SLOT_SCRATCH, t + tail_start * b, tail * b);
    }
    return full * (size_t)d + tail;
}

/* Bruck: ceil(log2 n) steps of about n/2 blocks each, for small blocks.
 * Position i of a rotated copy holds the block for rank me+i; in step k
 * the positions with bit k set go (packed) to rank me+2^k and are replaced
 * by what comes from me-2^k. In the end position i holds the block from
 * rank me-i. */
void lm_sched_alltoall_bruck(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    size_t b = a->bytes;
    if (!b) return;
    int src = a->in_place ? LM_SLOT_RECV : LM_SLOT_SEND;
    size_t t = lm_sched_scratch(s, (size_t)n * b), half = (size_t)(n / 2 + 1) * b;
    size_t out = lm_sched_scratch(s, half), in = lm_sched_scratch(s, half);
    size_t head = (size_t)(n - me) * b;
    lm_sched_copy(s, src, (size_t)me * b, LM_SLOT_SCRATCH, t, head);
    lm_sched_copy(s, src, 0, LM_SLOT_SCRATCH, t + head, (size_t)me * b);
    lm_sched_round(s);
    for (int d = 1; d < n; d <<= 1) {
        size_t cnt = bruck_runs(s, n, d, b, t, out, 1);
        lm_sched_round(s);
        lm_sched_send(s, ring_add(me, d, n), LM_SLOT_SCRATCH, out, cnt * b);
        lm_sched_recv(s, ring_add(me, -d, n), LM_SLOT_SCRATCH, in, cnt * b);
        lm_sched_round(s);
        bruck_runs(s, n, d, b, t, in, 0);
        lm_sched_round(s);
    }
    /* block j of the result is t[me - j]: two descending runs */
    lm_sched_copy_blocks(s, LM_SLOT_SCRATCH, t + (size_t)me * b, -1, LM_SLOT_RECV, 0, 1, b, (uint32_t)me + 1);
    lm_sched_copy_blocks(s, LM_SLOT_SCRATCH, t + (size_t)(n - 1) * b, -1, LM_SLOT_RECV, (size_t)(me + 1) * b, 1, b,
                         (uint32_t)(n - 1 - me));
    lm_sched_round(s);
}
