/* Window objects (MPI-4.1 chapter 12): creation of every flavor,
 * attributes, group, name, hints, error handler, shared memory queries,
 * dynamic attachment, and the state of this process's epochs.
 *
 * A window keeps only this process's own part (base, size, displacement
 * unit) and the locks it holds; nothing per peer. What every rank must
 * know of every other (where its part is, its lock, its synchronization
 * counters) lives once per node in the window's segment
 * (win_segment.h). */
#ifndef LM_WIN_H
#define LM_WIN_H
#include "mpi.h"
#include "util/lm_handle.h"
#include "obj/comm.h"
#include "osc/mcs_rwlock.h"

struct lm_win_shared;
struct lm_win_region;
struct lm_osc_channel;
struct lm_group;

/* A passive-target lock this process holds (MPI_Win_lock). */
typedef struct lm_win_held {
    int32_t rank;
    uint8_t type;     /* MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE */
    uint8_t nocheck;  /* MPI_MODE_NOCHECK: no lock was taken */
    uint8_t unqueued; /* exclusive, taken free without queueing (lm_mcs_write_trylock) */
    int8_t qnode;     /* exclusive and queued: its queue node (0..LM_WIN_QNODES-1), else -1 */
} lm_win_held;        /* 8 bytes: one store records a lock */

typedef struct lm_win {
    lm_object obj;
    /* a private intracommunicator over the window's group, on a context id
     * of its own, so that the window's traffic never meets the user's */
    lm_comm *comm;
    int flavor; /* MPI_WIN_FLAVOR_* */
    void *base; /* MPI_BOTTOM for a dynamic window */
    /* values the predefined attributes point to (stable addresses) */
    MPI_Aint size;
    int disp_unit_attr;
    int flavor_attr, model_attr;
    MPI_Aint disp_unit; /* as given (the _c calls take an MPI_Aint) */
    MPI_Errhandler errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    struct lm_attr_list *attrs;
    MPI_Info info;                 /* hints set by the program, 0 for none */
    struct lm_win_shared *shared;  /* the node segment (every flavor) */
    int spread;                    /* its processes are on several nodes (win_segment.c) */
    struct lm_win_region *regions; /* MPI_Win_create_dynamic only: attached memory */
    int nregions, capregions;
    /* one-sided communication */
    struct lm_osc_channel *ch;
    int private_reach; /* how other processes reach memory of create/dynamic: LM_OSC_CMA or LM_OSC_MSG */
    /* epochs of this process */
    int fence_open; /* between fences: every rank may be accessed */
    int lockall;    /* in MPI_Win_lock_all */
    int lockall_nocheck;
    lm_win_held *held; /* MPI_Win_lock held, few */
    int nheld, capheld;
    unsigned qnodes_used;                      /* bit k: queue node k serves a queued exclusive lock */
    lm_mcs_space mcs;                          /* the lock's queue nodes and wait step (rma_sync.c) */
    struct lm_group *start_group, *post_group; /* MPI_Win_start / MPI_Win_post, NULL when none */
    uint64_t completes_expected;               /* MPI_Win_wait: completes counted so far */
    int post_unfinished;                       /* posted, MPI_Win_wait/test not yet returned */
} lm_win;

/* The live window for a handle, or NULL. */
lm_win *lm_win_lookup(MPI_Win win);
static inline lm_win *lm_win_get(MPI_Win win)
{
    /* calls repeat on one window: the remembered one in line, any other
     * out of line (which remembers it) */
    lm_win *w = lm_object_memo(win, LM_KIND_WIN);
    return w ? w : lm_win_lookup(win);
}
/* The error handler of a live window: 1 and *e set, or 0 if win is not one. */
int lm_win_errhandler(MPI_Win win, MPI_Errhandler *e);

/* The window's node segment (win_segment.c): collective over w->comm;
 * sets w->shared (one segment per node the window spans; w->spread when
 * it spans several), and w->base when the parts live in the segment
 * (parts_here: MPI_Win_allocate, MPI_Win_allocate_shared); base is the
 * program's memory otherwise. noncontig pads each rank's part to a page.
 * Returns an MPI error class (the same on every rank). */
int lm_win_segment_create(lm_win *w, MPI_Aint size, MPI_Aint disp_unit, void *base, int parts_here, int noncontig);
void lm_win_shared_free(lm_win *w);
/* Size, unit and this process's address of a rank's part; rank
 * MPI_PROC_NULL: the lowest rank with a non-empty part. */
void lm_win_shared_query(const lm_win *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void **base);

/* Attached regions of a dynamic window (win_dynamic.c). */
void lm_win_regions_free(lm_win *w);

/* Publish this process's attached regions in its control block, so that
 * others can check their accesses (win_dynamic.c). */
void lm_win_regions_publish(lm_win *w);

/* One-sided state of a new window (rma_sync.c): its channel and how its
 * private memory is reached; collective. Released by lm_win_rma_free. */
int lm_win_rma_setup(lm_win *w);
void lm_win_rma_free(lm_win *w);

/* At runtime start: windows carry attributes (obj/attr.h); the one-sided
 * engine starts. */
int lm_rma_init(void);

#endif
