/* Shared-memory windows (MPI_Win_allocate_shared).
 *
 * The window's rank 0 creates one anonymous memory file (memfd, mode 0600)
 * holding a table of every rank's part (offset, size, displacement unit)
 * followed by the parts themselves; the others open it through
 * /proc/<pid>/fd/<fd> while rank 0 still holds the descriptor, map it and
 * close their descriptors again. Being a memfd, the segment has no name in
 * /dev/shm or anywhere else: it disappears with the last mapping, when the
 * window is freed or the processes end, however the job ends.
 *
 * The table is the one per-rank structure a window has; it is kept once per
 * node, in the segment, and MPI_Win_shared_query reads it from there.
 * Parts are contiguous (rank i's begins where rank i-1's ends) unless the
 * program asked for alloc_shared_noncontig, which starts every part on a
 * page of its own. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "rma/win.h"
#include "boot/boot.h"
#include "coll/coll_basic.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u

typedef struct shared_entry {
    uint64_t offset; /* from the start of the data, after the table */
    int64_t size, disp_unit;
} shared_entry;

struct lm_win_shared {
    void *map;
    size_t len;
    uint64_t data_offset; /* where the parts start */
    int nranks;
    int counted; /* this process counts the segment in the memory report */
};

static inline shared_entry *table_of(const struct lm_win_shared *s) { return (shared_entry *)s->map; }

static void and_int(const void *in, void *inout, size_t count, void *arg)
{
    (void)arg;
    for (size_t i = 0; i < count; i++) ((int *)inout)[i] &= ((const int *)in)[i];
}

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* What rank 0 tells the others. */
typedef struct announce {
    int32_t pid, fd;
    int32_t rc;
    int32_t pad;
    uint64_t len;
} announce;

int lm_win_shared_create(lm_win *w, MPI_Aint size, MPI_Aint disp_unit, int noncontig)
{
    lm_comm *c = w->comm;
    int n = c->size;
    /* every member must be on this node; the answer is the same everywhere */
    for (int r = 0; r < n; r++)
        if (!lm_boot_is_local(lm_comm_world_rank(c, r))) return MPI_ERR_RMA_SHARED;

    struct lm_win_shared *s = lm_calloc(LM_MEM_RMA, 1, sizeof *s);
    /* each rank's (size, unit) pair, gathered only to lay the segment out;
     * freed once the table is written */
    int64_t mine[2] = {size, disp_unit};
    int64_t *all = lm_malloc(LM_MEM_RMA, (size_t)n * sizeof mine);
    int ok = s && all;
    int rc = lm_coll_allreduce(&ok, 1, sizeof ok, and_int, NULL, c);
    if (!rc && !ok) rc = MPI_ERR_NO_MEM;
    if (!rc) rc = lm_coll_allgather(mine, sizeof mine, all, c);
    if (rc) {
        lm_free(LM_MEM_RMA, all);
        lm_free(LM_MEM_RMA, s);
        return rc;
    }
    s->nranks = n;
    s->data_offset = round_up((uint64_t)n * sizeof(shared_entry), PAGE);
    uint64_t data = 0;
    for (int r = 0; r < n; r++) {
        if (noncontig) data = round_up(data, PAGE);
        data += (uint64_t)all[2 * r];
    }
    s->len = (size_t)(s->data_offset + round_up(data ? data : 1, PAGE));

    announce a = {.pid = (int32_t)getpid(), .fd = -1, .rc = MPI_SUCCESS, .len = s->len};
    if (c->rank == 0) {
        char name[64];
        snprintf(name, sizeof name, "leanmpi-win-%d", (int)getpid());
        a.fd = memfd_create(name, MFD_CLOEXEC);
        if (a.fd < 0 || ftruncate(a.fd, (off_t)s->len) != 0 ||
            (s->map = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, a.fd, 0)) == MAP_FAILED) {
            s->map = NULL;
            a.rc = MPI_ERR_NO_MEM;
        } else {
            shared_entry *t = table_of(s);
            uint64_t off = 0;
            for (int r = 0; r < n; r++) {
                if (noncontig) off = round_up(off, PAGE);
                t[r] = (shared_entry){off, all[2 * r], all[2 * r + 1]};
                off += (uint64_t)all[2 * r];
            }
        }
    }
    lm_free(LM_MEM_RMA, all);
    rc = lm_coll_bcast(&a, sizeof a, 0, c);
    ok = !rc && a.rc == MPI_SUCCESS;
    if (ok && c->rank != 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)a.pid, (int)a.fd);
        int fd = open(path, O_RDWR | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size == a.len) {
            s->map = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (s->map == MAP_FAILED) s->map = NULL;
        }
        if (fd >= 0) close(fd);
        ok = s->map != NULL;
    }
    /* rank 0 keeps its descriptor until everyone has opened the segment */
    int rc2 = lm_coll_allreduce(&ok, 1, sizeof ok, and_int, NULL, c);
    if (c->rank == 0 && a.fd >= 0) close(a.fd);
    if (rc || rc2 || !ok) {
        if (s->map) munmap(s->map, s->len);
        lm_free(LM_MEM_RMA, s);
        if (rc || rc2) return rc ? rc : rc2;
        return a.rc != MPI_SUCCESS ? a.rc : MPI_ERR_RMA_SHARED;
    }
    /* counted once per node, by the window's rank 0 */
    if (c->rank == 0) {
        s->counted = 1;
        lm_mem_note_shared(LM_MEM_RMA, (long)s->len);
    }
    w->shared = s;
    w->base = (char *)s->map + s->data_offset + table_of(s)[c->rank].offset;
    return MPI_SUCCESS;
}

void lm_win_shared_free(lm_win *w)
{
    struct lm_win_shared *s = w->shared;
    if (!s) return;
    if (s->counted) lm_mem_note_shared(LM_MEM_RMA, -(long)s->len);
    munmap(s->map, s->len);
    lm_free(LM_MEM_RMA, s);
    w->shared = NULL;
}

void lm_win_shared_query(const lm_win *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void **base)
{
    const struct lm_win_shared *s = w->shared;
    const shared_entry *t = table_of(s);
    if (rank == MPI_PROC_NULL) {
        /* the lowest rank with memory; if nobody has any, rank 0's (empty) part */
        rank = 0;
        for (int r = 0; r < s->nranks; r++)
            if (t[r].size > 0) {
                rank = r;
                break;
            }
    }
    *size = (MPI_Aint)t[rank].size;
    *disp_unit = (MPI_Aint)t[rank].disp_unit;
    *base = (char *)s->map + s->data_offset + t[rank].offset;
}

static int shared_query(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr, const char *fname)
{
    lm_win *w = lm_win_get(win);
    if (!w) return lm_err_win(win, MPI_ERR_WIN, fname, "invalid window");
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return lm_err_win(win, MPI_ERR_RMA_FLAVOR, fname, "a dynamic window has no memory of its own to share");
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->comm->size))
        return lm_err_win(win, MPI_ERR_RANK, fname, "rank %d is not in the window's group of %d", rank, w->comm->size);
    if (!w->shared) {
        /* MPI-4.1 section 12.2.3: windows of MPI_Win_create and
         * MPI_Win_allocate may be queried; their memory is private to its
         * process here, which the standard reports as an empty part */
        *size = 0;
        *disp_unit = 1;
        *(void **)baseptr = NULL;
        return MPI_SUCCESS;
    }
    lm_win_shared_query(w, rank, size, disp_unit, (void **)baseptr);
    return MPI_SUCCESS;
}

int impl_MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    MPI_Aint unit;
    int rc = shared_query(win, rank, size, &unit, baseptr, "MPI_Win_shared_query");
    if (rc == MPI_SUCCESS) *disp_unit = (int)unit;
    return rc;
}

int impl_MPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    return shared_query(win, rank, size, disp_unit, baseptr, "MPI_Win_shared_query_c");
}
