/* The v forms across nodes (spec.ppn > 0): alltoallv, alltoallw, gatherv
 * and scatterv. Flat, they send one message per pair of ranks over the
 * network; here the small blocks between two nodes travel in one pack,
 * carried by the nodes' first ranks (their leaders), and large blocks go
 * rank to rank as in the flat schedules (a leader that packed them would
 * copy every byte twice more and hold them all). Ranks of one node
 * exchange directly.
 *
 * Whether a block is small is its own size (up to via_block_limit), which
 * its sender and its receiver both know (a block's send count is its
 * receive count at the other end), so both sides agree on every block's
 * way without asking each other. A leader must also know its members'
 * counts to size the packs: each member sends its leader its row of
 * counts (lm_sched_v_counts) in the first round of the call's schedule,
 * and the leader's part of the data is generated when that round is done
 * (coll_counts_first.c, the executor's extend); a member's part needs only
 * its own counts and is generated at once. Gatherv and scatterv need the
 * counts only on the nodes other than the root's: the root knows every
 * count, and its own node exchanges with it directly. */
#include "coll/sched_util.h"
#include "util/lm_mem.h"
#include <string.h>

/* Blocks up to this many bytes go through the leaders: the limits of
 * alltoall's "hier" rows (coll_select.c), where it was measured. */
static size_t via_block_limit(const lm_coll_spec *a) { return a->size <= 64 ? 4096 : 256; }

static int rooted(const lm_coll_spec *a) { return a->kind == LM_COLL_GATHERV || a->kind == LM_COLL_SCATTERV; }

size_t lm_sched_v_row(const lm_coll_spec *a) { return rooted(a) ? 1 : 2 * (size_t)a->size; }

void lm_sched_v_fill_row(const lm_coll_spec *a, size_t *row)
{
    if (rooted(a)) {
        row[0] = a->bytes;
        return;
    }
    for (int j = 0; j < a->size; j++) {
        row[j] = sblk_bytes(a, j);
        row[a->size + j] = blk_bytes(a, j);
    }
}

/* Does rank's node send its counts to its leader? (Not the root's node of
 * a gatherv or scatterv.) */
static int counts_from(const lm_coll_spec *a, int rank) { return !rooted(a) || rank / a->ppn != a->root / a->ppn; }

int lm_sched_v_leader_waits(const lm_coll_spec *a)
{
    return a->rank == hier_of(a, a->rank).leader && counts_from(a, a->rank);
}

/* The round is left open: the data's first steps join it. */
void lm_sched_v_counts(lm_sched *s, const lm_coll_spec *a)
{
    if (!counts_from(a, a->rank)) return;
    hier h = hier_of(a, a->rank);
    size_t row = lm_sched_v_row(a) * sizeof(size_t);
    if (a->rank != h.leader) {
        lm_sched_send(s, h.leader, LM_SLOT_AUX, 0, row);
    } else {
        lm_sched_copy(s, LM_SLOT_AUX, 0, LM_SLOT_AUX, row, row);
        for (int m = 1; m < h.members; m++) lm_sched_recv(s, h.leader + m, LM_SLOT_AUX, (size_t)(m + 1) * row, row);
    }
}

#define SENDS(rows, n, m) ((rows) + 2 * (size_t)(m) * (size_t)(n))
#define RECVS(rows, n, m) ((rows) + (2 * (size_t)(m) + 1) * (size_t)(n))

/* Does block j of these counts (to or from rank j) go through the leaders? */
static int via(const lm_coll_spec *a, int j, size_t bytes)
{
    return bytes && bytes <= via_block_limit(a) && j / a->ppn != a->rank / a->ppn;
}

/* Bytes of the blocks of counts that go through the leaders, over ranks
 * [lo, hi). */
static size_t via_sum(const lm_coll_spec *a, const size_t *counts, int lo, int hi)
{
    size_t t = 0;
    for (int j = lo; j < hi; j++)
        if (via(a, j, counts[j])) t += counts[j];
    return t;
}

/* Round 1 of every rank: its own block, and its blocks that go through
 * the leaders packed at pk in rank order (so node by node). */
static void own_and_pack(lm_sched *s, const lm_coll_spec *a, int src, size_t base, size_t pk)
{
    int me = a->rank;
    if (!a->in_place && blk_bytes(a, me))
        lm_sched_copy(s, src, base + sblk_off(a, me), LM_SLOT_RECV, blk_off(a, me), blk_bytes(a, me));
    size_t at = 0;
    for (int j = 0; j < a->size; j++) {
        size_t b = sblk_bytes(a, j);
        if (!via(a, j, b)) continue;
        lm_sched_copy(s, src, base + sblk_off(a, j), LM_SLOT_SCRATCH, pk + at, b);
        at += b;
    }
}

/* Every rank's blocks that do not go through the leaders. */
static void direct(lm_sched *s, const lm_coll_spec *a, int src, size_t base)
{
    int me = a->rank;
    for (int k = 1; k < a->size; k++) {
        int to = ring_add(me, k, a->size), from = ring_add(me, -k, a->size);
        size_t sb = sblk_bytes(a, to), rb = blk_bytes(a, from);
        if (sb && !via(a, to, sb)) lm_sched_send(s, to, src, base + sblk_off(a, to), sb);
        if (rb && !via(a, from, rb)) lm_sched_recv(s, from, LM_SLOT_RECV, blk_off(a, from), rb);
    }
}

/* A member: pack, send the pack to the leader while exchanging directly
 * with the rest, unpack what the leader delivers (blocks in rank order). */
static void member(lm_sched *s, const lm_coll_spec *a, const hier *h, int src, size_t base)
{
    int n = a->size;
    size_t P = 0, D = 0;
    for (int j = 0; j < n; j++) {
        P += via(a, j, sblk_bytes(a, j)) ? sblk_bytes(a, j) : 0;
        D += via(a, j, blk_bytes(a, j)) ? blk_bytes(a, j) : 0;
    }
    size_t pk = P ? lm_sched_scratch(s, P) : 0, dl = D ? lm_sched_scratch(s, D) : 0;
    own_and_pack(s, a, src, base, pk);
    lm_sched_round(s);
    /* messages between two ranks match in the order they are posted: the
     * leader receives the pack before its direct block from this rank, and
     * sends its direct block before the delivery */
    if (P) lm_sched_send(s, h->leader, LM_SLOT_SCRATCH, pk, P);
    direct(s, a, src, base);
    if (D) lm_sched_recv(s, h->leader, LM_SLOT_SCRATCH, dl, D);
    lm_sched_round(s);
    size_t at = 0;
    for (int p = 0; p < n; p++) {
        size_t b = blk_bytes(a, p);
        if (!via(a, p, b)) continue;
        lm_sched_copy(s, LM_SLOT_SCRATCH, dl + at, LM_SLOT_RECV, blk_off(a, p), b);
        at += b;
    }
    lm_sched_round(s);
}

/* The leader: its members' packs in (round 1), regrouped into one pack per
 * node (2), the packs swapped with the other leaders while it exchanges
 * its own direct blocks (3), the packs from other nodes split into each
 * member's delivery, its own blocks straight into place (4), deliveries
 * out (5). A pack from node Y holds the small blocks of Y's member q for
 * our member m in (q, m) order; a block's size is m's receive count from
 * q, and whether it is small the same test on it. */
static void leader(lm_sched *s, const lm_coll_spec *a, const hier *h, const size_t *rows, int src, size_t base)
{
    int n = a->size, M = h->members, nodes = h->nodes;
    /* per member: pack offset and size, read cursor, delivery offset and
     * size, write cursor; per node: out and in packs' offsets and sizes */
    size_t *t = lm_malloc(LM_MEM_COLL, sizeof *t * (6 * (size_t)M + 4 * (size_t)nodes));
    if (!t) {
        s->failed = 1;
        return;
    }
    size_t *g = t, *P = g + M, *cur = P + M, *d = cur + M, *D = d + M, *dcur = D + M, *out = dcur + M,
           *in = out + nodes, *olen = in + nodes, *ilen = olen + nodes;
    for (int m = 0; m < M; m++) {
        P[m] = via_sum(a, SENDS(rows, n, m), 0, n);
        D[m] = via_sum(a, RECVS(rows, n, m), 0, n);
        g[m] = P[m] ? lm_sched_scratch(s, P[m]) : 0;
        d[m] = m && D[m] ? lm_sched_scratch(s, D[m]) : 0;
        cur[m] = dcur[m] = 0;
    }
    own_and_pack(s, a, src, base, g[0]);
    for (int m = 1; m < M; m++)
        if (P[m]) lm_sched_recv(s, h->leader + m, LM_SLOT_SCRATCH, g[m], P[m]);
    lm_sched_round(s);
    for (int y = 0; y < nodes; y++) {
        hier Y = hier_of(a, y * a->ppn);
        olen[y] = ilen[y] = 0;
        for (int m = 0; m < M; m++) {
            olen[y] += via_sum(a, SENDS(rows, n, m), Y.leader, Y.leader + Y.members);
            ilen[y] += via_sum(a, RECVS(rows, n, m), Y.leader, Y.leader + Y.members);
        }
        out[y] = olen[y] ? lm_sched_scratch(s, olen[y]) : 0;
        in[y] = ilen[y] ? lm_sched_scratch(s, ilen[y]) : 0;
        size_t at = 0;
        for (int m = 0; m < M && olen[y]; m++) {
            size_t run = via_sum(a, SENDS(rows, n, m), Y.leader, Y.leader + Y.members);
            if (run) lm_sched_copy(s, LM_SLOT_SCRATCH, g[m] + cur[m], LM_SLOT_SCRATCH, out[y] + at, run);
            cur[m] += run;
            at += run;
        }
    }
    lm_sched_round(s);
    for (int y = 0; y < nodes; y++) {
        if (olen[y]) lm_sched_send(s, y * a->ppn, LM_SLOT_SCRATCH, out[y], olen[y]);
        if (ilen[y]) lm_sched_recv(s, y * a->ppn, LM_SLOT_SCRATCH, in[y], ilen[y]);
    }
    direct(s, a, src, base);
    lm_sched_round(s);
    for (int y = 0; y < nodes; y++) {
        hier Y = hier_of(a, y * a->ppn);
        size_t at = in[y];
        for (int q = Y.leader; q < Y.leader + Y.members; q++)
            for (int m = 0; m < M; m++) {
                size_t b = RECVS(rows, n, m)[q];
                if (!via(a, q, b)) continue;
                if (m) lm_sched_copy(s, LM_SLOT_SCRATCH, at, LM_SLOT_SCRATCH, d[m] + dcur[m], b);
                else lm_sched_copy(s, LM_SLOT_SCRATCH, at, LM_SLOT_RECV, blk_off(a, q), b);
                dcur[m] += b;
                at += b;
            }
    }
    lm_sched_round(s);
    for (int m = 1; m < M; m++)
        if (D[m]) lm_sched_send(s, h->leader + m, LM_SLOT_SCRATCH, d[m], D[m]);
    lm_sched_round(s);
    lm_free(LM_MEM_COLL, t);
}

static void data(lm_sched *s, const lm_coll_spec *a, const size_t *rows)
{
    hier h = hier_of(a, a->rank);
    size_t base;
    int src = lm_sched_alltoall_source(s, a, &base);
    if (a->rank == h.leader) leader(s, a, &h, rows, src, base);
    else member(s, a, &h, src, base);
}

/* A waiting leader (lm_sched_v_leader_waits) generates in two parts:
 * without spec.node_counts what needs no member's counts, with them the
 * rest. Alltoallv's leader has nothing to do before the rows. */
void lm_sched_alltoallv_hier(lm_sched *s, const lm_coll_spec *a)
{
    if (lm_sched_v_leader_waits(a) && !a->node_counts) return;
    data(s, a, a->node_counts ? a->node_counts->rows : NULL);
}

static int small(const lm_coll_spec *a, size_t bytes) { return bytes && bytes <= via_block_limit(a); }

/* Bytes of the small blocks among counts[0..k). */
static size_t small_sum(const lm_coll_spec *a, const size_t *counts, int k)
{
    size_t t = 0;
    for (int i = 0; i < k; i++) t += small(a, counts[i]) ? counts[i] : 0;
    return t;
}

/* A root's copies between node Y's small blocks in its buffer (slot
 * user, at their displacements) and their pack at pk, in rank order. */
static void small_blocks(lm_sched *s, const lm_coll_spec *a, const hier *Y, int user, size_t pk, int into_pack)
{
    for (int q = Y->leader; q < Y->leader + Y->members; q++) {
        size_t b = blk_bytes(a, q);
        if (!small(a, b)) continue;
        if (into_pack) lm_sched_copy(s, user, blk_off(a, q), LM_SLOT_SCRATCH, pk, b);
        else lm_sched_copy(s, LM_SLOT_SCRATCH, pk, user, blk_off(a, q), b);
        pk += b;
    }
}

/* The root of a gatherv: blocks from its own node directly; from each
 * other node its large blocks directly and then the pack of its small
 * ones from the node's leader (in the order that leader sends them),
 * unpacked in a second round. */
static void gatherv_root(lm_sched *s, const lm_coll_spec *a)
{
    int me = a->rank;
    hier r = hier_of(a, me);
    size_t *pk = lm_malloc(LM_MEM_COLL, sizeof *pk * (size_t)r.nodes);
    if (!pk) {
        s->failed = 1;
        return;
    }
    if (!a->in_place && blk_bytes(a, me))
        lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, blk_off(a, me), blk_bytes(a, me));
    for (int y = 0; y < r.nodes; y++) {
        hier Y = hier_of(a, y * a->ppn);
        size_t P = 0;
        for (int q = Y.leader; q < Y.leader + Y.members; q++) {
            size_t b = blk_bytes(a, q);
            if (q == me || !b) continue;
            if (y != r.node && small(a, b)) P += b;
            else lm_sched_recv(s, q, LM_SLOT_RECV, blk_off(a, q), b);
        }
        pk[y] = P ? lm_sched_scratch(s, P) : 0;
        if (P) lm_sched_recv(s, Y.leader, LM_SLOT_SCRATCH, pk[y], P);
    }
    lm_sched_round(s);
    for (int y = 0; y < r.nodes; y++) {
        hier Y = hier_of(a, y * a->ppn);
        if (y != r.node) small_blocks(s, a, &Y, LM_SLOT_RECV, pk[y], 0);
    }
    lm_sched_round(s);
    lm_free(LM_MEM_COLL, pk);
}

void lm_sched_gatherv_hier(lm_sched *s, const lm_coll_spec *a)
{
    int me = a->rank, root = a->root;
    hier h = hier_of(a, me);
    if (me == root) {
        gatherv_root(s, a);
        return;
    }
    size_t b = a->bytes;
    if (!lm_sched_v_leader_waits(a)) {
        /* the root's node, or a member: small blocks to the leader */
        if (b) lm_sched_send(s, counts_from(a, me) && small(a, b) ? h.leader : root, LM_SLOT_SEND, 0, b);
        lm_sched_round(s);
        return;
    }
    /* a leader of another node: its own large block before its members'
     * counts are in, then the pack of the node's small blocks */
    if (!a->node_counts) {
        if (b && !small(a, b)) lm_sched_send(s, root, LM_SLOT_SEND, 0, b);
        lm_sched_round(s);
        return;
    }
    const size_t *rows = a->node_counts->rows;
    size_t P = small_sum(a, rows, h.members);
    if (!P) return;
    size_t pk = lm_sched_scratch(s, P), at = 0;
    for (int m = 0; m < h.members; m++) {
        if (!small(a, rows[m])) continue;
        if (m) lm_sched_recv(s, h.leader + m, LM_SLOT_SCRATCH, pk + at, rows[m]);
        else lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_SCRATCH, pk + at, rows[m]);
        at += rows[m];
    }
    lm_sched_round(s);
    lm_sched_send(s, root, LM_SLOT_SCRATCH, pk, P);
    lm_sched_round(s);
}

/* gatherv's mirror: the root packs each other node's small blocks and
 * sends the pack to that node's leader after the node's large blocks
 * (the leader takes its own large one before its members' counts are in). */
static void scatterv_root(lm_sched *s, const lm_coll_spec *a)
{
    int me = a->rank;
    hier r = hier_of(a, me);
    size_t *pk = lm_malloc(LM_MEM_COLL, sizeof *pk * 2 * (size_t)r.nodes), *len = pk + r.nodes;
    if (!pk) {
        s->failed = 1;
        return;
    }
    if (!a->in_place && blk_bytes(a, me))
        lm_sched_copy(s, LM_SLOT_SEND, blk_off(a, me), LM_SLOT_RECV, 0, blk_bytes(a, me));
    for (int y = 0; y < r.nodes; y++) {
        hier Y = hier_of(a, y * a->ppn);
        len[y] = y != r.node ? small_sum(a, a->counts + Y.leader, Y.members) : 0;
        pk[y] = len[y] ? lm_sched_scratch(s, len[y]) : 0;
        if (len[y]) small_blocks(s, a, &Y, LM_SLOT_SEND, pk[y], 1);
    }
    lm_sched_round(s);
    for (int y = 0; y < r.nodes; y++) {
        hier Y = hier_of(a, y * a->ppn);
        for (int q = Y.leader; q < Y.leader + Y.members; q++) {
            size_t b = blk_bytes(a, q);
            if (q != me && b && (y == r.node || !small(a, b))) lm_sched_send(s, q, LM_SLOT_SEND, blk_off(a, q), b);
        }
        if (len[y]) lm_sched_send(s, Y.leader, LM_SLOT_SCRATCH, pk[y], len[y]);
    }
    lm_sched_round(s);
    lm_free(LM_MEM_COLL, pk);
}

void lm_sched_scatterv_hier(lm_sched *s, const lm_coll_spec *a)
{
    int me = a->rank, root = a->root;
    hier h = hier_of(a, me);
    if (me == root) {
        scatterv_root(s, a);
        return;
    }
    size_t b = a->bytes;
    if (!lm_sched_v_leader_waits(a)) {
        if (b) lm_sched_recv(s, counts_from(a, me) && small(a, b) ? h.leader : root, LM_SLOT_RECV, 0, b);
        lm_sched_round(s);
        return;
    }
    /* a leader of another node: its own large block before its members'
     * counts are in, then the pack (the root sends them in that order),
     * then the members' small blocks */
    if (!a->node_counts) {
        if (b && !small(a, b)) lm_sched_recv(s, root, LM_SLOT_RECV, 0, b);
        lm_sched_round(s);
        return;
    }
    const size_t *rows = a->node_counts->rows;
    size_t P = small_sum(a, rows, h.members);
    size_t pk = P ? lm_sched_scratch(s, P) : 0, at = 0;
    if (P) lm_sched_recv(s, root, LM_SLOT_SCRATCH, pk, P);
    lm_sched_round(s);
    for (int m = 0; m < h.members; m++) {
        if (!small(a, rows[m])) continue;
        if (m) lm_sched_send(s, h.leader + m, LM_SLOT_SCRATCH, pk + at, rows[m]);
        else lm_sched_copy(s, LM_SLOT_SCRATCH, pk + at, LM_SLOT_RECV, 0, rows[m]);
        at += rows[m];
    }
    lm_sched_round(s);
}

void lm_sched_v_whole(lm_sched *s, const lm_coll_spec *a, lm_coll_gen gen)
{
    hier h = hier_of(a, a->rank);
    size_t row = lm_sched_v_row(a), *rows = NULL;
    lm_coll_node_counts nc = {NULL};
    lm_coll_spec b = *a;
    if (lm_sched_v_leader_waits(a)) {
        rows = lm_malloc(LM_MEM_COLL, (size_t)h.members * row * sizeof *rows);
        if (!rows) {
            s->failed = 1;
            return;
        }
        /* every member's counts are this rank's (in the uniform
         * decomposition a rooted member's block is the root's block) */
        for (int m = 0; m < h.members; m++) lm_sched_v_fill_row(a, rows + (size_t)m * row);
        nc.rows = rows;
        b.node_counts = &nc;
    }
    lm_coll_spec first = *a;
    first.node_counts = NULL;
    lm_sched_v_counts(s, a);
    gen(s, &first);
    lm_sched_round(s);
    if (rows) gen(s, &b);
    lm_free(LM_MEM_COLL, rows);
}
