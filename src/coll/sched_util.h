/* Small helpers shared by the schedule generators. */
#ifndef LM_SCHED_UTIL_H
#define LM_SCHED_UTIL_H
#include "coll/coll_alg.h"

/* rank arithmetic on a ring of n */
static inline int ring_add(int r, int d, int n) { return (int)(((long)r + d % n + n) % n); }

/* Block i of the receive side (the send side of scatterv): bytes and offset. */
static inline size_t blk_bytes(const lm_coll_spec *a, int i) { return a->counts ? a->counts[i] : a->bytes; }
static inline size_t blk_off(const lm_coll_spec *a, int i) { return a->displs ? a->displs[i] : (size_t)i * a->bytes; }
/* Block j of the send side of alltoall(v/w). */
static inline size_t sblk_bytes(const lm_coll_spec *a, int j) { return a->scounts ? a->scounts[j] : a->bytes; }
static inline size_t sblk_off(const lm_coll_spec *a, int j)
{
    return a->sdispls ? a->sdispls[j] : (size_t)j * a->bytes;
}

/* Node blocks of a communicator across hosts (spec.ppn > 0): rank's node,
 * how many nodes, the node's first rank (its leader) and its ranks. */
typedef struct hier {
    int node, nodes, leader, members;
} hier;

static inline hier hier_of(const lm_coll_spec *a, int rank)
{
    hier h;
    h.node = rank / a->ppn;
    h.nodes = (a->size + a->ppn - 1) / a->ppn;
    h.leader = h.node * a->ppn;
    h.members = a->size - h.leader < a->ppn ? a->size - h.leader : a->ppn;
    return h;
}

/* Where a reduction's input is: the receive buffer when in place. */
static inline int input_slot(const lm_coll_spec *a) { return a->in_place ? LM_SLOT_RECV : LM_SLOT_SEND; }

/* Largest power of two not above n (n >= 1). */
static inline int pow2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n) p *= 2;
    return p;
}

/* Binomial trees over relative ranks: rel's parent is rel minus its lowest
 * set bit, its children rel + m for powers of two m below that bit, and its
 * subtree the consecutive relative ranks [rel, rel + subtree(rel, n)). */
static inline int lowbit(int rel, int n)
{
    if (rel) return rel & -rel;
    int m = 1;
    while (m < n) m <<= 1;
    return m;
}
static inline int subtree(int rel, int n)
{
    int m = lowbit(rel, n);
    return m < n - rel ? m : n - rel;
}

/* Split `bytes` of elem-sized elements into n pieces, the first ones one
 * element larger; piece k's offset and length. */
static inline void piece(size_t bytes, size_t elem, int n, int k, size_t *off, size_t *len)
{
    size_t elems = elem ? bytes / elem : bytes, e = elem ? elem : 1;
    size_t base = elems / (size_t)n, extra = elems % (size_t)n, kk = (size_t)k;
    *off = (kk * base + (kk < extra ? kk : extra)) * e;
    *len = (base + (kk < extra ? 1 : 0)) * e;
}

/* Binomial reduction (sched_reduce.c) of `bytes` at (in_slot, in_off) on
 * every rank of spec a into (out_slot, out_off) on root: for algorithms
 * that run it on buffers of their own (the leaders of sched_hier.c). */
void lm_sched_reduce_tree(lm_sched *s, const lm_coll_spec *a, size_t bytes, int in_slot, size_t in_off, int out_slot,
                          size_t out_off, int root);

/* Recursive doubling of prefixes (sched_scan.c) among n members, this one
 * `me`, member i being rank i * stride: each member's contribution starts
 * in scratch at *p (t: scratch of the same size); the reduction of the
 * members below me goes to (res_slot, res_off), reduced onto what is there
 * where have_result, copied there otherwise. Returns whether it was set
 * (always, for me > 0). Operands stay in order for any op. */
int lm_sched_prefix_doubling(lm_sched *s, const lm_coll_spec *a, int me, int n, int stride, size_t bytes, size_t p,
                             size_t t, int res_slot, size_t res_off, int have_result);

#endif
