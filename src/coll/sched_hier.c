/* Hierarchical schedules for communicators across hosts (spec.ppn > 0: the
 * ranks of each node are consecutive, ppn of them, the last node possibly
 * fewer). Three phases: the ranks of a node meet their leader (the node's
 * first rank) over the node, the leaders run the collective among
 * themselves with the algorithm the selection table picks for that many
 * ranks and bytes, and each leader finishes its node. Only the middle phase
 * crosses the network, once per node instead of once per rank. */
#include "coll/sched_util.h"
#include "util/lm_mem.h"

/* A member's whole part where its leader does the work: its input to the
 * leader, then what the leader sends back, each in a round of its own
 * (the input may be the receive buffer). */
static void via_leader(lm_sched *s, int leader, int in_slot, size_t in_off, size_t in_bytes, size_t out_bytes)
{
    lm_sched_send(s, leader, in_slot, in_off, in_bytes);
    lm_sched_round(s);
    lm_sched_recv(s, leader, LM_SLOT_RECV, 0, out_bytes);
    lm_sched_round(s);
}

/* The leaders' steps from `from` on name leader indices: make them ranks. */
static void leaders_to_ranks(lm_sched *s, const lm_coll_spec *a, size_t from)
{
    for (size_t i = from; i < s->nsteps; i++)
        if (s->steps[i].kind == LM_STEP_SEND || s->steps[i].kind == LM_STEP_RECV) s->steps[i].peer *= a->ppn;
}

/* The leaders' phase: the table's algorithm for `nodes` ranks, run as the
 * leader of node h.node, its peers (leader indices) turned into ranks. */
static void among_leaders(lm_sched *s, const lm_coll_spec *a, const hier *h, int root_node, int in_place)
{
    lm_coll_spec sub = *a;
    sub.size = h->nodes;
    sub.rank = h->node;
    sub.root = root_node;
    sub.in_place = in_place;
    sub.ppn = 0;
    sub.shm = 0;
    size_t from = s->nsteps;
    lm_coll_select(&sub)->gen(s, &sub);
    leaders_to_ranks(s, a, from);
    lm_sched_round(s);
}

void lm_sched_barrier_hier(lm_sched *s, const lm_coll_spec *a)
{
    hier h = hier_of(a, a->rank);
    if (a->rank != h.leader) {
        via_leader(s, h.leader, LM_SLOT_SEND, 0, 0, 0);
        return;
    }
    for (int m = 1; m < h.members; m++) lm_sched_recv(s, h.leader + m, LM_SLOT_RECV, 0, 0);
    lm_sched_round(s);
    among_leaders(s, a, &h, 0, 0);
    for (int m = 1; m < h.members; m++) lm_sched_send(s, h.leader + m, LM_SLOT_SEND, 0, 0);
    lm_sched_round(s);
}

/* The root hands the data to its node's leader when it is not the leader;
 * the leaders broadcast from the root's node; each leader sends it on to
 * the rest of its node. */
void lm_sched_bcast_hier(lm_sched *s, const lm_coll_spec *a)
{
    size_t bytes = a->bytes;
    hier h = hier_of(a, a->rank), r = hier_of(a, a->root);
    int me = a->rank, root = a->root;
    if (me == root && root != r.leader) {
        lm_sched_send(s, r.leader, LM_SLOT_RECV, 0, bytes);
        lm_sched_round(s);
        return;
    }
    if (me != h.leader) {
        lm_sched_recv(s, h.leader, LM_SLOT_RECV, 0, bytes);
        lm_sched_round(s);
        return;
    }
    if (me == r.leader && root != me) {
        lm_sched_recv(s, root, LM_SLOT_RECV, 0, bytes);
        lm_sched_round(s);
    }
    among_leaders(s, a, &h, r.node, 0);
    for (int m = 1; m < h.members; m++)
        if (h.leader + m != root) lm_sched_send(s, h.leader + m, LM_SLOT_RECV, 0, bytes);
    lm_sched_round(s);
}

/* A leader combines its node's inputs into acc (its own input first, then
 * the others in schedule order: commutative ops only). */
static void combine_node(lm_sched *s, const lm_coll_spec *a, const hier *h, int acc_slot, size_t acc_off)
{
    size_t bytes = a->bytes;
    size_t in = h->members > 1 ? lm_sched_scratch(s, (size_t)(h->members - 1) * bytes) : 0;
    for (int m = 1; m < h->members; m++)
        lm_sched_recv(s, h->leader + m, LM_SLOT_SCRATCH, in + (size_t)(m - 1) * bytes, bytes);
    lm_sched_round(s);
    for (int m = 1; m < h->members; m++) {
        lm_sched_reduce(s, LM_SLOT_SCRATCH, in + (size_t)(m - 1) * bytes, acc_slot, acc_off, bytes);
        lm_sched_round(s);
    }
}

/* Commutative ops only: each leader combines its node's inputs, the
 * leaders reduce to the root's node along a binomial tree, and that node's
 * leader hands the result to the root when it is not the root itself. */
void lm_sched_reduce_hier(lm_sched *s, const lm_coll_spec *a)
{
    size_t bytes = a->bytes;
    if (!bytes) return;
    hier h = hier_of(a, a->rank), r = hier_of(a, a->root);
    int me = a->rank, root = a->root;
    if (me != h.leader) {
        lm_sched_send(s, h.leader, me == root ? input_slot(a) : LM_SLOT_SEND, 0, bytes);
        lm_sched_round(s);
        if (me == root) {
            lm_sched_recv(s, h.leader, LM_SLOT_RECV, 0, bytes);
            lm_sched_round(s);
        }
        return;
    }
    /* the partial result: in the receive buffer on the root, else scratch */
    int acc_slot = me == root ? LM_SLOT_RECV : LM_SLOT_SCRATCH;
    size_t acc_off = me == root ? 0 : lm_sched_scratch(s, bytes);
    int in_slot = me == root ? input_slot(a) : LM_SLOT_SEND;
    if (in_slot != acc_slot) lm_sched_copy(s, in_slot, 0, acc_slot, acc_off, bytes);
    combine_node(s, a, &h, acc_slot, acc_off);
    lm_coll_spec sub = *a;
    sub.size = h.nodes;
    sub.rank = h.node;
    sub.root = r.node;
    sub.ppn = 0;
    sub.shm = 0;
    size_t from = s->nsteps;
    lm_sched_reduce_tree(s, &sub, bytes, acc_slot, acc_off, acc_slot, acc_off, r.node);
    leaders_to_ranks(s, a, from);
    lm_sched_round(s);
    if (me == r.leader && root != me) {
        lm_sched_send(s, root, acc_slot, acc_off, bytes);
        lm_sched_round(s);
    }
}

/* Commutative ops only: a leader combines its node's inputs in arrival
 * order. The leaders allreduce the node results in place, then send the
 * result to their nodes. */
void lm_sched_allreduce_hier(lm_sched *s, const lm_coll_spec *a)
{
    size_t bytes = a->bytes;
    hier h = hier_of(a, a->rank);
    if (!bytes) return;
    if (a->rank != h.leader) {
        via_leader(s, h.leader, input_slot(a), 0, bytes, bytes);
        return;
    }
    if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, 0, bytes);
    combine_node(s, a, &h, LM_SLOT_RECV, 0);
    among_leaders(s, a, &h, 0, 1);
    for (int m = 1; m < h.members; m++) lm_sched_send(s, h.leader + m, LM_SLOT_RECV, 0, bytes);
    lm_sched_round(s);
}

/* A node's blocks are one run of the buffer (its ranks are consecutive):
 * where node j's run starts and how long it is, for blocks of b bytes. */
static void node_run(const lm_coll_spec *a, int j, size_t b, size_t *off, size_t *len)
{
    hier n = hier_of(a, j * a->ppn);
    *off = (size_t)n.leader * b;
    *len = (size_t)n.members * b;
}

/* The root's node sends it their blocks directly; every other node's
 * members send theirs to their leader, which sends the node's run to the
 * root in one message. */
void lm_sched_gather_hier(lm_sched *s, const lm_coll_spec *a)
{
    size_t b = a->bytes;
    if (!b) return;
    hier h = hier_of(a, a->rank), r = hier_of(a, a->root);
    int me = a->rank, root = a->root;
    if (me == root) {
        if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, (size_t)me * b, b);
        for (int m = 0; m < r.members; m++)
            if (r.leader + m != me) lm_sched_recv(s, r.leader + m, LM_SLOT_RECV, (size_t)(r.leader + m) * b, b);
        for (int j = 0; j < h.nodes; j++) {
            if (j == r.node) continue;
            size_t off, len;
            node_run(a, j, b, &off, &len);
            lm_sched_recv(s, j * a->ppn, LM_SLOT_RECV, off, len);
        }
        lm_sched_round(s);
        return;
    }
    if (h.node == r.node || me != h.leader) {
        lm_sched_send(s, h.node == r.node ? root : h.leader, LM_SLOT_SEND, 0, b);
        lm_sched_round(s);
        return;
    }
    size_t run = lm_sched_scratch(s, (size_t)h.members * b);
    lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_SCRATCH, run, b);
    for (int m = 1; m < h.members; m++) lm_sched_recv(s, h.leader + m, LM_SLOT_SCRATCH, run + (size_t)m * b, b);
    lm_sched_round(s);
    lm_sched_send(s, root, LM_SLOT_SCRATCH, run, (size_t)h.members * b);
    lm_sched_round(s);
}

/* Members send their block to their leader; the leaders pass node runs
 * around a ring of leaders (nodes - 1 steps); each leader sends the whole
 * buffer to its node. */
void lm_sched_allgather_hier(lm_sched *s, const lm_coll_spec *a)
{
    size_t b = a->bytes, all = (size_t)a->size * a->bytes;
    if (!b) return;
    hier h = hier_of(a, a->rank);
    int me = a->rank;
    if (me != h.leader) {
        via_leader(s, h.leader, input_slot(a), a->in_place ? (size_t)me * b : 0, b, all);
        return;
    }
    if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, 0, LM_SLOT_RECV, (size_t)me * b, b);
    for (int m = 1; m < h.members; m++) lm_sched_recv(s, h.leader + m, LM_SLOT_RECV, (size_t)(h.leader + m) * b, b);
    lm_sched_round(s);
    int right = (h.node + 1) % h.nodes, left = (h.node + h.nodes - 1) % h.nodes;
    for (int k = 0; k < h.nodes - 1; k++) {
        size_t soff, slen, roff, rlen;
        node_run(a, (h.node - k + h.nodes) % h.nodes, b, &soff, &slen);
        node_run(a, (h.node - k - 1 + h.nodes) % h.nodes, b, &roff, &rlen);
        lm_sched_send(s, right * a->ppn, LM_SLOT_RECV, soff, slen);
        lm_sched_recv(s, left * a->ppn, LM_SLOT_RECV, roff, rlen);
        lm_sched_round(s);
    }
    for (int m = 1; m < h.members; m++) lm_sched_send(s, h.leader + m, LM_SLOT_RECV, 0, all);
    lm_sched_round(s);
}

/* gather's mirror: the root sends its own node their blocks directly and
 * every other node its run, in one message to its first rank, which hands
 * the members theirs. */
void lm_sched_scatter_hier(lm_sched *s, const lm_coll_spec *a)
{
    size_t b = a->bytes;
    if (!b) return;
    hier h = hier_of(a, a->rank), r = hier_of(a, a->root);
    int me = a->rank, root = a->root;
    if (me == root) {
        for (int m = 0; m < r.members; m++)
            if (r.leader + m != me) lm_sched_send(s, r.leader + m, LM_SLOT_SEND, (size_t)(r.leader + m) * b, b);
        for (int j = 0; j < h.nodes; j++) {
            if (j == r.node) continue;
            size_t off, len;
            node_run(a, j, b, &off, &len);
            lm_sched_send(s, j * a->ppn, LM_SLOT_SEND, off, len);
        }
        if (!a->in_place) lm_sched_copy(s, LM_SLOT_SEND, (size_t)me * b, LM_SLOT_RECV, 0, b);
        lm_sched_round(s);
        return;
    }
    if (h.node == r.node || me != h.leader) {
        lm_sched_recv(s, h.node == r.node ? root : h.leader, LM_SLOT_RECV, 0, b);
        lm_sched_round(s);
        return;
    }
    size_t run = lm_sched_scratch(s, (size_t)h.members * b);
    lm_sched_recv(s, root, LM_SLOT_SCRATCH, run, (size_t)h.members * b);
    lm_sched_round(s);
    for (int m = 1; m < h.members; m++) lm_sched_send(s, h.leader + m, LM_SLOT_SCRATCH, run + (size_t)m * b, b);
    lm_sched_copy(s, LM_SLOT_SCRATCH, run, LM_SLOT_RECV, 0, b);
    lm_sched_round(s);
}

/* Scan and exscan (any op: operands stay in rank order). Each member sends
 * its input to its leader; the leader folds its node's inputs into the
 * node's total, the leaders find the exclusive prefix of the totals of the
 * nodes before theirs (recursive doubling, on the leaders' scratch), and
 * each leader turns its node's inputs into their prefixes and sends each
 * member its own: the network carries ceil(log2 nodes) exchanges of one
 * vector per leader, where a flat scan has every rank cross it. Rank 0's
 * receive buffer is left alone by exscan, as elsewhere. */
void lm_sched_scan_hier(lm_sched *s, const lm_coll_spec *a)
{
    size_t b = a->bytes;
    if (!b) return;
    int ex = a->kind == LM_COLL_EXSCAN, in = input_slot(a);
    hier h = hier_of(a, a->rank);
    if (a->rank != h.leader) {
        via_leader(s, h.leader, in, 0, b, b);
        return;
    }
    /* block m of x: member m's input, later the prefix through member m */
    size_t x = lm_sched_scratch(s, (size_t)h.members * b);
    size_t p = lm_sched_scratch(s, b), t = lm_sched_scratch(s, b), pre = lm_sched_scratch(s, b);
    lm_sched_copy(s, in, 0, LM_SLOT_SCRATCH, x, b);
    for (int m = 1; m < h.members; m++) lm_sched_recv(s, h.leader + m, LM_SLOT_SCRATCH, x + (size_t)m * b, b);
    lm_sched_round(s);
    /* the node's total, folded from the right: x_m op (... op x_last) */
    lm_sched_copy(s, LM_SLOT_SCRATCH, x + (size_t)(h.members - 1) * b, LM_SLOT_SCRATCH, p, b);
    lm_sched_round(s);
    for (int m = h.members - 2; m >= 0; m--) {
        lm_sched_reduce(s, LM_SLOT_SCRATCH, x + (size_t)m * b, LM_SLOT_SCRATCH, p, b);
        lm_sched_round(s);
    }
    /* among the leaders: p, the partial of this leader's group so far;
     * pre, the totals of every node before this one */
    int have_pre = lm_sched_prefix_doubling(s, a, h.node, h.nodes, a->ppn, b, p, t, LM_SLOT_SCRATCH, pre, 0);
    /* the node's prefixes, in place: x_0 = pre op x_0, x_m = x_(m-1) op x_m */
    if (have_pre) {
        lm_sched_reduce(s, LM_SLOT_SCRATCH, pre, LM_SLOT_SCRATCH, x, b);
        lm_sched_round(s);
    }
    for (int m = 1; m < h.members; m++) {
        lm_sched_reduce(s, LM_SLOT_SCRATCH, x + (size_t)(m - 1) * b, LM_SLOT_SCRATCH, x + (size_t)m * b, b);
        lm_sched_round(s);
    }
    /* scan: member m gets the prefix through m; exscan: through m - 1 */
    if (!ex) lm_sched_copy(s, LM_SLOT_SCRATCH, x, LM_SLOT_RECV, 0, b);
    else if (have_pre) lm_sched_copy(s, LM_SLOT_SCRATCH, pre, LM_SLOT_RECV, 0, b);
    for (int m = 1; m < h.members; m++)
        lm_sched_send(s, h.leader + m, LM_SLOT_SCRATCH, x + (size_t)(ex ? m - 1 : m) * b, b);
    lm_sched_round(s);
}

/* Where node j's blocks of a reduce-scatter lie in the input (one run: its
 * ranks are consecutive), and how long the run is. */
static size_t rs_run(const lm_coll_spec *a, int j, size_t *off)
{
    hier n = hier_of(a, j * a->ppn);
    size_t len = 0;
    *off = blk_off(a, n.leader);
    for (int m = 0; m < n.members; m++) len += blk_bytes(a, n.leader + m);
    return len;
}

/* Reduce-scatter and its block form (commutative ops): each member sends
 * its whole input to its leader, which adds the node's inputs up; each
 * leader sends every other leader that node's run of the sum and adds the
 * runs of its own node it gets back (every leader pair once, all at once);
 * each leader hands its members their blocks. */
void lm_sched_reduce_scatter_hier(lm_sched *s, const lm_coll_spec *a)
{
    size_t total = 0;
    for (int i = 0; i < a->size; i++) total += blk_bytes(a, i);
    if (!total) return;
    int in = input_slot(a), me = a->rank;
    hier h = hier_of(a, me);
    if (me != h.leader) {
        via_leader(s, h.leader, in, 0, total, blk_bytes(a, me));
        return;
    }
    size_t acc = lm_sched_scratch(s, total), t = lm_sched_scratch(s, total);
    lm_sched_copy(s, in, 0, LM_SLOT_SCRATCH, acc, total);
    lm_sched_round(s);
    for (int m = 1; m < h.members; m++) {
        lm_sched_recv(s, h.leader + m, LM_SLOT_SCRATCH, t, total);
        lm_sched_round(s);
        lm_sched_reduce(s, LM_SLOT_SCRATCH, t, LM_SLOT_SCRATCH, acc, total);
        lm_sched_round(s);
    }
    size_t mine_off, mine = rs_run(a, h.node, &mine_off);
    size_t parts = mine && h.nodes > 1 ? lm_sched_scratch(s, (size_t)(h.nodes - 1) * mine) : 0;
    for (int j = 0, k = 0; j < h.nodes; j++) {
        if (j == h.node) continue;
        size_t off, len = rs_run(a, j, &off);
        if (len) lm_sched_send(s, j * a->ppn, LM_SLOT_SCRATCH, acc + off, len);
        if (mine) lm_sched_recv(s, j * a->ppn, LM_SLOT_SCRATCH, parts + (size_t)k * mine, mine);
        k++;
    }
    lm_sched_round(s);
    for (int k = 0; mine && k < h.nodes - 1; k++) {
        lm_sched_reduce(s, LM_SLOT_SCRATCH, parts + (size_t)k * mine, LM_SLOT_SCRATCH, acc + mine_off, mine);
        lm_sched_round(s);
    }
    if (blk_bytes(a, me)) lm_sched_copy(s, LM_SLOT_SCRATCH, acc + blk_off(a, me), LM_SLOT_RECV, 0, blk_bytes(a, me));
    for (int m = 1; m < h.members; m++) {
        int r = h.leader + m;
        lm_sched_send(s, r, LM_SLOT_SCRATCH, acc + blk_off(a, r), blk_bytes(a, r));
    }
    lm_sched_round(s);
}

/* Alltoall of small blocks: each member sends its whole send row to its
 * leader; the leader moves its own node's blocks between the rows, packs
 * for every other node the blocks its members have for that node's
 * members, swaps the packs with the other leaders (every pair once, all at
 * once), unpacks what came back into its members' receive rows and hands
 * them out. The network carries one message per pair of nodes instead of
 * one per pair of ranks. The leader holds about four times its node's
 * rows in scratch, so the selection table keeps it to small blocks. */
void lm_sched_alltoall_hier(lm_sched *s, const lm_coll_spec *a)
{
    size_t b = a->bytes, row = (size_t)a->size * b;
    if (!b) return;
    int in = input_slot(a);
    hier h = hier_of(a, a->rank);
    int M = h.members;
    if (a->rank != h.leader) {
        via_leader(s, h.leader, in, 0, row, row);
        return;
    }
    /* g: the members' send rows; r: their receive rows; out and back: the
     * packs for and from the other nodes, in node order */
    size_t g = lm_sched_scratch(s, (size_t)M * row), r = lm_sched_scratch(s, (size_t)M * row);
    size_t others = (size_t)M * (size_t)(a->size - M) * b;
    size_t out = lm_sched_scratch(s, others), back = lm_sched_scratch(s, others);
    lm_sched_copy(s, in, 0, LM_SLOT_SCRATCH, g, row);
    for (int m = 1; m < M; m++) lm_sched_recv(s, h.leader + m, LM_SLOT_SCRATCH, g + (size_t)m * row, row);
    lm_sched_round(s);
    /* within the node: member q's block for member m goes from g[q][L+m]
     * to r[m][L+q] */
    for (int m = 0; m < M; m++)
        lm_sched_copy_blocks(s, LM_SLOT_SCRATCH, g + (size_t)(h.leader + m) * b, a->size, LM_SLOT_SCRATCH,
                             r + (size_t)m * row + (size_t)h.leader * b, 1, b, (uint32_t)M);
    /* for node Y: member m's blocks for Y's members, one run of its row */
    size_t at = 0;
    for (int y = 0; y < h.nodes; y++) {
        if (y == h.node) continue;
        hier Y = hier_of(a, y * a->ppn);
        for (int m = 0; m < M; m++)
            lm_sched_copy(s, LM_SLOT_SCRATCH, g + (size_t)m * row + (size_t)Y.leader * b, LM_SLOT_SCRATCH,
                          out + at + (size_t)m * Y.members * b, (size_t)Y.members * b);
        at += (size_t)M * Y.members * b;
    }
    lm_sched_round(s);
    at = 0;
    for (int y = 0; y < h.nodes; y++) {
        if (y == h.node) continue;
        size_t len = (size_t)M * hier_of(a, y * a->ppn).members * b;
        lm_sched_send(s, y * a->ppn, LM_SLOT_SCRATCH, out + at, len);
        lm_sched_recv(s, y * a->ppn, LM_SLOT_SCRATCH, back + at, len);
        at += len;
    }
    lm_sched_round(s);
    /* from node Y, block (q, m) (Y's member q for our member m) at
     * (q * M + m) * b of its pack, to r[m][L_Y + q] */
    at = 0;
    for (int y = 0; y < h.nodes; y++) {
        if (y == h.node) continue;
        hier Y = hier_of(a, y * a->ppn);
        for (int m = 0; m < M; m++)
            lm_sched_copy_blocks(s, LM_SLOT_SCRATCH, back + at + (size_t)m * b, M, LM_SLOT_SCRATCH,
                                 r + (size_t)m * row + (size_t)Y.leader * b, 1, b, (uint32_t)Y.members);
        at += (size_t)M * Y.members * b;
    }
    lm_sched_round(s);
    lm_sched_copy(s, LM_SLOT_SCRATCH, r, LM_SLOT_RECV, 0, row);
    for (int m = 1; m < M; m++) lm_sched_send(s, h.leader + m, LM_SLOT_SCRATCH, r + (size_t)m * row, row);
    lm_sched_round(s);
}

/* Node j's run of the packed buffer whose rank i starts at at[i] (at[n]:
 * the end): its offset, and its length in *len. */
static size_t packed_run(const lm_coll_spec *a, const size_t *at, int j, size_t *len)
{
    int lo = j * a->ppn, hi = lo + a->ppn < a->size ? lo + a->ppn : a->size;
    *len = at[hi] - at[lo];
    return at[lo];
}

/* Allgather with blocks of any size at any place (allgatherv): the blocks
 * travel packed in rank order, so that a node's blocks are one run; where
 * the receive buffer is laid out that way already (displacements the
 * running sums of the counts) it is the packed buffer itself. Members send
 * their block to their leader, the leaders pass node runs round a ring,
 * and each leader sends its members the whole packed buffer, which each
 * unpacks where it is not the receive buffer. Up to 32 KiB in all. */
void lm_sched_allgatherv_hier(lm_sched *s, const lm_coll_spec *a)
{
    int n = a->size, me = a->rank;
    size_t total = 0;
    int packed = 1;
    for (int i = 0; i < n; i++) {
        if (blk_bytes(a, i) && blk_off(a, i) != total) packed = 0;
        total += blk_bytes(a, i);
    }
    if (!total) return;
    /* every member gets the whole buffer from its leader, which pays once
     * the blocks are large: 4 virtual hosts x 4 ranks, blocks of 8 B, 256
     * B, 1 KiB and 4 KiB: 110, 112-132, 151-190 and 555 us against the
     * ring's 378-407, 424-508, 511-514 and 472-592. So above 32 KiB in all
     * (the same on every rank) the ring runs instead. */
    if (total > ((size_t)32 << 10)) {
        lm_sched_allgather_ring(s, a);
        return;
    }
    hier h = hier_of(a, me);
    int slot = packed ? LM_SLOT_RECV : LM_SLOT_SCRATCH;
    size_t base = packed ? 0 : lm_sched_scratch(s, total);
    /* at[i]: where rank i's block starts in the packed buffer (at[n]:
     * total), only while the schedule is built */
    size_t *at = lm_malloc(LM_MEM_COLL, sizeof *at * ((size_t)n + 1));
    if (!at) {
        s->failed = 1;
        return;
    }
    at[0] = 0;
    for (int i = 0; i < n; i++) at[i + 1] = at[i] + blk_bytes(a, i);
#define RUN_AT(j) at[(j)*a->ppn]
#define RUN_END(j) at[(j + 1) * a->ppn < n ? (j + 1) * a->ppn : n]
    size_t mine = blk_bytes(a, me), in_off = a->in_place ? blk_off(a, me) : 0;
    int in = input_slot(a);
    if (me != h.leader) {
        if (mine) lm_sched_send(s, h.leader, in, in_off, mine);
        lm_sched_round(s);
        lm_sched_recv(s, h.leader, slot, base, total);
        lm_sched_round(s);
    } else {
        if (mine && !(packed && a->in_place)) lm_sched_copy(s, in, in_off, slot, base + at[me], mine);
        for (int i = me + 1; i < me + h.members; i++)
            if (blk_bytes(a, i)) lm_sched_recv(s, i, slot, base + at[i], blk_bytes(a, i));
        lm_sched_round(s);
        int right = (h.node + 1) % h.nodes, left = (h.node + h.nodes - 1) % h.nodes;
        for (int k = 0; k < h.nodes - 1; k++) {
            int sn = (h.node - k + h.nodes) % h.nodes, rn = (h.node - k - 1 + h.nodes) % h.nodes;
            size_t slen, soff = packed_run(a, at, sn, &slen), rlen, roff = packed_run(a, at, rn, &rlen);
            if (slen) lm_sched_send(s, right * a->ppn, slot, base + soff, slen);
            if (rlen) lm_sched_recv(s, left * a->ppn, slot, base + roff, rlen);
            lm_sched_round(s);
        }
        for (int m = 1; m < h.members; m++) lm_sched_send(s, h.leader + m, slot, base, total);
        lm_sched_round(s);
    }
    /* unpack: every block to its place (the own block is there already
     * where it was given in place) */
    if (!packed) {
        for (int i = 0; i < n; i++)
            if (blk_bytes(a, i) && !(i == me && a->in_place))
                lm_sched_copy(s, LM_SLOT_SCRATCH, base + at[i], LM_SLOT_RECV, blk_off(a, i), blk_bytes(a, i));
        lm_sched_round(s);
    }
    lm_free(LM_MEM_COLL, at);
}
