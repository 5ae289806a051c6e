/* Every window's node segment (layout in win_segment.h).
 *
 * The window's rank 0 creates one anonymous memory file (memfd, mode 0600)
 * and lays it out from every rank's (size, unit, address); the others open
 * it through /proc/<pid>/fd/<fd> while rank 0 still holds the descriptor,
 * map it and close their descriptors again. Being a memfd, the segment has
 * no name in /dev/shm or anywhere else: it disappears with the last
 * mapping, when the window is freed or the processes end, however the job
 * ends.
 *
 * The parts of MPI_Win_allocate_shared are contiguous (rank i's begins
 * where rank i-1's ends) unless the program asked for
 * alloc_shared_noncontig, which starts every part on a page of its own, as
 * MPI_Win_allocate's parts always do. MPI_Win_create and
 * MPI_Win_create_dynamic keep their memory where the program has it; the
 * segment then holds only the control blocks. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "rma/win_segment.h"
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

void lm_win_and_int(const void *in, void *inout, size_t count, void *arg)
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

static void lay_out(struct lm_win_shared *s, int n)
{
    char *p = s->map;
    s->header = (lm_win_header *)p;
    s->table = (lm_win_entry *)(p + sizeof(lm_win_header));
    uint64_t off = round_up(sizeof(lm_win_header) + (uint64_t)n * sizeof(lm_win_entry), 64);
    s->ctl = (lm_win_ctl *)(p + off);
    off += (uint64_t)n * sizeof(lm_win_ctl);
    s->qnodes = (lm_mcs_qnode *)(p + off);
    off += (uint64_t)n * LM_WIN_QNODES * sizeof(lm_mcs_qnode);
    s->parts = p + round_up(off, PAGE);
}

static uint64_t control_bytes(int n)
{
    uint64_t off = round_up(sizeof(lm_win_header) + (uint64_t)n * sizeof(lm_win_entry), 64);
    off += (uint64_t)n * (sizeof(lm_win_ctl) + LM_WIN_QNODES * sizeof(lm_mcs_qnode));
    return round_up(off, PAGE);
}

int lm_win_segment_create(lm_win *w, MPI_Aint size, MPI_Aint disp_unit, void *base, int parts_here, int noncontig)
{
    lm_comm *c = w->comm;
    int n = c->size;
    /* every member must be on this node; the answer is the same everywhere */
    for (int r = 0; r < n; r++)
        if (!lm_boot_is_local(lm_comm_world_rank(c, r)))
            return w->flavor == MPI_WIN_FLAVOR_SHARED ? MPI_ERR_RMA_SHARED : MPI_ERR_UNSUPPORTED_OPERATION;

    struct lm_win_shared *s = lm_calloc(LM_MEM_RMA, 1, sizeof *s);
    /* each rank's entry, gathered only to lay the segment out; freed once
     * the table is written */
    int64_t mine[4] = {size, disp_unit, (int64_t)(uintptr_t)base, lm_comm_world_rank(c, c->rank)};
    int64_t *all = lm_malloc(LM_MEM_RMA, (size_t)n * sizeof mine);
    int ok = s && all;
    int rc = lm_coll_allreduce(&ok, 1, sizeof ok, lm_win_and_int, NULL, c);
    if (!rc && !ok) rc = MPI_ERR_NO_MEM;
    if (!rc) rc = lm_coll_allgather(mine, sizeof mine, all, c);
    if (rc) {
        lm_free(LM_MEM_RMA, all);
        lm_free(LM_MEM_RMA, s);
        return rc;
    }
    s->nranks = n;
    uint64_t data = 0;
    for (int r = 0; parts_here && r < n; r++) {
        if (noncontig) data = round_up(data, PAGE);
        data += (uint64_t)all[4 * r];
    }
    s->len = (size_t)(control_bytes(n) + round_up(data, PAGE));

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
            lay_out(s, n);
            uint64_t off = 0;
            for (int r = 0; r < n; r++) {
                if (parts_here && noncontig) off = round_up(off, PAGE);
                s->table[r] = (lm_win_entry){.offset = parts_here ? off : 0,
                                             .size = all[4 * r],
                                             .disp_unit = all[4 * r + 1],
                                             .addr = (uint64_t)all[4 * r + 2],
                                             .world = (int32_t)all[4 * r + 3],
                                             .in_segment = parts_here};
                if (parts_here) off += (uint64_t)all[4 * r];
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
        if (ok) lay_out(s, n);
    }
    /* rank 0 keeps its descriptor until everyone has opened the segment */
    int rc2 = lm_coll_allreduce(&ok, 1, sizeof ok, lm_win_and_int, NULL, c);
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
    if (parts_here) w->base = s->parts + s->table[c->rank].offset;
    /* a process's own entry names its part in its own address space */
    s->table[c->rank].addr = (uint64_t)(uintptr_t)w->base;
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
    const lm_win_entry *t = s->table;
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
    *base = s->parts + t[rank].offset;
}

static int shared_query(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr, const char *fname)
{
    lm_win *w = lm_win_get(win);
    if (!w) return lm_err_win(win, MPI_ERR_WIN, fname, "invalid window");
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return lm_err_win(win, MPI_ERR_RMA_FLAVOR, fname, "a dynamic window has no memory of its own to share");
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->comm->size))
        return lm_err_win(win, MPI_ERR_RANK, fname, "rank %d is not in the window's group of %d", rank, w->comm->size);
    if (w->flavor == MPI_WIN_FLAVOR_CREATE) {
        /* MPI-4.1 section 12.2.3: windows of MPI_Win_create and
         * MPI_Win_allocate may be queried; the program's own memory is not
         * shared, which the standard reports as an empty part (the parts of
         * MPI_Win_allocate are in the node segment and are reported) */
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
