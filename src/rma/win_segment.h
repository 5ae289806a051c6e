/* A window's node segment (win_segment.c): one anonymous shared memory
 * file per window and node, holding every rank's part description and,
 * for the ranks of the node, their locks, accumulate locks,
 * synchronization counters, queue nodes and, for MPI_Win_allocate and
 * MPI_Win_allocate_shared, the parts themselves.
 *
 *   [header][entry x n][ctl x span][qnodes x span x LM_WIN_QNODES][parts]
 *
 * span covers the node's ranks, from the lowest to the highest window
 * rank on it (all n when the window lies on one node; as many as the node
 * has when ranks are placed in blocks). ctl and qnodes are indexed by
 * window rank all the same: their pointers are set back by the lowest
 * rank, so that the lock paths do not change with the window's extent.
 * Ranks on other nodes (entry.remote) are reached through the network's
 * RMA for Put and Get where their owners exposed their parts to it
 * (entry.net), and through MSG otherwise: their owners carry out data,
 * accumulate, lock and post/complete operations for them.
 *
 * Everything per rank lives here, once per node, never in a process's
 * private memory: a process keeps only the mapping. */
#ifndef LM_WIN_SEGMENT_H
#define LM_WIN_SEGMENT_H
#include <stdint.h>
#include "rma/win.h"
#include "osc/mcs_rwlock.h"

/* Queue nodes per rank: one for waiting as a reader, the others for the
 * exclusive locks a process holds at once on one window (a shared lock
 * holds none once it is granted). */
#define LM_WIN_QNODES 16
#define LM_WIN_READER_QNODE (LM_WIN_QNODES - 1)
/* Regions of a dynamic window that other processes can check their
 * accesses against, per rank. */
#define LM_WIN_DYN_REGIONS 32
/* Posts a rank can have waiting for its MPI_Win_start. */
#define LM_WIN_POST_SLOTS 64

typedef struct lm_win_entry {
    uint64_t offset; /* of the part, from the start of the parts */
    int64_t size, disp_unit;
    uint64_t addr;             /* the part's address in its owner's process */
    int32_t world, in_segment; /* the part lies in this segment */
    int32_t remote;            /* the owner is on another node */
    int32_t net;               /* remote, and exposed to the network's RMA at (net_addr, rkey) */
    uint64_t net_addr, rkey;
} lm_win_entry;

typedef struct lm_win_region_pub {
    uint64_t base, size;
} lm_win_region_pub;

/* Per-rank control block; each group of fields that different processes
 * hammer sits in a cache line of its own. */
typedef struct lm_win_ctl {
    lm_mcs_rwlock lock; /* the passive-target lock of this rank's part */
    char pad0[64 - sizeof(lm_mcs_rwlock)];
    uint32_t acc_lock; /* held while an accumulate runs on this part */
    char pad1[60];
    /* active target: posts received (ranks + 1 of the posters, 0 = free
     * slot), completes received */
    uint32_t posts[LM_WIN_POST_SLOTS];
    uint64_t completes;
    char pad2[56];
    /* dynamic windows: what is attached, under a sequence count (odd
     * while it changes) */
    uint64_t dyn_seq;
    uint32_t dyn_count, dyn_pad;
    lm_win_region_pub dyn[LM_WIN_DYN_REGIONS];
} lm_win_ctl;

typedef struct lm_win_header {
    /* MPI_Win_lock_all of this node's processes, taken once for all of
     * them (rma_sync.c): holders << 2 | LOCKALL_* state */
    uint64_t lockall;
    char pad[56];
} lm_win_header;

struct lm_win_shared {
    void *map;
    size_t len;
    int nranks;
    int lo, span;     /* the node's ranks: lo .. lo + span - 1 (others remote) */
    int counted;      /* this process counts the segment in the memory report */
    void *net_handle; /* this process's part as exposed to the network's RMA, or NULL */
    lm_win_header *header;
    lm_win_entry *table;
    lm_win_ctl *ctl;
    lm_mcs_qnode *qnodes;
    char *parts;
};

/* Reduction of the window's collective agreements: every process's int
 * ANDed (1: it could, 0: it could not). */
void lm_win_and_int(const void *in, void *inout, size_t count, void *arg);

/* A rank's control block: ranks of this node only (not entry.remote). */
static inline lm_win_ctl *lm_win_ctl_of(const lm_win *w, int rank) { return &w->shared->ctl[rank]; }
static inline int lm_win_remote(const lm_win *w, int rank) { return w->spread && w->shared->table[rank].remote; }
/* The id of queue node k of rank r (ids start at 1). */
static inline uint32_t lm_win_qnode_id(int rank, int k) { return (uint32_t)(rank * LM_WIN_QNODES + k + 1); }

#endif
