/* Gather and scatter schedules (and their v forms through the linear
 * algorithms). Ranks of the binomial trees are relative to the root. */
#include "coll/sched_util.h"

/* Root receives every block directly. */
void lm_sched_gather_linear(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    if (me != a->root) {
        if (a->bytes) lm_sched_send(s, a->root, LM_SLOT_SEND, 0, a->bytes);
        lm_sched_round(s);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (i == me || !blk_bytes(a, i)) continue;
        lm_sched_recv(s, i, LM_SLOT_RECV, blk_off(a, i), blk_bytes(a, i));
    }
    if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, blk_off(a, me), blk_bytes(a, me));
    lm_sched_round(s);
}

/* Root sends every block directly. */
void lm_sched_scatter_linear(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->root == a->rank ? a->root : -1;
    if (me < 0) {
        if (a->bytes) lm_sched_recv(s, a->root, LM_SLOT_RECV, 0, a->bytes);
        lm_sched_round(s);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (i == me || !blk_bytes(a, i)) continue;
        lm_sched_send(s, i, LM_SLOT_SEND, blk_off(a, i), blk_bytes(a, i));
    }
    if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, blk_off(a, me), LM_SLOT_RECV, 0, blk_bytes(a, me));
    lm_sched_round(s);
}

/* Copy between a root's buffer in rank order and a buffer in relative-rank
 * order (relative rank k is rank (k + root) mod n): two ranges. */
static void rotate(lm_sched *s, const lm_coll_spec *a, int to_relative, int user_slot, size_t rel_off)
{
    size_t b = a->bytes, head = (size_t)(a->size - a->root) * b, tail = (size_t)a->root * b;
    size_t user_at_root = (size_t)a->root * b;
    if (to_relative) {
        lm_sched_copy(s, user_slot, user_at_root, LM_SLOT_SCRATCH, rel_off, head);
        lm_sched_copy(s, user_slot, 0, LM_SLOT_SCRATCH, rel_off + head, tail);
    } else {
        lm_sched_copy(s, LM_SLOT_SCRATCH, rel_off, user_slot, user_at_root, head);
        lm_sched_copy(s, LM_SLOT_SCRATCH, rel_off + head, user_slot, 0, tail);
    }
}

/* Binomial tree: a rank collects its subtree's blocks (consecutive relative
 * ranks) and passes them up in one message. log2(n) steps. */
void lm_sched_gather_binomial(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, rel = ring_add(a->rank, -a->root, n), top = lowbit(rel, n);
    size_t b = a->bytes;
    if (!b) return;
    int sub = subtree(rel, n);
    if (sub == 1 && rel) { /* a leaf sends its own block */
        lm_sched_send(s, ring_add(rel - top, a->root, n), LM_SLOT_SEND, 0, b);
        lm_sched_round(s);
        return;
    }
    /* the subtree's blocks in relative order; at the root with root 0 that
     * is the receive buffer itself */
    int direct = rel == 0 && a->root == 0;
    int slot = direct ? LM_SLOT_RECV : LM_SLOT_SCRATCH;
    size_t base = direct ? 0 : lm_sched_scratch(s, (size_t)sub * b);
    for (int m = 1; m < top; m <<= 1)
        if (rel + m < n)
            lm_sched_recv(s, ring_add(rel + m, a->root, n), slot, base + (size_t)m * b,
                          (size_t)subtree(rel + m, n) * b);
    if (!(rel == 0 && a->in_place)) lm_sched_copy(s, LM_SLOT_SEND, 0, slot, base, b);
    else if (!direct) lm_sched_copy(s, LM_SLOT_RECV, (size_t)a->root * b, slot, base, b);
    lm_sched_round(s);
    if (rel) {
        lm_sched_send(s, ring_add(rel - top, a->root, n), slot, base, (size_t)sub * b);
    } else if (!direct) {
        rotate(s, a, 0, LM_SLOT_RECV, base);
    }
    lm_sched_round(s);
}

/* Binomial tree: the root's data goes down, each rank keeping its block and
 * passing on its children's subtrees. log2(n) steps. */
void lm_sched_scatter_binomial(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, rel = ring_add(a->rank, -a->root, n), top = lowbit(rel, n);
    size_t b = a->bytes;
    if (!b) return;
    int sub = subtree(rel, n);
    if (sub == 1 && rel) {
        lm_sched_recv(s, ring_add(rel - top, a->root, n), LM_SLOT_RECV, 0, b);
        lm_sched_round(s);
        return;
    }
    int slot = LM_SLOT_SCRATCH;
    size_t base = 0;
    if (rel == 0 && a->root == 0) {
        slot = LM_SLOT_SEND; /* already in relative order */
    } else if (rel == 0) {
        base = lm_sched_scratch(s, (size_t)n * b);
        rotate(s, a, 1, LM_SLOT_SEND, base);
        lm_sched_round(s);
    } else {
        base = lm_sched_scratch(s, (size_t)sub * b);
        lm_sched_recv(s, ring_add(rel - top, a->root, n), slot, base, (size_t)sub * b);
        lm_sched_round(s);
    }
    for (int m = top >> 1; m > 0; m >>= 1)
        if (rel + m < n)
            lm_sched_send(s, ring_add(rel + m, a->root, n), slot, base + (size_t)m * b,
                          (size_t)subtree(rel + m, n) * b);
    if (!(rel == 0 && a->in_place)) lm_sched_copy(s, slot, base, LM_SLOT_RECV, 0, b);
    lm_sched_round(s);
}
