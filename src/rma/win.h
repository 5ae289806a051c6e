/* Window objects (MPI-4.1 chapter 12) without communication: creation of
 * every flavor, attributes, group, name, hints, error handler, shared
 * memory queries and dynamic attachment. Put/Get/Accumulate and the
 * synchronisation calls are not built yet (they raise
 * MPI_ERR_UNSUPPORTED_OPERATION).
 *
 * A window keeps only this process's own part (base, size, displacement
 * unit); nothing per peer. The one exception is a shared-memory window,
 * whose per-rank table (offset, size, unit) lives once per node in the
 * shared segment itself, where MPI_Win_shared_query reads it. */
#ifndef LM_WIN_H
#define LM_WIN_H
#include "mpi.h"
#include "util/lm_handle.h"
#include "obj/comm.h"

struct lm_win_shared;
struct lm_win_region;

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
    void *owned;                   /* memory of MPI_Win_allocate, freed with the window */
    struct lm_win_shared *shared;  /* MPI_Win_allocate_shared only */
    struct lm_win_region *regions; /* MPI_Win_create_dynamic only: attached memory */
    int nregions, capregions;
} lm_win;

/* The live window for a handle, or NULL. */
lm_win *lm_win_get(MPI_Win win);
/* The error handler of a live window: 1 and *e set, or 0 if win is not one. */
int lm_win_errhandler(MPI_Win win, MPI_Errhandler *e);

/* Shared segment of an MPI_Win_allocate_shared window (win_shared.c):
 * collective over w->comm; sets w->shared and w->base. noncontig pads each
 * rank's part to a page. Returns an MPI error class (the same on every
 * rank). */
int lm_win_shared_create(lm_win *w, MPI_Aint size, MPI_Aint disp_unit, int noncontig);
void lm_win_shared_free(lm_win *w);
/* Size, unit and this process's address of a rank's part; rank
 * MPI_PROC_NULL: the lowest rank with a non-empty part. */
void lm_win_shared_query(const lm_win *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void **base);

/* Attached regions of a dynamic window (win_dynamic.c). */
void lm_win_regions_free(lm_win *w);

/* At runtime start: windows carry attributes (obj/attr.h). */
int lm_rma_init(void);

#endif
