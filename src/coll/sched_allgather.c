/* Allgather schedules (allgatherv through the ring). */
#include "coll/sched_util.h"

/* The own block goes from the send buffer to its place in the receive
 * buffer. The first step sends it from the send buffer and copies it
 * after posting its messages, so that the copy overlaps their transfer. */
static void own_block(lm_sched *s, const lm_coll_spec *a)
{
    if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, blk_off(a, a->rank), blk_bytes(a, a->rank));
}

/* Where the first step finds the own block. */
static int own_slot(const lm_coll_spec *a, size_t *off)
{
    *off = a->in_place ? blk_off(a, a->rank) : 0;
    return a->in_place ? LM_SLOT_RECV : LM_SLOT_SEND;
}

/* n-1 steps; in step k a rank passes to its right the block it got in step
 * k-1 (its own first). Blocks may differ in size (allgatherv). */
void lm_sched_allgather_ring(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank, right = ring_add(me, 1, n), left = ring_add(me, -1, n);
    for (int k = 0; k < n - 1; k++) {
        int sb = ring_add(me, -k, n), rb = ring_add(me, -k - 1, n);
        size_t off = blk_off(a, sb);
        int slot = k ? LM_SLOT_RECV : own_slot(a, &off);
        if (blk_bytes(a, sb)) lm_sched_send(s, right, slot, off, blk_bytes(a, sb));
        if (blk_bytes(a, rb)) lm_sched_recv(s, left, LM_SLOT_RECV, blk_off(a, rb), blk_bytes(a, rb));
        if (!k) own_block(s, a);
        lm_sched_round(s);
    }
    if (n == 1) own_block(s, a);
    lm_sched_round(s);
}

/* log2(n) steps for a power of two n: in step k ranks swap the 2^k blocks
 * of their aligned group with rank ^ 2^k. Other sizes run the ring. */
void lm_sched_allgather_recursive_doubling(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    if (n & (n - 1)) {
        lm_sched_allgather_ring(s, a);
        return;
    }
    size_t b = a->bytes;
    if (!b) return;
    for (int m = 1; m < n; m <<= 1) {
        int peer = me ^ m, mine = me & ~(m - 1), theirs = peer & ~(m - 1);
        size_t off = (size_t)mine * b;
        int slot = m > 1 ? LM_SLOT_RECV : own_slot(a, &off);
        lm_sched_send(s, peer, slot, off, (size_t)m * b);
        lm_sched_recv(s, peer, LM_SLOT_RECV, (size_t)theirs * b, (size_t)m * b);
        if (m == 1) own_block(s, a);
        lm_sched_round(s);
    }
    if (n == 1) own_block(s, a);
    lm_sched_round(s);
}

/* Bruck: ceil(log2 n) steps for any n. Blocks are kept in an order rotated
 * by the rank (position i holds rank me+i's block); in step k a rank sends
 * the first min(2^k, n-2^k) positions to rank me-2^k and receives as many
 * from me+2^k after them. A final rotation puts blocks in rank order. */
void lm_sched_allgather_bruck(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    size_t b = a->bytes;
    if (!b) return;
    size_t t = lm_sched_scratch(s, (size_t)n * b);
    lm_sched_copy(s, a->in_place ? LM_SLOT_RECV : LM_SLOT_SEND, a->in_place ? (size_t)me * b : 0, LM_SLOT_SCRATCH, t,
                  b);
    lm_sched_round(s);
    for (int d = 1; d < n; d <<= 1) {
        size_t cnt = (size_t)(d < n - d ? d : n - d);
        lm_sched_send(s, ring_add(me, -d, n), LM_SLOT_SCRATCH, t, cnt * b);
        lm_sched_recv(s, ring_add(me, d, n), LM_SLOT_SCRATCH, t + (size_t)d * b, cnt * b);
        lm_sched_round(s);
    }
    /* position i holds block (me + i) mod n */
    size_t head = (size_t)(n - me) * b;
    lm_sched_copy(s, LM_SLOT_SCRATCH, t, LM_SLOT_RECV, (size_t)me * b, head);
    lm_sched_copy(s, LM_SLOT_SCRATCH, t + head, LM_SLOT_RECV, 0, (size_t)me * b);
    lm_sched_round(s);
}
