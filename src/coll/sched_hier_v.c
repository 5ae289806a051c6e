/* Alltoallv and alltoallw across nodes (spec.ppn > 0, spec.a2av). A flat
 * alltoallv sends one message per pair of ranks over the network; here a
 * node's first rank (its leader) carries the blocks between its node and
 * each other node whose pair moves little, in one pack each way per pair
 * of nodes, and pairs of nodes that move much go rank to rank as in the
 * flat schedules (a leader that packed them would copy every byte twice
 * more and hold them all). Ranks of one node always exchange directly.
 *
 * A leader must know its members' counts to size the packs, and both
 * leaders of a pair must make the same choice for it. So before the data
 * each member sends the leader its row of counts (lm_sched_a2av_counts)
 * and the leader answers with a verdict per node (lm_sched_a2av_verdict),
 * decided from the bytes of the pair (lm_a2av_decide): the sum of its
 * members' send counts to a node equals that node's members' receive
 * counts from this one, so the two leaders decide alike. These run as
 * schedules of their own ahead of the data, which blocking calls can do;
 * nonblocking and persistent ones stay flat (coll_api.c). */
#include "coll/sched_util.h"
#include "util/lm_mem.h"
#include <string.h>

/* Blocks averaging up to this many bytes go through the leaders: the
 * limits of alltoall's "hier" rows (coll_select.c), where it was measured. */
static size_t via_block_limit(const lm_coll_spec *a) { return a->size <= 64 ? 4096 : 256; }

void lm_sched_a2av_counts(lm_sched *s, const lm_coll_spec *a)
{
    hier h = hier_of(a, a->rank);
    size_t row = 2 * (size_t)a->size * sizeof(size_t);
    if (a->rank != h.leader) {
        lm_sched_send(s, h.leader, LM_SLOT_SEND, 0, row);
    } else {
        lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, 0, row);
        for (int m = 1; m < h.members; m++) lm_sched_recv(s, h.leader + m, LM_SLOT_RECV, (size_t)m * row, row);
    }
    lm_sched_round(s);
}

void lm_sched_a2av_verdict(lm_sched *s, const lm_coll_spec *a)
{
    hier h = hier_of(a, a->rank);
    if (a->rank != h.leader) {
        lm_sched_recv(s, h.leader, LM_SLOT_RECV, 0, (size_t)h.nodes);
    } else {
        for (int m = 1; m < h.members; m++) lm_sched_send(s, h.leader + m, LM_SLOT_SEND, 0, (size_t)h.nodes);
    }
    lm_sched_round(s);
}

#define SENDS(rows, n, m) ((rows) + 2 * (size_t)(m) * (size_t)(n))
#define RECVS(rows, n, m) ((rows) + (2 * (size_t)(m) + 1) * (size_t)(n))

/* Bytes of counts[j] over node y's ranks. */
static size_t node_sum(const lm_coll_spec *a, const size_t *counts, int y)
{
    hier Y = hier_of(a, y * a->ppn);
    size_t t = 0;
    for (int j = Y.leader; j < Y.leader + Y.members; j++) t += counts[j];
    return t;
}

void lm_a2av_decide(const lm_coll_spec *a, const size_t *rows, unsigned char *via)
{
    int n = a->size;
    hier h = hier_of(a, a->rank);
    for (int y = 0; y < h.nodes; y++) {
        via[y] = 0;
        if (y == h.node) continue;
        size_t out = 0, in = 0, limit = via_block_limit(a) * (size_t)h.members * (size_t)hier_of(a, y * a->ppn).members;
        for (int m = 0; m < h.members; m++) {
            out += node_sum(a, SENDS(rows, n, m), y);
            in += node_sum(a, RECVS(rows, n, m), y);
        }
        via[y] = (unsigned char)((out <= limit ? LM_A2AV_OUT : 0) | (in <= limit ? LM_A2AV_IN : 0));
    }
}

/* Round 1 of every rank: its own block, and its blocks for the nodes it
 * reaches through the leaders packed at pk, in node then rank order. */
static void own_and_pack(lm_sched *s, const lm_coll_spec *a, const unsigned char *via, int src, size_t base, size_t pk)
{
    int me = a->rank;
    if (!a->in_place && blk_bytes(a, me))
        lm_sched_copy(s, src, base + sblk_off(a, me), LM_SLOT_RECV, blk_off(a, me), blk_bytes(a, me));
    size_t at = 0;
    for (int j = 0; j < a->size; j++) {
        size_t b = sblk_bytes(a, j);
        if (!b || !(via[j / a->ppn] & LM_A2AV_OUT)) continue;
        lm_sched_copy(s, src, base + sblk_off(a, j), LM_SLOT_SCRATCH, pk + at, b);
        at += b;
    }
}

/* Every rank's blocks that do not go through the leaders: to and from the
 * ranks of its own node and of nodes whose pair moves much. */
static void direct(lm_sched *s, const lm_coll_spec *a, const unsigned char *via, int src, size_t base)
{
    int me = a->rank;
    for (int k = 1; k < a->size; k++) {
        int to = ring_add(me, k, a->size), from = ring_add(me, -k, a->size);
        if (sblk_bytes(a, to) && !(via[to / a->ppn] & LM_A2AV_OUT))
            lm_sched_send(s, to, src, base + sblk_off(a, to), sblk_bytes(a, to));
        if (blk_bytes(a, from) && !(via[from / a->ppn] & LM_A2AV_IN))
            lm_sched_recv(s, from, LM_SLOT_RECV, blk_off(a, from), blk_bytes(a, from));
    }
}

/* Sum of counts[j] over the ranks of the nodes marked `bit` in via. */
static size_t via_sum(const lm_coll_spec *a, const unsigned char *via, const size_t *counts, int bit)
{
    size_t t = 0;
    for (int j = 0; j < a->size; j++)
        if (via[j / a->ppn] & bit) t += counts[j];
    return t;
}

/* A member: pack, send the pack to the leader while exchanging directly
 * with the rest, unpack what the leader delivers (blocks in rank order). */
static void member(lm_sched *s, const lm_coll_spec *a, const hier *h, const unsigned char *via, const size_t *mine,
                   int src, size_t base)
{
    int n = a->size;
    size_t P = via_sum(a, via, SENDS(mine, n, 0), LM_A2AV_OUT), D = via_sum(a, via, RECVS(mine, n, 0), LM_A2AV_IN);
    size_t pk = P ? lm_sched_scratch(s, P) : 0, dl = D ? lm_sched_scratch(s, D) : 0;
    own_and_pack(s, a, via, src, base, pk);
    lm_sched_round(s);
    /* messages between two ranks match in the order they are posted: the
     * leader receives the pack before its direct block from this rank, and
     * sends its direct block before the delivery */
    if (P) lm_sched_send(s, h->leader, LM_SLOT_SCRATCH, pk, P);
    direct(s, a, via, src, base);
    if (D) lm_sched_recv(s, h->leader, LM_SLOT_SCRATCH, dl, D);
    lm_sched_round(s);
    size_t at = 0;
    for (int p = 0; p < n; p++) {
        size_t b = blk_bytes(a, p);
        if (!b || !(via[p / a->ppn] & LM_A2AV_IN)) continue;
        lm_sched_copy(s, LM_SLOT_SCRATCH, dl + at, LM_SLOT_RECV, blk_off(a, p), b);
        at += b;
    }
    lm_sched_round(s);
}

/* The leader: its members' packs in (round 1), regrouped into one pack per
 * node (2), the packs swapped with the other leaders while it exchanges
 * its own direct blocks (3), the packs from other nodes split into each
 * member's delivery, its own blocks straight into place (4), deliveries
 * out (5). A pack from node Y holds Y's member q's block for our member m
 * at (q, m) in q-major order; its size is m's receive count from q. */
static void leader(lm_sched *s, const lm_coll_spec *a, const hier *h, const unsigned char *via, const size_t *rows,
                   int src, size_t base)
{
    int n = a->size, M = h->members, nodes = h->nodes;
    /* per member: pack offset and size, read cursor, delivery offset and
     * size, write cursor; per node: out pack and in pack offsets */
    size_t *t = lm_malloc(LM_MEM_COLL, sizeof *t * (6 * (size_t)M + 2 * (size_t)nodes));
    if (!t) {
        s->failed = 1;
        return;
    }
    size_t *g = t, *P = g + M, *cur = P + M, *d = cur + M, *D = d + M, *dcur = D + M, *out = dcur + M,
           *in = out + nodes;
    for (int m = 0; m < M; m++) {
        P[m] = via_sum(a, via, SENDS(rows, n, m), LM_A2AV_OUT);
        D[m] = via_sum(a, via, RECVS(rows, n, m), LM_A2AV_IN);
        g[m] = P[m] ? lm_sched_scratch(s, P[m]) : 0;
        d[m] = m && D[m] ? lm_sched_scratch(s, D[m]) : 0;
        cur[m] = dcur[m] = 0;
    }
    own_and_pack(s, a, via, src, base, g[0]);
    for (int m = 1; m < M; m++)
        if (P[m]) lm_sched_recv(s, h->leader + m, LM_SLOT_SCRATCH, g[m], P[m]);
    lm_sched_round(s);
    for (int y = 0; y < nodes; y++) {
        out[y] = in[y] = 0;
        if (!(via[y] & LM_A2AV_OUT)) continue;
        size_t len = 0;
        for (int m = 0; m < M; m++) len += node_sum(a, SENDS(rows, n, m), y);
        if (!len) continue;
        out[y] = lm_sched_scratch(s, len);
        size_t at = 0;
        for (int m = 0; m < M; m++) {
            size_t run = node_sum(a, SENDS(rows, n, m), y);
            if (run) lm_sched_copy(s, LM_SLOT_SCRATCH, g[m] + cur[m], LM_SLOT_SCRATCH, out[y] + at, run);
            cur[m] += run;
            at += run;
        }
    }
    lm_sched_round(s);
    for (int y = 0; y < nodes; y++) {
        int ly = y * a->ppn;
        size_t olen = 0, ilen = 0;
        for (int m = 0; m < M; m++) {
            olen += via[y] & LM_A2AV_OUT ? node_sum(a, SENDS(rows, n, m), y) : 0;
            ilen += via[y] & LM_A2AV_IN ? node_sum(a, RECVS(rows, n, m), y) : 0;
        }
        if (olen) lm_sched_send(s, ly, LM_SLOT_SCRATCH, out[y], olen);
        if (ilen) lm_sched_recv(s, ly, LM_SLOT_SCRATCH, in[y] = lm_sched_scratch(s, ilen), ilen);
    }
    direct(s, a, via, src, base);
    lm_sched_round(s);
    for (int y = 0; y < nodes; y++) {
        if (!(via[y] & LM_A2AV_IN)) continue;
        hier Y = hier_of(a, y * a->ppn);
        size_t at = in[y];
        for (int q = Y.leader; q < Y.leader + Y.members; q++)
            for (int m = 0; m < M; m++) {
                size_t b = RECVS(rows, n, m)[q];
                if (!b) continue;
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

/* This rank's row of counts: send counts then receive counts (NULL when
 * out of memory; lm_free'd by the caller). */
static size_t *own_row(const lm_coll_spec *a)
{
    size_t *row = lm_malloc(LM_MEM_COLL, 2 * (size_t)a->size * sizeof *row);
    for (int j = 0; row && j < a->size; j++) {
        row[j] = sblk_bytes(a, j);
        row[a->size + j] = blk_bytes(a, j);
    }
    return row;
}

static void data(lm_sched *s, const lm_coll_spec *a, const size_t *rows, const unsigned char *via)
{
    hier h = hier_of(a, a->rank);
    size_t base;
    int src = lm_sched_alltoall_source(s, a, &base);
    if (a->rank == h.leader) {
        leader(s, a, &h, via, rows, src, base);
        return;
    }
    size_t *mine = own_row(a);
    if (!mine) {
        s->failed = 1;
        return;
    }
    member(s, a, &h, via, mine, src, base);
    lm_free(LM_MEM_COLL, mine);
}

void lm_sched_alltoallv_hier(lm_sched *s, const lm_coll_spec *a) { data(s, a, a->a2av->rows, a->a2av->via); }

void lm_sched_alltoallv_hier_whole(lm_sched *s, const lm_coll_spec *a)
{
    hier h = hier_of(a, a->rank);
    size_t row = 2 * (size_t)a->size;
    size_t *rows = lm_malloc(LM_MEM_COLL, (size_t)h.members * row * sizeof *rows), *mine = own_row(a);
    unsigned char *via = lm_malloc(LM_MEM_COLL, (size_t)h.nodes);
    if (rows && mine && via) {
        for (int m = 0; m < h.members; m++) memcpy(rows + (size_t)m * row, mine, row * sizeof *rows);
        lm_a2av_decide(a, rows, via);
        lm_sched_a2av_counts(s, a);
        lm_sched_a2av_verdict(s, a);
        data(s, a, rows, via);
    } else {
        s->failed = 1;
    }
    lm_free(LM_MEM_COLL, rows);
    lm_free(LM_MEM_COLL, mine);
    lm_free(LM_MEM_COLL, via);
}
