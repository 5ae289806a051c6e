/* Prefix reductions: scan (inclusive) and exscan (exclusive; rank 0's
 * receive buffer is left alone). Correct for any op. */
#include "coll/sched_util.h"

/* A chain: rank r gets the prefix of ranks 0..r-1 from r-1, adds its own
 * data and passes the result to r+1. n-1 steps. */
void lm_sched_scan_linear(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank, ex = a->kind == LM_COLL_EXSCAN;
    size_t bytes = a->bytes;
    if (!bytes) return;
    int in = input_slot(a);
    if (!ex) {
        lm_sched_copy(s, in, 0, LM_SLOT_RECV, 0, bytes);
        lm_sched_round(s);
        if (me > 0) {
            size_t t = lm_sched_scratch(s, bytes);
            lm_sched_recv(s, me - 1, LM_SLOT_SCRATCH, t, bytes);
            lm_sched_round(s);
            lm_sched_reduce(s, LM_SLOT_SCRATCH, t, LM_SLOT_RECV, 0, bytes);
            lm_sched_round(s);
        }
        if (me + 1 < n) lm_sched_send(s, me + 1, LM_SLOT_RECV, 0, bytes);
        lm_sched_round(s);
        return;
    }
    if (me == 0) {
        if (n > 1) lm_sched_send(s, 1, in, 0, bytes);
        lm_sched_round(s);
        return;
    }
    /* the input may be the receive buffer: keep a copy to extend the prefix */
    size_t t = 0;
    if (me + 1 < n) {
        t = lm_sched_scratch(s, bytes);
        lm_sched_copy(s, in, 0, LM_SLOT_SCRATCH, t, bytes);
        lm_sched_round(s);
    }
    lm_sched_recv(s, me - 1, LM_SLOT_RECV, 0, bytes);
    lm_sched_round(s);
    if (me + 1 < n) {
        lm_sched_reduce(s, LM_SLOT_RECV, 0, LM_SLOT_SCRATCH, t, bytes);
        lm_sched_round(s);
        lm_sched_send(s, me + 1, LM_SLOT_SCRATCH, t, bytes);
        lm_sched_round(s);
    }
}

/* Recursive doubling: in step k a rank swaps its partial (the reduction of
 * its 2^k-aligned group so far) with rank ^ 2^k, and adds what comes from
 * below to its result. ceil(log2 n) steps. */
void lm_sched_scan_recursive_doubling(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank, ex = a->kind == LM_COLL_EXSCAN, have_result = !ex;
    size_t bytes = a->bytes;
    if (!bytes) return;
    int in = input_slot(a);
    size_t p = lm_sched_scratch(s, bytes), t = lm_sched_scratch(s, bytes);
    lm_sched_copy(s, in, 0, LM_SLOT_SCRATCH, p, bytes);
    if (!ex) lm_sched_copy(s, in, 0, LM_SLOT_RECV, 0, bytes);
    lm_sched_round(s);
    lm_sched_prefix_doubling(s, a, me, n, 1, bytes, p, t, LM_SLOT_RECV, 0, have_result);
}

int lm_sched_prefix_doubling(lm_sched *s, const lm_coll_spec *a, int me, int n, int stride, size_t bytes, size_t p,
                             size_t t, int res_slot, size_t res_off, int have_result)
{
    for (int m = 1; m < n; m <<= 1) {
        int peer = me ^ m;
        if (peer >= n) continue;
        lm_sched_send(s, peer * stride, LM_SLOT_SCRATCH, p, bytes);
        lm_sched_recv(s, peer * stride, LM_SLOT_SCRATCH, t, bytes);
        lm_sched_round(s);
        if (me > peer) {
            lm_sched_reduce(s, LM_SLOT_SCRATCH, t, LM_SLOT_SCRATCH, p, bytes);
            if (have_result) lm_sched_reduce(s, LM_SLOT_SCRATCH, t, res_slot, res_off, bytes);
            else lm_sched_copy(s, LM_SLOT_SCRATCH, t, res_slot, res_off, bytes);
            have_result = 1;
        } else if (a->commutative) {
            lm_sched_reduce(s, LM_SLOT_SCRATCH, t, LM_SLOT_SCRATCH, p, bytes);
        } else {
            /* the peer's group comes after ours: p op t, kept in t */
            lm_sched_reduce(s, LM_SLOT_SCRATCH, p, LM_SLOT_SCRATCH, t, bytes);
            size_t x = p;
            p = t;
            t = x;
        }
        lm_sched_round(s);
    }
    return have_result;
}
