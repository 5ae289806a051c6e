/* Reduction schedules: reduce, allreduce, reduce_scatter(_block).
 * Unless an algorithm says it needs a commutative op, operands are combined
 * in rank order: a partial result always covers consecutive ranks, and the
 * lower ranks' partial is the left operand. */
#include "coll/sched_util.h"

typedef struct {
    int slot;
    size_t off;
} loc;

static int same(loc x, loc y) { return x.slot == y.slot && x.off == y.off; }

/* Binomial reduction of `bytes` at `in` on every rank into `out` on root.
 * A commutative op uses the tree rooted at root; otherwise the tree is
 * rooted at rank 0, whose children hold the higher ranks, and rank 0 passes
 * the result on. Partial results alternate between two buffers (received
 * data becomes the accumulator), so nothing is copied on the way. */
static void reduce_tree(lm_sched *s, const lm_coll_spec *a, size_t bytes, loc in, loc out, int root)
{
    int n = a->size, me = a->rank;
    int tree_root = a->commutative ? root : 0;
    int rel = ring_add(me, -tree_root, n), top = lowbit(rel, n);
    int nchild = 0;
    for (int m = 1; m < top; m <<= 1)
        if (rel + m < n) nchild++;
    int result_here = me == root && tree_root == root;

    loc buf[2];
    buf[0] = (loc){LM_SLOT_SCRATCH, nchild ? lm_sched_scratch(s, bytes) : 0};
    buf[1] = (loc){LM_SLOT_SCRATCH, nchild > 1 ? lm_sched_scratch(s, bytes) : 0};
    if (result_here && nchild) {
        /* let the last partial land in out; the first cannot if out holds the input */
        if (same(in, out)) buf[1] = out;
        else buf[(nchild - 1) % 2] = out;
    }
    loc acc = in;
    int i = 0;
    for (int m = 1; m < top; m <<= 1) {
        if (rel + m >= n) continue;
        loc inc = buf[i++ % 2];
        lm_sched_recv(s, ring_add(rel + m, tree_root, n), inc.slot, inc.off, bytes);
        lm_sched_round(s);
        lm_sched_reduce(s, acc.slot, acc.off, inc.slot, inc.off, bytes); /* inc = acc op inc */
        lm_sched_round(s);
        acc = inc;
    }
    if (rel) {
        lm_sched_send(s, ring_add(rel - top, tree_root, n), acc.slot, acc.off, bytes);
        lm_sched_round(s);
    } else if (result_here) {
        lm_sched_copy(s, acc.slot, acc.off, out.slot, out.off, bytes);
        lm_sched_round(s);
    } else {
        lm_sched_send(s, root, acc.slot, acc.off, bytes);
        lm_sched_round(s);
    }
    if (me == root && !result_here) {
        lm_sched_recv(s, tree_root, out.slot, out.off, bytes);
        lm_sched_round(s);
    }
}

void lm_sched_reduce_tree(lm_sched *s, const lm_coll_spec *a, size_t bytes, int in_slot, size_t in_off, int out_slot,
                          size_t out_off, int root)
{
    reduce_tree(s, a, bytes, (loc){in_slot, in_off}, (loc){out_slot, out_off}, root);
}

void lm_sched_reduce_binomial(lm_sched *s, const lm_coll_spec *a)
{
    if (!a->bytes) return;
    loc in = {input_slot(a), 0}, out = {LM_SLOT_RECV, 0};
    if (a->rank != a->root) in.slot = LM_SLOT_SEND;
    reduce_tree(s, a, a->bytes, in, out, a->root);
}

/* Reduce to rank 0, then broadcast: correct for any op, 2 log2(n) steps. */
void lm_sched_allreduce_reduce_bcast(lm_sched *s, const lm_coll_spec *a)
{
    if (!a->bytes) return;
    lm_coll_spec b = *a;
    b.root = 0;
    reduce_tree(s, &b, a->bytes, (loc){input_slot(a), 0}, (loc){LM_SLOT_RECV, 0}, 0);
    lm_sched_bcast_binomial(s, &b);
}

/* Recursive doubling over the largest power of two p2; the first
 * 2 * (n - p2) ranks pair up first (the even one hands its data to the odd
 * one) and get the result back at the end. log2(n) steps of the whole
 * message (two more when n is not a power of two). */
void lm_sched_allreduce_recursive_doubling(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank, p2 = pow2_floor(n), rem = n - p2;
    size_t bytes = a->bytes;
    if (!bytes) return;
    loc acc = {LM_SLOT_RECV, 0}, inc = {LM_SLOT_SCRATCH, lm_sched_scratch(s, bytes)};
    if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, 0, bytes);
    lm_sched_round(s);
    int newr;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            lm_sched_send(s, me + 1, acc.slot, acc.off, bytes);
            lm_sched_round(s);
            lm_sched_recv(s, me + 1, LM_SLOT_RECV, 0, bytes);
            lm_sched_round(s);
            return;
        }
        lm_sched_recv(s, me - 1, inc.slot, inc.off, bytes);
        lm_sched_round(s);
        lm_sched_reduce(s, inc.slot, inc.off, acc.slot, acc.off, bytes);
        lm_sched_round(s);
        newr = me / 2;
    } else {
        newr = me - rem;
    }
    for (int m = 1; m < p2; m <<= 1) {
        int pn = newr ^ m, peer = pn < rem ? 2 * pn + 1 : pn + rem;
        lm_sched_send(s, peer, acc.slot, acc.off, bytes);
        lm_sched_recv(s, peer, inc.slot, inc.off, bytes);
        lm_sched_round(s);
        if (peer < me) {
            lm_sched_reduce(s, inc.slot, inc.off, acc.slot, acc.off, bytes);
        } else {
            lm_sched_reduce(s, acc.slot, acc.off, inc.slot, inc.off, bytes);
            loc t = acc;
            acc = inc;
            inc = t;
        }
        lm_sched_round(s);
    }
    lm_sched_copy(s, acc.slot, acc.off, LM_SLOT_RECV, 0, bytes);
    lm_sched_round(s);
    if (me < 2 * rem) {
        lm_sched_send(s, me - 1, LM_SLOT_RECV, 0, bytes);
        lm_sched_round(s);
    }
}

/* The ring reduce-scatter of allreduce and reduce: in step k a rank passes
 * on piece me-k (its own input first) and combines piece me-k-1, which
 * arrives, with its input. The partial results are in `acc`. Where the
 * input is elsewhere, a piece arrives straight in acc and the input is
 * combined into it (acc = in op acc: the op is commutative), so the input
 * is never copied; where the input is in acc itself (in place), a piece
 * arrives in scratch and is combined into acc. */
static void ring_reduce_scatter(lm_sched *s, const lm_coll_spec *a, loc in, loc acc)
{
    int n = a->size, me = a->rank, right = ring_add(me, 1, n), left = ring_add(me, -1, n);
    size_t bytes = a->bytes, off, len, roff, rlen;
    int direct = in.slot != acc.slot;
    piece(bytes, a->elem, n, 0, &off, &len);
    size_t tmp = direct ? 0 : lm_sched_scratch(s, len);
    for (int k = 0; k < n - 1; k++) {
        piece(bytes, a->elem, n, ring_add(me, -k, n), &off, &len);
        piece(bytes, a->elem, n, ring_add(me, -k - 1, n), &roff, &rlen);
        loc from = k ? acc : in;
        if (len) lm_sched_send(s, right, from.slot, from.off + off, len);
        if (rlen && direct) lm_sched_recv(s, left, acc.slot, acc.off + roff, rlen);
        else if (rlen) lm_sched_recv(s, left, LM_SLOT_SCRATCH, tmp, rlen);
        lm_sched_round(s);
        if (direct) lm_sched_reduce(s, in.slot, in.off + roff, acc.slot, acc.off + roff, rlen);
        else lm_sched_reduce(s, LM_SLOT_SCRATCH, tmp, acc.slot, acc.off + roff, rlen);
        lm_sched_round(s);
    }
}

/* Reduce-scatter around a ring, then allgather around it: each rank sends
 * 2 (n-1)/n of the message in 2 (n-1) steps. Needs a commutative op. */
void lm_sched_allreduce_ring(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank, right = ring_add(me, 1, n), left = ring_add(me, -1, n);
    size_t bytes = a->bytes, off, len, roff, rlen;
    if (!bytes) return;
    if (n == 1 && !a->in_place) lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, 0, bytes);
    lm_sched_round(s);
    ring_reduce_scatter(s, a, (loc){input_slot(a), 0}, (loc){LM_SLOT_RECV, 0});
    for (int k = 0; k < n - 1; k++) {
        piece(bytes, a->elem, n, ring_add(me, 1 - k, n), &off, &len);
        piece(bytes, a->elem, n, ring_add(me, -k, n), &roff, &rlen);
        if (len) lm_sched_send(s, right, LM_SLOT_RECV, off, len);
        if (rlen) lm_sched_recv(s, left, LM_SLOT_RECV, roff, rlen);
        lm_sched_round(s);
    }
}

/* Reduce-scatter around a ring (as in lm_sched_allreduce_ring), then every
 * rank sends the piece it finished to the root: each rank sends about
 * (n-1)/n of the vector plus one piece, instead of log2(n) whole vectors.
 * Needs a commutative op. */
void lm_sched_reduce_scatter_gather(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    size_t bytes = a->bytes, off, len;
    if (!bytes) return;
    int is_root = me == a->root, in = is_root ? input_slot(a) : LM_SLOT_SEND;
    /* the root reduces in its receive buffer, the others in scratch */
    loc acc = {is_root ? LM_SLOT_RECV : LM_SLOT_SCRATCH, is_root ? 0 : lm_sched_scratch(s, bytes)};
    if (n == 1) lm_sched_copy(s, in, 0, acc.slot, acc.off, bytes);
    lm_sched_round(s);
    ring_reduce_scatter(s, a, (loc){in, 0}, acc);
    /* rank r now holds piece r+1 complete */
    if (!is_root) {
        piece(bytes, a->elem, n, ring_add(me, 1, n), &off, &len);
        if (len) lm_sched_send(s, a->root, acc.slot, acc.off + off, len);
    } else {
        for (int r = 0; r < n; r++) {
            if (r == me) continue;
            piece(bytes, a->elem, n, ring_add(r, 1, n), &off, &len);
            if (len) lm_sched_recv(s, r, LM_SLOT_RECV, off, len);
        }
    }
    lm_sched_round(s);
}

static size_t total_bytes(const lm_coll_spec *a)
{
    return a->counts ? blk_off(a, a->size - 1) + blk_bytes(a, a->size - 1) : (size_t)a->size * a->bytes;
}

/* Reduce the whole vector to rank 0, which sends each rank its block:
 * correct for any op. */
void lm_sched_reduce_scatter_reduce_scatterv(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    size_t total = total_bytes(a);
    if (!total) return;
    loc res = {LM_SLOT_SCRATCH, me == 0 ? lm_sched_scratch(s, total) : 0};
    reduce_tree(s, a, total, (loc){input_slot(a), 0}, res, 0);
    if (me == 0) {
        for (int i = 1; i < n; i++)
            if (blk_bytes(a, i)) lm_sched_send(s, i, LM_SLOT_SCRATCH, res.off + blk_off(a, i), blk_bytes(a, i));
        lm_sched_copy(s, LM_SLOT_SCRATCH, res.off + blk_off(a, 0), LM_SLOT_RECV, 0, blk_bytes(a, 0));
    } else if (blk_bytes(a, me)) {
        lm_sched_recv(s, 0, LM_SLOT_RECV, 0, blk_bytes(a, me));
    }
    lm_sched_round(s);
}

/* Around a ring: in step k a rank passes on block me-k-1 and adds its own
 * data to block me-k-2 it receives, so after n-1 steps it holds block me
 * summed over all ranks. Each rank sends (n-1)/n of the vector. Needs a
 * commutative op. */
void lm_sched_reduce_scatter_ring(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank, right = ring_add(me, 1, n), left = ring_add(me, -1, n);
    size_t total = total_bytes(a), maxb = 0;
    if (!total) return;
    for (int i = 0; i < n; i++)
        if (blk_bytes(a, i) > maxb) maxb = blk_bytes(a, i);
    size_t acc = lm_sched_scratch(s, total), tmp = lm_sched_scratch(s, maxb);
    lm_sched_copy(s, input_slot(a), 0, LM_SLOT_SCRATCH, acc, total);
    lm_sched_round(s);
    for (int k = 0; k < n - 1; k++) {
        int sb = ring_add(me, -k - 1, n), rb = ring_add(me, -k - 2, n);
        if (blk_bytes(a, sb)) lm_sched_send(s, right, LM_SLOT_SCRATCH, acc + blk_off(a, sb), blk_bytes(a, sb));
        if (blk_bytes(a, rb)) lm_sched_recv(s, left, LM_SLOT_SCRATCH, tmp, blk_bytes(a, rb));
        lm_sched_round(s);
        lm_sched_reduce(s, LM_SLOT_SCRATCH, tmp, LM_SLOT_SCRATCH, acc + blk_off(a, rb), blk_bytes(a, rb));
        lm_sched_round(s);
    }
    lm_sched_copy(s, LM_SLOT_SCRATCH, acc + blk_off(a, me), LM_SLOT_RECV, 0, blk_bytes(a, me));
    lm_sched_round(s);
}
