/* Barrier schedules: empty messages. */
#include "coll/sched_util.h"

/* ceil(log2 n) rounds; in round k every rank signals rank + 2^k and hears
 * from rank - 2^k. Any n. */
void lm_sched_barrier_dissemination(lm_sched *s, const lm_coll_spec *a)
{
    for (int d = 1; d < a->size; d <<= 1) {
        lm_sched_send(s, ring_add(a->rank, d, a->size), LM_SLOT_SEND, 0, 0);
        lm_sched_recv(s, ring_add(a->rank, -d, a->size), LM_SLOT_RECV, 0, 0);
        lm_sched_round(s);
    }
}

/* Pairwise exchanges with rank ^ 2^k among the largest power of two; the
 * ranks beyond it report to a partner first and are released last. */
void lm_sched_barrier_recursive_doubling(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank, p2 = pow2_floor(n);
    if (me >= p2) {
        lm_sched_send(s, me - p2, LM_SLOT_SEND, 0, 0);
        lm_sched_round(s);
        lm_sched_recv(s, me - p2, LM_SLOT_RECV, 0, 0);
        lm_sched_round(s);
        return;
    }
    if (me + p2 < n) {
        lm_sched_recv(s, me + p2, LM_SLOT_RECV, 0, 0);
        lm_sched_round(s);
    }
    for (int m = 1; m < p2; m <<= 1) {
        lm_sched_send(s, me ^ m, LM_SLOT_SEND, 0, 0);
        lm_sched_recv(s, me ^ m, LM_SLOT_RECV, 0, 0);
        lm_sched_round(s);
    }
    if (me + p2 < n) {
        lm_sched_send(s, me + p2, LM_SLOT_SEND, 0, 0);
        lm_sched_round(s);
    }
}
