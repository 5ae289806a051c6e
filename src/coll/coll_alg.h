/* Collective algorithms as schedule generators, and the table that chooses
 * one for a call.
 *
 * A generator sees only sizes, never memory: what it emits depends on
 * (collective, communicator size, rank, bytes, root, in place, op
 * commutativity), so the same call serves execution and decomposition.
 *
 * Slots per collective (offsets in bytes; "block" = spec.bytes):
 *   barrier            no data
 *   bcast              RECV holds the data on every rank (bytes)
 *   reduce, allreduce  SEND input, RECV result (reduce: root only), bytes each;
 *                      in place: the input is in RECV
 *   scan, exscan       as allreduce (exscan leaves rank 0's RECV alone)
 *   gather(v)          SEND my block; root RECV block i at i*block (v: counts/displs)
 *   scatter(v)         root SEND block i at i*block (v: counts/displs); RECV my block
 *   allgather(v)       SEND my block; RECV block i at i*block (v: counts/displs)
 *   alltoall           SEND block j for rank j at j*block, RECV block i at i*block
 *   alltoallv/w        SEND scounts/sdispls, RECV counts/displs
 *   reduce_scatter_block SEND n blocks, RECV my block
 *   reduce_scatter     SEND counts[i] at the prefix sum, RECV counts[rank]
 * In place (spec.in_place) the send data is already where RECV expects it
 * (gather/allgather: my block; scatter root: nothing to copy; alltoall,
 * reduce_scatter(_block), reduce, allreduce, scan: RECV holds the input). */
#ifndef LM_COLL_ALG_H
#define LM_COLL_ALG_H
#include <stddef.h>
#include "coll/sched.h"

enum lm_coll_kind {
    LM_COLL_BARRIER,
    LM_COLL_BCAST,
    LM_COLL_REDUCE,
    LM_COLL_ALLREDUCE,
    LM_COLL_GATHER,
    LM_COLL_GATHERV,
    LM_COLL_SCATTER,
    LM_COLL_SCATTERV,
    LM_COLL_ALLGATHER,
    LM_COLL_ALLGATHERV,
    LM_COLL_ALLTOALL,
    LM_COLL_ALLTOALLV,
    LM_COLL_ALLTOALLW,
    LM_COLL_REDUCE_SCATTER,
    LM_COLL_REDUCE_SCATTER_BLOCK,
    LM_COLL_SCAN,
    LM_COLL_EXSCAN,
    LM_COLL_KIND_COUNT
};

/* The v forms across nodes (sched_hier_v.c): the counts a node's first
 * rank learnt from its members in the first round of the call, one row
 * per member in rank order (lm_sched_v_row words: alltoallv/w the send
 * counts then the receive counts, gatherv and scatterv the member's own
 * block), bytes. */
typedef struct lm_coll_node_counts {
    const size_t *rows;
} lm_coll_node_counts;

typedef struct lm_coll_spec {
    int kind; /* enum lm_coll_kind */
    int size, rank, root;
    size_t bytes;                    /* the block, see above */
    size_t elem;                     /* bytes of one reduction element: pieces never split one */
    const size_t *counts, *displs;   /* v forms: per rank, receive side (scatterv: send side) */
    const size_t *scounts, *sdispls; /* alltoallv/w: send side */
    int in_place;
    int commutative; /* reductions: may operands be combined in any order? */
    int shm;         /* the communicator has node shared-memory mailboxes (coll_shm.h) */
    int space;       /* ... and every member shares one address space: posts may carry addresses */
    int ppn;         /* > 0: the communicator spans several nodes, ppn consecutive ranks on each
                        (the last node possibly fewer), so hierarchical algorithms apply */
    /* algorithms with counts_first: at a leader that waited for them, its
     * members' counts; NULL elsewhere */
    const lm_coll_node_counts *node_counts;
} lm_coll_spec;

typedef void (*lm_coll_gen)(lm_sched *s, const lm_coll_spec *a);

typedef struct lm_coll_alg {
    const char *name; /* as LEANMPI_<COLL>_ALGORITHM spells it */
    int kind;
    lm_coll_gen gen;
    int commutative_only; /* reductions: only for commutative ops */
    int shm;              /* needs mailboxes, and its posts must fit an entry */
    int hier;             /* needs spec.ppn: ranks of several nodes, in node blocks */
    const char *summary;
    int direct; /* needs spec.space */
    /* a node's first rank learns its members' counts in the call's first
     * round and its schedule is finished then: generated through
     * coll_counts_first.h or lm_sched_v_whole, never by gen alone */
    int counts_first;
} lm_coll_alg;

/* Name of a collective as in LEANMPI_<NAME>_ALGORITHM (upper case) and in
 * leanmpi-info --decompose (lower case). */
const char *lm_coll_kind_name(int kind);
int lm_coll_kind_from_name(const char *name); /* case-insensitive; -1 if none */

/* Every algorithm of every collective, grouped by collective. */
extern const lm_coll_alg lm_coll_algs[];
extern const int lm_coll_nalgs;
const lm_coll_alg *lm_coll_alg_find(int kind, const char *name);

/* The algorithm for a call: the LEANMPI_<COLL>_ALGORITHM override when set
 * (and usable for the call), otherwise the selection table's row for
 * (size, total bytes). Never NULL. */
const lm_coll_alg *lm_coll_select(const lm_coll_spec *a);
/* Bytes the selection table compares: the data one rank contributes. */
size_t lm_coll_select_bytes(const lm_coll_spec *a);

/* Generators (one file per collective family). */
void lm_sched_barrier_dissemination(lm_sched *s, const lm_coll_spec *a);
void lm_sched_barrier_recursive_doubling(lm_sched *s, const lm_coll_spec *a);
void lm_sched_bcast_binomial(lm_sched *s, const lm_coll_spec *a);
void lm_sched_bcast_scatter_allgather(lm_sched *s, const lm_coll_spec *a);
void lm_sched_bcast_chain(lm_sched *s, const lm_coll_spec *a);
void lm_sched_reduce_binomial(lm_sched *s, const lm_coll_spec *a);
void lm_sched_reduce_scatter_gather(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allreduce_recursive_doubling(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allreduce_ring(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allreduce_reduce_bcast(lm_sched *s, const lm_coll_spec *a);
void lm_sched_gather_binomial(lm_sched *s, const lm_coll_spec *a);
void lm_sched_gather_linear(lm_sched *s, const lm_coll_spec *a);
void lm_sched_scatter_binomial(lm_sched *s, const lm_coll_spec *a);
void lm_sched_scatter_linear(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allgather_bruck(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allgather_recursive_doubling(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allgather_ring(lm_sched *s, const lm_coll_spec *a);
void lm_sched_alltoall_bruck(lm_sched *s, const lm_coll_spec *a);
void lm_sched_alltoall_pairwise(lm_sched *s, const lm_coll_spec *a);
void lm_sched_alltoall_linear(lm_sched *s, const lm_coll_spec *a);
/* In place above LEANMPI_ALLTOALL_INPLACE_COPY_MAX bytes in all, pairwise
 * and linear (and direct) exchange block by block with two blocks of
 * scratch instead of copying the whole buffer aside. */
int lm_sched_alltoall_replace_wanted(const lm_coll_spec *a);
void lm_sched_alltoall_replace(lm_sched *s, const lm_coll_spec *a);
/* Alltoall(v/w): the slot the send blocks are read from, at *base: the
 * send buffer, or in place a copy of the receive buffer taken in a round
 * before anything arrives (the send layout is then the receive layout). */
int lm_sched_alltoall_source(lm_sched *s, const lm_coll_spec *a, size_t *base);
void lm_sched_reduce_scatter_ring(lm_sched *s, const lm_coll_spec *a);
void lm_sched_reduce_scatter_reduce_scatterv(lm_sched *s, const lm_coll_spec *a);
void lm_sched_scan_linear(lm_sched *s, const lm_coll_spec *a);
void lm_sched_scan_recursive_doubling(lm_sched *s, const lm_coll_spec *a);
/* Node shared-memory algorithms (sched_shm.c), usable when spec.shm is set
 * and lm_sched_shm_fits: the largest post of the call fits an entry. */
int lm_sched_shm_fits(const lm_coll_spec *a);
void lm_sched_barrier_shm(lm_sched *s, const lm_coll_spec *a);
void lm_sched_bcast_shm(lm_sched *s, const lm_coll_spec *a);
void lm_sched_reduce_shm(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allreduce_shm(lm_sched *s, const lm_coll_spec *a);
void lm_sched_reduce_scatter_block_shm(lm_sched *s, const lm_coll_spec *a);
void lm_sched_scan_shm(lm_sched *s, const lm_coll_spec *a);
void lm_sched_gather_shm(lm_sched *s, const lm_coll_spec *a);
void lm_sched_scatter_shm(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allgather_shm(lm_sched *s, const lm_coll_spec *a);
void lm_sched_alltoall_shm(lm_sched *s, const lm_coll_spec *a);
/* The same schedules by address (spec.space: every member shares one
 * address space): a post publishes where the data is, its readers copy or
 * reduce straight from the poster's buffer, whatever the size, and the
 * poster waits until they have (sched_shm.c). */
void lm_sched_bcast_direct(lm_sched *s, const lm_coll_spec *a);
void lm_sched_reduce_direct(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allreduce_direct(lm_sched *s, const lm_coll_spec *a);
void lm_sched_reduce_scatter_block_direct(lm_sched *s, const lm_coll_spec *a);
void lm_sched_scan_direct(lm_sched *s, const lm_coll_spec *a);
void lm_sched_gather_direct(lm_sched *s, const lm_coll_spec *a);
void lm_sched_scatter_direct(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allgather_direct(lm_sched *s, const lm_coll_spec *a);
void lm_sched_alltoall_direct(lm_sched *s, const lm_coll_spec *a);
/* Hierarchical algorithms (sched_hier.c), usable when spec.ppn is set:
 * within each node to its first rank, among those leaders, back. */
void lm_sched_barrier_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_bcast_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_reduce_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allreduce_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_gather_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_scatter_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_allgather_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_scan_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_reduce_scatter_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_alltoall_hier(lm_sched *s, const lm_coll_spec *a);
/* The v forms across nodes (sched_hier_v.c, algorithms with
 * counts_first): small blocks between two nodes in one pack through the
 * nodes' first ranks, large ones rank to rank. The schedule comes in two
 * parts (coll_counts_first.c): the counts (slot AUX: this rank's row of
 * lm_sched_v_row words, filled by lm_sched_v_fill_row, and at a leader
 * after it its members' rows in order), then the data, which at a leader
 * that takes part in the counts (lm_sched_v_leader_waits) needs
 * spec.node_counts. lm_sched_v_whole is both in a row for a spec whose
 * every rank has this rank's counts (decomposition). */
size_t lm_sched_v_row(const lm_coll_spec *a);
void lm_sched_v_fill_row(const lm_coll_spec *a, size_t *row);
int lm_sched_v_leader_waits(const lm_coll_spec *a);
void lm_sched_v_counts(lm_sched *s, const lm_coll_spec *a);
void lm_sched_alltoallv_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_gatherv_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_scatterv_hier(lm_sched *s, const lm_coll_spec *a);
void lm_sched_v_whole(lm_sched *s, const lm_coll_spec *a, lm_coll_gen data);
void lm_sched_allgatherv_hier(lm_sched *s, const lm_coll_spec *a);

#endif
