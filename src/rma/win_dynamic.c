/* Memory attached to a dynamic window (MPI_Win_attach/MPI_Win_detach):
 * local bookkeeping only, a small array of regions kept in address order
 * (attachments are few; a binary search finds a region's place). Regions
 * may not overlap, and only what was attached can be detached. */
#include "rma/win.h"
#include "rma/win_segment.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <stdint.h>
#include <string.h>

struct lm_win_region {
    uintptr_t base;
    uintptr_t size;
};

void lm_win_regions_publish(lm_win *w)
{
    lm_win_ctl *ctl = lm_win_ctl_of(w, w->comm->rank);
    /* odd while it changes: readers retry (rma_sync.c lm_rma_in_range) */
    __atomic_fetch_add(&ctl->dyn_seq, 1, __ATOMIC_ACQ_REL);
    for (int i = 0; i < w->nregions; i++) ctl->dyn[i] = (lm_win_region_pub){w->regions[i].base, w->regions[i].size};
    __atomic_store_n(&ctl->dyn_count, (uint32_t)w->nregions, __ATOMIC_RELAXED);
    __atomic_fetch_add(&ctl->dyn_seq, 1, __ATOMIC_RELEASE);
}

void lm_win_regions_free(lm_win *w)
{
    lm_free(LM_MEM_RMA, w->regions);
    w->regions = NULL;
    w->nregions = w->capregions = 0;
}

/* Index of the first region whose base is not below addr. */
static int lower_bound(const lm_win *w, uintptr_t addr)
{
    int lo = 0, hi = w->nregions;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (w->regions[mid].base < addr) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static lm_win *dynamic_window(MPI_Win win, const char *fname, int *rc)
{
    lm_win *w = lm_win_get(win);
    *rc = MPI_SUCCESS;
    if (!w) *rc = lm_err_win(win, MPI_ERR_WIN, fname, "invalid window");
    else if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        *rc = lm_err_win(win, MPI_ERR_RMA_FLAVOR, fname, "the window was not created by MPI_Win_create_dynamic");
    return *rc ? NULL : w;
}

int impl_MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    int rc;
    lm_win *w = dynamic_window(win, "MPI_Win_attach", &rc);
    if (!w) return rc;
    if (size < 0) return lm_err_win(win, MPI_ERR_SIZE, "MPI_Win_attach", "size = %lld is negative", (long long)size);
    if (!base && size > 0)
        return lm_err_win(win, MPI_ERR_ARG, "MPI_Win_attach", "base is NULL with size %lld", (long long)size);
    uintptr_t b = (uintptr_t)base, e = b + (uintptr_t)size;
    if (e < b) return lm_err_win(win, MPI_ERR_SIZE, "MPI_Win_attach", "the region wraps around the address space");
    int i = lower_bound(w, b);
    /* the neighbours on either side must end before it / start after it;
     * an empty region still occupies its address */
    if ((i < w->nregions && (w->regions[i].base == b || w->regions[i].base < e)) ||
        (i > 0 && w->regions[i - 1].base + w->regions[i - 1].size > b))
        return lm_err_win(win, MPI_ERR_RMA_ATTACH, "MPI_Win_attach",
                          "the region [%p, +%lld) overlaps memory already attached", base, (long long)size);
    /* others check their accesses against the published regions */
    if (w->nregions == LM_WIN_DYN_REGIONS)
        return lm_err_win(win, MPI_ERR_RMA_ATTACH, "MPI_Win_attach",
                          "%d regions are attached already, the most a dynamic window holds per process",
                          LM_WIN_DYN_REGIONS);
    if (w->nregions == w->capregions) {
        int cap = w->capregions ? 2 * w->capregions : 4;
        struct lm_win_region *r = lm_realloc(LM_MEM_RMA, w->regions, (size_t)cap * sizeof *r);
        if (!r) return lm_err_win(win, MPI_ERR_RMA_ATTACH, "MPI_Win_attach", "out of memory");
        w->regions = r;
        w->capregions = cap;
    }
    memmove(&w->regions[i + 1], &w->regions[i], (size_t)(w->nregions - i) * sizeof *w->regions);
    w->regions[i] = (struct lm_win_region){b, (uintptr_t)size};
    w->nregions++;
    lm_win_regions_publish(w);
    return MPI_SUCCESS;
}

int impl_MPI_Win_detach(MPI_Win win, const void *base)
{
    int rc;
    lm_win *w = dynamic_window(win, "MPI_Win_detach", &rc);
    if (!w) return rc;
    uintptr_t b = (uintptr_t)base;
    int i = lower_bound(w, b);
    if (i == w->nregions || w->regions[i].base != b)
        return lm_err_win(win, MPI_ERR_BASE, "MPI_Win_detach", "no region attached at %p", base);
    memmove(&w->regions[i], &w->regions[i + 1], (size_t)(w->nregions - i - 1) * sizeof *w->regions);
    if (--w->nregions == 0) lm_win_regions_free(w);
    lm_win_regions_publish(w);
    return MPI_SUCCESS;
}
