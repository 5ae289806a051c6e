/* The node segment: one shared-memory region per node per job, created by the
 * launcher (memfd, mode 0600, named "leanmpi-<job>"; being a memfd it has no
 * file-system name and disappears with the last process that maps it, so no
 * file is ever left behind). Ranks inherit the descriptor (LEANMPI_NODE_FD)
 * and map it. It holds:
 *   - the job layout descriptor (R2: compact, evaluated on demand),
 *   - job control (abort record) and one control block per local rank,
 *   - the node key-value store (R3: kept once per node),
 *   - the shm transport's area (queues, cells, fast boxes).
 * Its size depends on the number of ranks on the node, never on the job. */
#ifndef LM_NODE_SEGMENT_H
#define LM_NODE_SEGMENT_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LM_NODE_SEGMENT_MAGIC 0x4c65616e4d504931ull /* "LeanMPI1" */
#define LM_NODE_SEGMENT_VERSION 4u

enum lm_layout_kind { LM_LAYOUT_BLOCK = 0, LM_LAYOUT_CYCLIC = 1, LM_LAYOUT_VECTOR = 2, LM_LAYOUT_TABLE = 3 };

/* VECTOR: a pass over the blocks places, block after block, ppn
 * consecutive ranks on each of `nodes` nodes from `node` on; passes repeat
 * until every rank is placed (the meaning of PMI's PMI_process_mapping).
 * A few blocks describe the placements launchers make: hosts with unequal
 * slots (3 ranks here, 1 there), Slurm's balanced blocks (2, 1, 1), and
 * block or cyclic orders as special cases. */
#define LM_LAYOUT_BLOCKS_MAX 8
typedef struct lm_layout_block {
    int32_t node, nodes, ppn;
} lm_layout_block;

/* Rank placement: world rank r lives on node node_of(r). With BLOCK, nodes
 * hold ranks_per_node consecutive ranks; with CYCLIC, rank r is on node
 * r % node_count; with VECTOR, the blocks say. Arithmetic on a few numbers,
 * never a table per rank, except with TABLE: a placement the user gave rank
 * by rank (mpirun --rankfile) or one no few blocks describe. Its tables live
 * once per node in the node segment (lm_layout_table), 12 bytes per rank of
 * the job, and only such jobs pay for them. */
typedef struct lm_layout {
    int32_t world_size;          /* ranks that really run */
    int32_t reported_world_size; /* size MPI_COMM_WORLD reports (>= world_size; --simulate-world-size) */
    int32_t node_count;
    int32_t node_id;        /* this node */
    int32_t local_size;     /* ranks on this node */
    int32_t kind;           /* enum lm_layout_kind */
    int32_t ranks_per_node; /* BLOCK: ranks per node (last node may hold fewer) */
    int32_t appnum;
    int32_t universe_size; /* MPI_UNIVERSE_SIZE: the slots the launcher has (>= reported_world_size) */
    /* CPUs this node's ranks may run on, as the launcher counts them (0:
     * unknown). One value for the whole node, so that every rank of it
     * draws the same conclusion (more ranks than CPUs: oversubscribed),
     * which collectives use to choose their algorithms. */
    int32_t node_cpus;
    int32_t nblocks; /* VECTOR: blocks used */
    lm_layout_block block[LM_LAYOUT_BLOCKS_MAX];
    /* TABLE: where the tables are, in bytes from this structure itself, so
     * that every process finds them wherever it maps the segment (a layout
     * of this kind is only valid inside its segment). */
    int64_t table_offset;
} lm_layout;

enum lm_rank_state { LM_RANK_NOT_STARTED = 0, LM_RANK_INITIALIZED = 1, LM_RANK_FINALIZED = 2, LM_RANK_ABORTED = 3 };

typedef struct lm_rank_block {
    _Atomic int32_t state; /* enum lm_rank_state */
    _Atomic int32_t pid;   /* written by the rank at init */
    int32_t world_rank;
    /* A rank on another host asked for a key this rank has not put yet (set
     * by the host's launch agent, taken by the rank: lm_boot_key_wanted). */
    _Atomic int32_t key_wanted;
    _Atomic uint64_t unexpected_bytes; /* eager bytes this rank holds unmatched (flow control) */
    char pad2[64 - 24];
} lm_rank_block;

typedef struct lm_abort_record {
    _Atomic int32_t claimed; /* first aborting rank wins */
    int32_t world_rank;
    int32_t errorcode;
    int32_t pad;
    char message[256];
} lm_abort_record;

typedef struct lm_node_segment {
    uint64_t magic;
    uint32_t version;
    uint32_t header_size;
    uint64_t total_size;
    char job_id[32];
    int32_t launcher_pid;
    int32_t pad;
    lm_layout layout;
    lm_abort_record abort_record;
    uint64_t ranks_offset; /* lm_rank_block[local_size] */
    uint64_t kvs_offset, kvs_size;
    uint64_t transport_offset, transport_size;
} lm_node_segment;

/* Size of a segment for local_size ranks. */
/* The transport's area inside the segment is laid out by the transport
 * (transport/shm_layout.h), a layer above this one: whoever creates
 * segments (the launcher, or the runtime for a singleton) first names the
 * functions that size and format it. Without them the area is empty. */
void lm_node_segment_set_transport_area(size_t (*size)(int local_size), void (*format)(void *area, int local_size));
size_t lm_node_segment_size(int local_size);
/* Launcher side: create the memfd, size it, map it, fill header and layout.
 * Returns the fd (not close-on-exec) and the mapping, or -1 with errno. */
int lm_node_segment_create(const char *job_id, const lm_layout *layout, lm_node_segment **out);
/* The same for a TABLE layout: rank_node[r] is the node of world rank r
 * (world_size entries, each below node_count, every node holding a rank);
 * a node's ranks are its local ranks in increasing order. */
int lm_node_segment_create_placed(const char *job_id, const lm_layout *layout, const int32_t *rank_node,
                                  lm_node_segment **out);
/* Rank side: map an inherited descriptor and check magic/version/size. */
int lm_node_segment_attach(int fd, lm_node_segment **out);
/* Singleton: the segment of a 1-rank job started without a launcher, a
 * memory file where possible (*fd_out: its descriptor, close-on-exec, so a
 * broker can map it later; NULL: closed), else anonymous memory (*fd_out
 * -1). 0, or -1 with errno. */
int lm_node_segment_create_private(lm_node_segment **out, int *fd_out);
void lm_node_segment_detach(lm_node_segment *seg);

static inline void *lm_node_segment_at(lm_node_segment *seg, uint64_t offset) { return (char *)seg + offset; }
static inline lm_rank_block *lm_node_segment_rank(lm_node_segment *seg, int local_rank)
{
    return (lm_rank_block *)lm_node_segment_at(seg, seg->ranks_offset) + local_rank;
}

/* CPUs this process may run on (its affinity mask; the online CPUs where
 * that cannot be read; at least 1): what a node's ranks count as the
 * node's CPUs when no launcher says. */
int lm_node_usable_cpus(void);

/* Layout evaluation (R2): no tables but TABLE's. VECTOR costs a walk over
 * its blocks, TABLE a load. */
int lm_layout_node_of(const lm_layout *l, int world_rank);
int lm_layout_local_rank_of(const lm_layout *l, int world_rank);
int lm_layout_world_rank_of(const lm_layout *l, int node, int local_rank);
/* Ranks below `below` that a VECTOR layout puts on `node` (so local ranks,
 * and with below = world_size the node's share). */
int lm_layout_vector_ranks_on(const lm_layout *l, int node, int below);
/* Append to a VECTOR layout's pass the next `count` consecutive ranks, on
 * `node`: the previous block grows when node follows its last node with
 * the same count, else a block starts. 0, or -1 when the blocks are full. */
int lm_layout_add_run(lm_layout *l, int node, int count);
/* The layout of ranks placed in host order, counts[i] consecutive ranks
 * on node i (a launcher's host list): BLOCK where every node but the last
 * holds the same count and the last no more, else VECTOR, one block per
 * run of neighbouring nodes with equal counts. Sets kind, ranks_per_node,
 * blocks and node_count; 0, or -1 when the counts make more runs than a
 * layout holds. */
int lm_layout_from_counts(lm_layout *l, const int *counts, int nodes);
/* A VECTOR layout (world_size and node_count set) turned into BLOCK or
 * CYCLIC where its blocks say exactly that, so that every node that starts
 * from the same blocks ends with the same, cheapest, layout. */
void lm_layout_canonical(lm_layout *l);
/* A VECTOR layout that is well formed: 1 to LM_LAYOUT_BLOCKS_MAX blocks of
 * nodes within node_count. 1 or 0. */
int lm_layout_vector_valid(const lm_layout *l);
/* TABLE: node_of[world_size], local_of[world_size], then the world ranks
 * node by node (by_node[world_size]) and where each node's start
 * (first[node_count + 1]): int32_t each. */
static inline const int32_t *lm_layout_table(const lm_layout *l)
{
    return (const int32_t *)(const void *)((const char *)l + l->table_offset);
}
/* Node i's ranks given as a list (the first job's placement by a rankfile):
 * the node of each of n ranks, each node holding at least one. 0, or -1
 * when a node is out of range or holds none. counts[nodes] gets each
 * node's share. */
int lm_placement_counts(const int32_t *rank_node, int n, int nodes, int *counts);

#endif
