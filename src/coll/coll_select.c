/* Which algorithm runs a collective: every algorithm in one list, and one
 * selection table read top to bottom. LEANMPI_<COLL>_ALGORITHM=<name>
 * overrides the table for one collective (leanmpi-info lists the names). */
#include "coll/coll_alg.h"
#include "coll/decompose.h"
#include "util/lm_cvar.h"
#include "util/lm_state.h"
#include <stdio.h>
#include <strings.h>

static const char *const kind_names[LM_COLL_KIND_COUNT] = {
    "barrier",  "bcast",     "reduce",    "allreduce",      "gather",
    "gatherv",  "scatter",   "scatterv",  "allgather",      "allgatherv",
    "alltoall", "alltoallv", "alltoallw", "reduce_scatter", "reduce_scatter_block",
    "scan",     "exscan",
};

const char *lm_coll_kind_name(int kind) { return kind >= 0 && kind < LM_COLL_KIND_COUNT ? kind_names[kind] : NULL; }

int lm_coll_kind_from_name(const char *name)
{
    for (int k = 0; k < LM_COLL_KIND_COUNT; k++)
        if (!strcasecmp(name, kind_names[k])) return k;
    return -1;
}

#define ALG(kind, name, gen, comm_only, summary)                       \
    {                                                                  \
        name, LM_COLL_##kind, lm_sched_##gen, comm_only, 0, 0, summary \
    }
/* Node shared-memory algorithms: only where the communicator has mailboxes */
#define SHM(kind, gen, summary)                                 \
    {                                                           \
        "shm", LM_COLL_##kind, lm_sched_##gen, 0, 1, 0, summary \
    }
/* By address: only where every member shares one address space */
#define DIRECT(kind, gen, summary)                                    \
    {                                                                 \
        "direct", LM_COLL_##kind, lm_sched_##gen, 0, 0, 0, summary, 1 \
    }
/* Hierarchical algorithms: only where the communicator spans nodes in
 * blocks of consecutive ranks */
#define HIER(kind, gen, comm_only, summary)                              \
    {                                                                    \
        "hier", LM_COLL_##kind, lm_sched_##gen, comm_only, 0, 1, summary \
    }
/* ... that finish a node leader's schedule once its members' counts are
 * in (coll_counts_first.h) */
#define HIER_COUNTS_FIRST(kind, gen, summary)                          \
    {                                                                  \
        "hier", LM_COLL_##kind, lm_sched_##gen, 0, 0, 1, summary, 0, 1 \
    }
const lm_coll_alg lm_coll_algs[] = {
    ALG(BARRIER, "dissemination", barrier_dissemination, 0, "ceil(log2 n) rounds, any n"),
    ALG(BARRIER, "recursive_doubling", barrier_recursive_doubling, 0, "pairwise exchanges, extra ranks fold in"),
    SHM(BARRIER, barrier_shm, "one node: every rank posts a flag and reads the others'"),
    HIER(BARRIER, barrier_hier, 0, "several nodes: to the node's first rank, among those, back"),
    ALG(BCAST, "binomial", bcast_binomial, 0, "binomial tree, log2(n) steps of the whole message"),
    ALG(BCAST, "scatter_allgather", bcast_scatter_allgather, 0, "binomial scatter then ring allgather"),
    ALG(BCAST, "chain", bcast_chain, 0, "pipelined chain of 128 KiB pieces"),
    SHM(BCAST, bcast_shm, "one node: the root posts, every rank reads"),
    DIRECT(BCAST, bcast_direct, "one address space: every rank copies from the root's buffer"),
    HIER(BCAST, bcast_hier, 0, "several nodes: root to its node's first rank, among those, then each node"),
    ALG(REDUCE, "binomial", reduce_binomial, 0, "binomial tree, operands in rank order"),
    ALG(REDUCE, "reduce_scatter_gather", reduce_scatter_gather, 1, "ring reduce-scatter, then the pieces to the root"),
    SHM(REDUCE, reduce_shm, "one node: every rank posts its input, the root combines them in rank order"),
    DIRECT(REDUCE, reduce_direct, "one address space: the root combines the inputs in place, in rank order"),
    HIER(REDUCE, reduce_hier, 1, "several nodes: reduce to each node's first rank, binomial among those, to the root"),
    ALG(ALLREDUCE, "recursive_doubling", allreduce_recursive_doubling, 0, "log2(n) exchanges of the whole vector"),
    ALG(ALLREDUCE, "ring", allreduce_ring, 1, "ring reduce-scatter then ring allgather"),
    ALG(ALLREDUCE, "reduce_bcast", allreduce_reduce_bcast, 0, "binomial reduce to 0 then binomial bcast"),
    SHM(ALLREDUCE, allreduce_shm, "one node: every rank posts its input and combines all of them in rank order"),
    DIRECT(ALLREDUCE, allreduce_direct, "one address space: every rank combines all inputs in place, in rank order"),
    HIER(ALLREDUCE, allreduce_hier, 1, "several nodes: reduce to each node's first rank, allreduce among those, back"),
    ALG(GATHER, "binomial", gather_binomial, 0, "subtrees gathered up a binomial tree"),
    ALG(GATHER, "linear", gather_linear, 0, "root receives every block"),
    SHM(GATHER, gather_shm, "one node: every rank posts its block, the root reads them"),
    DIRECT(GATHER, gather_direct, "one address space: the root copies every block from its owner's buffer"),
    HIER(GATHER, gather_hier, 0,
         "several nodes: the root's node to it directly, each other node's run from its first rank"),
    ALG(GATHERV, "linear", gather_linear, 0, "root receives every block"),
    HIER_COUNTS_FIRST(GATHERV, gatherv_hier,
                      "several nodes: counts to the node's first rank; its small blocks in one pack from there to "
                      "the root, large ones directly"),
    ALG(SCATTER, "binomial", scatter_binomial, 0, "subtrees sent down a binomial tree"),
    ALG(SCATTER, "linear", scatter_linear, 0, "root sends every block"),
    SHM(SCATTER, scatter_shm, "one node: the root posts all blocks, every rank reads its own"),
    DIRECT(SCATTER, scatter_direct, "one address space: every rank copies its block from the root's buffer"),
    HIER(SCATTER, scatter_hier, 0,
         "several nodes: the root's node from it directly, each other node's run to its first rank"),
    ALG(SCATTERV, "linear", scatter_linear, 0, "root sends every block"),
    HIER_COUNTS_FIRST(SCATTERV, scatterv_hier,
                      "several nodes: counts to the node's first rank; the root sends it the node's small blocks "
                      "in one pack, large ones directly"),
    ALG(ALLGATHER, "bruck", allgather_bruck, 0, "ceil(log2 n) steps, any n"),
    ALG(ALLGATHER, "recursive_doubling", allgather_recursive_doubling, 0, "log2(n) steps; other n: ring"),
    ALG(ALLGATHER, "ring", allgather_ring, 0, "n-1 steps to the right"),
    SHM(ALLGATHER, allgather_shm, "one node: every rank posts its block and reads the others'"),
    DIRECT(ALLGATHER, allgather_direct, "one address space: every rank copies each block from its owner's buffer"),
    HIER(ALLGATHER, allgather_hier, 0,
         "several nodes: to the node's first rank, node runs round a ring of those, back"),
    ALG(ALLGATHERV, "ring", allgather_ring, 0, "n-1 steps to the right"),
    HIER(ALLGATHERV, allgatherv_hier, 0,
         "several nodes, up to 32 KiB in all (the ring above): blocks to the node's first rank, packed node runs "
         "round a ring of those, back"),
    ALG(ALLTOALL, "bruck", alltoall_bruck, 0, "ceil(log2 n) steps of n/2 packed blocks"),
    ALG(ALLTOALL, "pairwise", alltoall_pairwise, 0, "n-1 steps, one peer each"),
    ALG(ALLTOALL, "linear", alltoall_linear, 0, "all peers at once, 32 at most in flight"),
    SHM(ALLTOALL, alltoall_shm, "one node: every rank posts its blocks and reads its own from each"),
    DIRECT(ALLTOALL, alltoall_direct, "one address space: every rank copies its block from each peer's buffer"),
    HIER(ALLTOALL, alltoall_hier, 0,
         "several nodes: send rows to the node's first rank, one pack per pair of nodes among those, back"),
    ALG(ALLTOALLV, "pairwise", alltoall_pairwise, 0, "n-1 steps, one peer each"),
    ALG(ALLTOALLV, "linear", alltoall_linear, 0, "all peers at once, 32 at most in flight"),
    HIER_COUNTS_FIRST(ALLTOALLV, alltoallv_hier,
                      "several nodes: counts to the node's first rank; small blocks one pack per pair of nodes "
                      "among those, large ones rank to rank"),
    ALG(ALLTOALLW, "pairwise", alltoall_pairwise, 0, "n-1 steps, one peer each"),
    ALG(ALLTOALLW, "linear", alltoall_linear, 0, "all peers at once, 32 at most in flight"),
    HIER_COUNTS_FIRST(ALLTOALLW, alltoallv_hier,
                      "several nodes: counts to the node's first rank; small blocks one pack per pair of nodes "
                      "among those, large ones rank to rank"),
    ALG(REDUCE_SCATTER, "ring", reduce_scatter_ring, 1, "n-1 steps around a ring"),
    ALG(REDUCE_SCATTER, "reduce_scatterv", reduce_scatter_reduce_scatterv, 0, "binomial reduce to 0, then scatter"),
    HIER(REDUCE_SCATTER, reduce_scatter_hier, 1,
         "several nodes: inputs added up at the node's first rank, node runs swapped among those, blocks back"),
    ALG(REDUCE_SCATTER_BLOCK, "ring", reduce_scatter_ring, 1, "n-1 steps around a ring"),
    ALG(REDUCE_SCATTER_BLOCK, "reduce_scatterv", reduce_scatter_reduce_scatterv, 0,
        "binomial reduce to 0, then scatter"),
    SHM(REDUCE_SCATTER_BLOCK, reduce_scatter_block_shm,
        "one node: every rank posts its input, rank r combines every block r in rank order"),
    DIRECT(REDUCE_SCATTER_BLOCK, reduce_scatter_block_direct,
           "one address space: rank r combines every block r in place, in rank order"),
    HIER(REDUCE_SCATTER_BLOCK, reduce_scatter_hier, 1,
         "several nodes: inputs added up at the node's first rank, node runs swapped among those, blocks back"),
    ALG(SCAN, "recursive_doubling", scan_recursive_doubling, 0, "ceil(log2 n) exchanges"),
    ALG(SCAN, "linear", scan_linear, 0, "a chain, n-1 steps"),
    SHM(SCAN, scan_shm, "one node: every rank posts its input, rank r combines those of ranks 0..r"),
    DIRECT(SCAN, scan_direct, "one address space: rank r combines the inputs of ranks 0..r in place"),
    ALG(EXSCAN, "recursive_doubling", scan_recursive_doubling, 0, "ceil(log2 n) exchanges"),
    ALG(EXSCAN, "linear", scan_linear, 0, "a chain, n-1 steps"),
    SHM(EXSCAN, scan_shm, "one node: every rank posts its input, rank r combines those of ranks 0..r-1"),
    DIRECT(EXSCAN, scan_direct, "one address space: rank r combines the inputs of ranks 0..r-1 in place"),
    HIER(SCAN, scan_hier, 0,
         "several nodes: inputs to the node's first rank, prefixes of node totals among those, back"),
    HIER(EXSCAN, scan_hier, 0,
         "several nodes: inputs to the node's first rank, prefixes of node totals among those, back"),
};
const int lm_coll_nalgs = (int)(sizeof lm_coll_algs / sizeof lm_coll_algs[0]);

const lm_coll_alg *lm_coll_alg_find(int kind, const char *name)
{
    for (int i = 0; i < lm_coll_nalgs; i++)
        if (lm_coll_algs[i].kind == kind && !strcasecmp(lm_coll_algs[i].name, name)) return &lm_coll_algs[i];
    return NULL;
}

/* The selection table: the first row whose collective matches and whose
 * limits the call stays within decides (0 = no limit). `bytes` is the
 * spec's block: the whole message for bcast and the reductions, one
 * rank's block for the gathers, scatters and alltoall.
 *
 * Up to 4 ranks, bcast and allgather take the algorithm with the fewest
 * rounds at every size (binomial: 2 steps; recursive doubling: 2 steps,
 * the same bytes as the ring's 3, and unlike Bruck no copies through
 * scratch, so also for small blocks): measured on the 2-core reference
 * machine (make bench; 1 MiB on 4 ranks, 0.64x and 0.76x of the
 * scatter-allgather bcast and the ring allgather), where every extra round
 * waits for a rank that shares a core.
 *
 * On a communicator within one node (mailboxes, coll_shm.h), data that fits
 * one mailbox entry goes through node shared memory: one copy in, one copy
 * out, one round, no matching. The rows for "shm" come first and are
 * skipped wherever it cannot run.
 *
 * On a communicator across hosts whose ranks come in node blocks (spec.ppn),
 * barrier, bcast, reduce, allreduce, gather, scatter, allgather(v), scan, exscan,
 * reduce_scatter(_block), alltoall of small blocks and the v forms go hierarchical (reduce, allreduce and
 * reduce_scatter with commutative ops): the network carries one
 * message per node and step instead of one per rank (rows "hier", skipped
 * elsewhere). */
static const struct row {
    int kind;
    int max_procs;
    size_t max_bytes;
    const char *alg;
    /* 1: only on a node with more ranks than CPUs, for a communicator
     * within it (it has mailboxes); both the same on every rank */
    int oversubscribed;
} table[] = {
    {LM_COLL_BARRIER, 0, 0, "shm"},
    {LM_COLL_BCAST, 0, 0, "shm"},
    {LM_COLL_REDUCE, 0, 0, "shm"},
    {LM_COLL_ALLREDUCE, 0, 0, "shm"},
    {LM_COLL_GATHER, 0, 0, "shm"},
    {LM_COLL_SCATTER, 0, 0, "shm"},
    {LM_COLL_ALLGATHER, 0, 0, "shm"},
    {LM_COLL_ALLTOALL, 0, 0, "shm"},
    {LM_COLL_REDUCE_SCATTER_BLOCK, 0, 0, "shm"},
    {LM_COLL_SCAN, 0, 0, "shm"},
    {LM_COLL_EXSCAN, 0, 0, "shm"},
    /* Every member in one address space, above what a mailbox entry holds:
     * readers copy (or reduce) straight from the poster's buffer, and the
     * poster waits until they have. Where that wait costs more than the
     * copy saves, the usual rows follow. Measured in that mode on the 2-core
     * reference machine (medians of 5-7 alternating runs, direct against
     * the table's choice, 2 / 4 ranks): allgather 1 MiB 1.00 / 0.30, 64 KiB
     * 0.96 / 0.36; alltoall 1 MiB 0.98 / 0.97, 64 KiB 0.97 / 0.81;
     * reduce_scatter_block 0.16-0.51 and scan 0.19-0.61 at 4 KiB to 1 MiB;
     * allreduce 0.34-0.71 on 2 ranks, on 4 0.40 at 64 KiB but 1.28 at 1 MiB
     * (the ring reduces in parallel); reduce 0.61-0.96 up to 64 KiB, 1.08-1.17
     * at 1 MiB; bcast 0.79-0.91 from 64 KiB on 4 ranks, but 1.85 on 2 (the
     * message's copy is shared by both sides) and 3.6 at 4 KiB on 4 (the
     * eager tree lets the root run ahead). Gather and scatter by address
     * were no faster (the root copies every block itself): not chosen. */
    {LM_COLL_BCAST, 2, 0, "binomial"},
    {LM_COLL_BCAST, 0, 16384, "binomial"},
    {LM_COLL_BCAST, 0, 0, "direct"},
    {LM_COLL_REDUCE, 0, 65536, "direct"},
    {LM_COLL_ALLREDUCE, 2, 0, "direct"},
    {LM_COLL_ALLREDUCE, 0, 65536, "direct"},
    {LM_COLL_ALLGATHER, 0, 0, "direct"},
    {LM_COLL_ALLTOALL, 0, 0, "direct"},
    {LM_COLL_REDUCE_SCATTER_BLOCK, 0, 0, "direct"},
    {LM_COLL_SCAN, 0, 0, "direct"},
    {LM_COLL_EXSCAN, 0, 0, "direct"},
    {LM_COLL_BARRIER, 0, 0, "hier"},
    {LM_COLL_BCAST, 0, 0, "hier"},
    {LM_COLL_REDUCE, 0, 0, "hier"},
    {LM_COLL_ALLREDUCE, 0, 0, "hier"},
    {LM_COLL_GATHER, 0, 0, "hier"},
    {LM_COLL_SCATTER, 0, 0, "hier"},
    {LM_COLL_ALLGATHER, 0, 0, "hier"},
    {LM_COLL_SCAN, 0, 0, "hier"},
    {LM_COLL_EXSCAN, 0, 0, "hier"},
    {LM_COLL_REDUCE_SCATTER, 0, 0, "hier"},
    {LM_COLL_REDUCE_SCATTER_BLOCK, 0, 0, "hier"},
    {LM_COLL_ALLGATHERV, 0, 0, "hier"},
    /* small blocks only: the leader holds about four times its node's
     * rows in scratch (at most 16 MiB with these limits and 16 ranks a
     * node), and node strides stay within int16 steps. 4 virtual hosts x 4
     * ranks (tools/vcluster, 2 runs each): 8 B 102-136 us against 285-320
     * (bruck), 1 KiB 176-201 against 987-1,328 (linear), 4 KiB 577-751
     * against 1,163-1,275, 16 KiB no better */
    {LM_COLL_ALLTOALL, 64, 4096, "hier"},
    {LM_COLL_ALLTOALL, 32767, 256, "hier"},
    /* only small blocks go through the leaders (sched_hier_v.c), so any
     * sizes; a leader holds 16 n bytes of counts per member, hence the
     * rank limit. 4 virtual hosts x 4 ranks, equal blocks, 2 runs each:
     * blocking 8 B 217-245 us against 936-1,058 (linear), 1 KiB 343-366
     * against 960-1,012, 16 KiB (every block rank to rank) 1,899-1,963
     * against 1,788-2,003; later, the machine slower, nonblocking 8 B
     * 219-291 against 1,390-1,563, 1 KiB 349-432 against 1,406-1,561,
     * 16 KiB 2,454-2,694 against 2,534-2,554 */
    {LM_COLL_ALLTOALLV, 256, 0, "hier"},
    {LM_COLL_ALLTOALLW, 256, 0, "hier"},
    /* the root gets one pack of small blocks per other node instead of
     * one message per rank; 4 virtual hosts x 4 ranks, equal blocks, 4
     * runs each: gatherv 8 B 108-121 us against 128-188 (linear), 1 KiB
     * 104-145 against 142-197; scatterv 8 B 58-85 against 89-177, 1 KiB
     * 68-104 against 91-181; 16 KiB (every block directly) within noise
     * (gatherv 144-227 against 100-244, scatterv 218-331 against 227-294) */
    {LM_COLL_GATHERV, 0, 0, "hier"},
    {LM_COLL_SCATTERV, 0, 0, "hier"},
    {LM_COLL_BARRIER, 0, 0, "dissemination"},
    {LM_COLL_BCAST, 4, 0, "binomial"},
    {LM_COLL_BCAST, 0, 16384, "binomial"},
    /* ranks sharing cores: every round waits for ranks to be scheduled,
     * and the tree has the fewest; 1 MiB on 8 ranks, 2 cores (medians of
     * 5 alternating runs): 1,029 us against 1,779 scatter-allgather */
    {LM_COLL_BCAST, 0, 0, "binomial", 1},
    {LM_COLL_BCAST, 0, 4 << 20, "scatter_allgather"},
    {LM_COLL_BCAST, 0, 0, "chain"},
    {LM_COLL_REDUCE, 2, 0, "binomial"},
    {LM_COLL_REDUCE, 0, 65536, "binomial"},
    /* 3-4 ranks, large: the tree moves and reduces 3 vectors where the
     * ring moves 3.75 and adds a round; 1 MiB on 4 ranks (2 cores, best
     * of 40 blocks, 10 alternating runs): 330-370 us against 430-510 */
    {LM_COLL_REDUCE, 4, 0, "binomial"},
    /* likewise: 1 MiB on 8 ranks, 2 cores: 1,470 us against 2,013 */
    {LM_COLL_REDUCE, 0, 0, "binomial", 1},
    {LM_COLL_REDUCE, 0, 0, "reduce_scatter_gather"},
    {LM_COLL_ALLREDUCE, 0, 16384, "recursive_doubling"},
    {LM_COLL_ALLREDUCE, 0, 0, "ring"},
    {LM_COLL_GATHER, 0, 4096, "binomial"},
    {LM_COLL_GATHER, 0, 0, "linear"},
    {LM_COLL_GATHERV, 0, 0, "linear"},
    {LM_COLL_SCATTER, 0, 4096, "binomial"},
    {LM_COLL_SCATTER, 0, 0, "linear"},
    {LM_COLL_SCATTERV, 0, 0, "linear"},
    {LM_COLL_ALLGATHER, 4, 0, "recursive_doubling"},
    {LM_COLL_ALLGATHER, 0, 1024, "bruck"},
    {LM_COLL_ALLGATHER, 0, 65536, "recursive_doubling"},
    {LM_COLL_ALLGATHER, 0, 0, "ring"},
    {LM_COLL_ALLGATHERV, 0, 0, "ring"},
    {LM_COLL_ALLTOALL, 4, 32768, "linear"},
    {LM_COLL_ALLTOALL, 0, 256, "bruck"},
    {LM_COLL_ALLTOALL, 0, 32768, "linear"},
    /* up to 4 ranks every block is posted at once also when large: a
     * rank that gets a core always finds a copy to do, where pairwise
     * waits for the one peer of the step; 1 MiB on 4 ranks (2 cores):
     * 1,020-1,090 us against 1,120-1,180 (lowest runs of 8 each) */
    {LM_COLL_ALLTOALL, 4, 0, "linear"},
    /* and where ranks share cores at any size: 1 MiB on 8 ranks, 2 cores:
     * 10,450 us against 11,092 pairwise */
    {LM_COLL_ALLTOALL, 0, 0, "linear", 1},
    {LM_COLL_ALLTOALL, 0, 0, "pairwise"},
    {LM_COLL_ALLTOALLV, 0, 0, "linear"},
    {LM_COLL_ALLTOALLW, 0, 0, "linear"},
    {LM_COLL_REDUCE_SCATTER, 0, 0, "ring"},
    {LM_COLL_REDUCE_SCATTER_BLOCK, 0, 0, "ring"},
    {LM_COLL_SCAN, 0, 0, "recursive_doubling"},
    {LM_COLL_EXSCAN, 0, 0, "recursive_doubling"},
};

size_t lm_coll_select_bytes(const lm_coll_spec *a) { return a->bytes; }

/* LEANMPI_<COLL>_ALGORITHM, read once; an unknown name is reported once
 * and ignored. */
static const lm_coll_alg *overrides[LM_COLL_KIND_COUNT];
static int overrides_read;

static void read_overrides(void)
{
    for (int k = 0; k < LM_COLL_KIND_COUNT; k++) {
        char var[64], upper[48];
        int i = 0;
        for (const char *p = kind_names[k]; *p && i < 47; p++)
            upper[i++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
        upper[i] = 0;
        snprintf(var, sizeof var, "%s_ALGORITHM", upper);
        const char *v = lm_param_string(var);
        if (!v || !strcasecmp(v, "auto")) continue;
        overrides[k] = lm_coll_alg_find(k, v);
        if (!overrides[k])
            fprintf(stderr,
                    "LeanMPI: LEANMPI_%s=%s is not an algorithm of %s (see leanmpi-info); "
                    "using the selection table\n",
                    var, v, kind_names[k]);
    }
    overrides_read = 1;
}

static int usable(const lm_coll_alg *g, const lm_coll_spec *a)
{
    return g && (!g->commutative_only || a->commutative) && (!g->shm || (a->shm && lm_sched_shm_fits(a))) &&
           (!g->hier || a->ppn > 0) && (!g->direct || a->space);
}

#define NROWS (sizeof table / sizeof table[0])
/* Each row's algorithm, found by name once (every call looks them up),
 * and where each collective's rows start. */
static const lm_coll_alg *row_alg[NROWS];
static size_t first_row[LM_COLL_KIND_COUNT];

const lm_coll_alg *lm_coll_select(const lm_coll_spec *a)
{
    if (!overrides_read) {
        for (int k = 0; k < LM_COLL_KIND_COUNT; k++) first_row[k] = NROWS;
        for (size_t i = NROWS; i-- > 0;) {
            row_alg[i] = lm_coll_alg_find(table[i].kind, table[i].alg);
            first_row[table[i].kind] = i;
        }
        read_overrides();
    }
    if (usable(overrides[a->kind], a)) return overrides[a->kind];
    size_t bytes = lm_coll_select_bytes(a);
    for (size_t i = first_row[a->kind]; i < NROWS; i++) {
        const struct row *r = &table[i];
        if (r->kind != a->kind || (r->max_procs && a->size > r->max_procs) || (r->max_bytes && bytes > r->max_bytes))
            continue;
        if (r->oversubscribed && !(a->shm && lm_oversubscribed())) continue;
        if (usable(row_alg[i], a)) return row_alg[i];
    }
    /* every collective has an algorithm that takes any op */
    for (int i = 0; i < lm_coll_nalgs; i++)
        if (lm_coll_algs[i].kind == a->kind && usable(&lm_coll_algs[i], a)) return &lm_coll_algs[i];
    return &lm_coll_algs[0];
}

int lm_coll_selection_row(int i, const char **collective, int *max_procs, size_t *max_bytes, const char **algorithm,
                          int *oversubscribed)
{
    if (i < 0 || (size_t)i >= sizeof table / sizeof table[0]) return 0;
    *collective = kind_names[table[i].kind];
    *max_procs = table[i].max_procs;
    *max_bytes = table[i].max_bytes;
    *algorithm = table[i].alg;
    if (oversubscribed) *oversubscribed = table[i].oversubscribed;
    return 1;
}
