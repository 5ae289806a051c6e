/* Broadcast schedules. The data is in the receive slot on every rank.
 * Ranks are taken relative to the root (rel 0 is the root). */
#include "coll/sched_util.h"

static int abs_rank(int rel, const lm_coll_spec *a) { return ring_add(rel, a->root, a->size); }

/* Binomial tree: receive from the parent, then send to the children,
 * largest subtree first. ceil(log2 n) steps of the whole message. */
void lm_sched_bcast_binomial(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, rel = ring_add(a->rank, -a->root, n);
    if (!a->bytes) return;
    int top = lowbit(rel, n);
    if (rel) {
        lm_sched_recv(s, abs_rank(rel - top, a), LM_SLOT_RECV, 0, a->bytes);
        lm_sched_round(s);
    }
    for (int m = top >> 1; m > 0; m >>= 1)
        if (rel + m < n) lm_sched_send(s, abs_rank(rel + m, a), LM_SLOT_RECV, 0, a->bytes);
    lm_sched_round(s);
}

/* Bytes [first, first + count) of the n pieces the message is cut into
 * (piece k goes to relative rank k first). */
static void pieces(const lm_coll_spec *a, int first, int count, size_t *off, size_t *len)
{
    size_t ps = (a->bytes + (size_t)a->size - 1) / (size_t)a->size;
    size_t b = (size_t)first * ps, e = (size_t)(first + count) * ps;
    if (b > a->bytes) b = a->bytes;
    if (e > a->bytes) e = a->bytes;
    *off = b;
    *len = e - b;
}

/* Scatter the pieces down a binomial tree, then a ring allgather of the
 * pieces (van de Geijn): each rank moves about 2 * bytes instead of
 * log2(n) * bytes. */
void lm_sched_bcast_scatter_allgather(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, rel = ring_add(a->rank, -a->root, n);
    size_t off, len;
    if (!a->bytes) return;
    int top = lowbit(rel, n);
    if (rel) {
        pieces(a, rel, subtree(rel, n), &off, &len);
        if (len) lm_sched_recv(s, abs_rank(rel - top, a), LM_SLOT_RECV, off, len);
        lm_sched_round(s);
    }
    for (int m = top >> 1; m > 0; m >>= 1) {
        if (rel + m >= n) continue;
        pieces(a, rel + m, subtree(rel + m, n), &off, &len);
        if (len) lm_sched_send(s, abs_rank(rel + m, a), LM_SLOT_RECV, off, len);
    }
    lm_sched_round(s);
    for (int k = 0; k < n - 1; k++) {
        pieces(a, ring_add(rel, -k, n), 1, &off, &len);
        if (len) lm_sched_send(s, abs_rank(ring_add(rel, 1, n), a), LM_SLOT_RECV, off, len);
        pieces(a, ring_add(rel, -k - 1, n), 1, &off, &len);
        if (len) lm_sched_recv(s, abs_rank(ring_add(rel, -1, n), a), LM_SLOT_RECV, off, len);
        lm_sched_round(s);
    }
}

/* Bytes per piece of the pipelined chain. */
#define CHAIN_PIECE ((size_t)128 * 1024)

/* A chain root -> rel 1 -> rel 2 ...: in round t a rank receives piece t
 * and passes on piece t - 1, so for long messages every link is busy at
 * once. */
void lm_sched_bcast_chain(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, rel = ring_add(a->rank, -a->root, n);
    size_t npieces = (a->bytes + CHAIN_PIECE - 1) / CHAIN_PIECE;
    for (size_t t = 0; t <= npieces; t++) {
        if (rel > 0 && t < npieces) {
            size_t off = t * CHAIN_PIECE, len = a->bytes - off < CHAIN_PIECE ? a->bytes - off : CHAIN_PIECE;
            lm_sched_recv(s, abs_rank(rel - 1, a), LM_SLOT_RECV, off, len);
        }
        size_t p = rel == 0 ? t : t - 1; /* the root has every piece at once */
        if (rel + 1 < n && (rel == 0 ? t < npieces : t >= 1)) {
            size_t off = p * CHAIN_PIECE, len = a->bytes - off < CHAIN_PIECE ? a->bytes - off : CHAIN_PIECE;
            lm_sched_send(s, abs_rank(rel + 1, a), LM_SLOT_RECV, off, len);
        }
        lm_sched_round(s);
    }
}
