/* Every window's node segments (layout in win_segment.h).
 *
 * On each node the window's lowest rank there (the node's leader) creates
 * one anonymous memory file (memfd, mode 0600) and lays it out from every
 * rank's (size, unit, address); the node's others open it through
 * /proc/<pid>/fd/<fd> while the leader still holds the descriptor, map it
 * and close their descriptors again. A window over several nodes has one
 * segment per node; the table names every rank's part, the ranks of other
 * nodes at their owners' addresses. Being a memfd, the segment has
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
#include "transport/transport.h"
#include "util/lm_cvar.h"
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

/* What a node's leader (its lowest window rank) tells the node's other
 * ranks. */
typedef struct announce {
    int32_t pid, fd;
    int32_t rc;
    int32_t pad;
    uint64_t len;
} announce;

/* ctl and qnodes are set back by the node's lowest rank (win_segment.h);
 * computed on integers, as the pointers point before the mapping. */
static void lay_out(struct lm_win_shared *s, int n)
{
    char *p = s->map;
    s->header = (lm_win_header *)p;
    s->table = (lm_win_entry *)(p + sizeof(lm_win_header));
    uint64_t off = round_up(sizeof(lm_win_header) + (uint64_t)n * sizeof(lm_win_entry), 64);
    s->ctl = (lm_win_ctl *)((uintptr_t)(p + off) - (uintptr_t)s->lo * sizeof(lm_win_ctl));
    off += (uint64_t)s->span * sizeof(lm_win_ctl);
    s->qnodes = (lm_mcs_qnode *)((uintptr_t)(p + off) - (uintptr_t)s->lo * LM_WIN_QNODES * sizeof(lm_mcs_qnode));
    off += (uint64_t)s->span * LM_WIN_QNODES * sizeof(lm_mcs_qnode);
    s->parts = p + round_up(off, PAGE);
}

static uint64_t control_bytes(int n, int span)
{
    uint64_t off = round_up(sizeof(lm_win_header) + (uint64_t)n * sizeof(lm_win_entry), 64);
    off += (uint64_t)span * (sizeof(lm_win_ctl) + LM_WIN_QNODES * sizeof(lm_mcs_qnode));
    return round_up(off, PAGE);
}

/* The node's leader: makes the segment and writes the table. */
static void lead(struct lm_win_shared *s, const int64_t *all, const unsigned char *local, int n, int parts_here,
                 int noncontig, announce *a)
{
    char name[64];
    snprintf(name, sizeof name, "leanmpi-win-%d", (int)getpid());
    a->fd = memfd_create(name, MFD_CLOEXEC);
    if (a->fd < 0 || ftruncate(a->fd, (off_t)s->len) != 0 ||
        (s->map = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0)) == MAP_FAILED) {
        s->map = NULL;
        a->rc = MPI_ERR_NO_MEM;
        return;
    }
    lay_out(s, n);
    uint64_t off = 0;
    for (int r = 0; r < n; r++) {
        int here = parts_here && local[r];
        if (here && noncontig) off = round_up(off, PAGE);
        s->table[r] = (lm_win_entry){.offset = here ? off : 0,
                                     .size = all[4 * r],
                                     .disp_unit = all[4 * r + 1],
                                     .addr = (uint64_t)all[4 * r + 2],
                                     .world = (int32_t)all[4 * r + 3],
                                     .in_segment = here,
                                     .remote = !local[r]};
        if (here) off += (uint64_t)all[4 * r];
    }
}

/* Open the segment the node's leader made and announced. */
static int join(struct lm_win_shared *s, const announce *a, int n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)a->pid, (int)a->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size == a->len) {
        s->map = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (s->map == MAP_FAILED) s->map = NULL;
    }
    if (fd >= 0) close(fd);
    if (s->map) lay_out(s, n);
    return s->map != NULL;
}

/* Each rank's address (and network exposure) in the entries of the ranks
 * of other nodes, written by each node's leader; collective. A rank's
 * exposure failing leaves its entry on MSG. */
static int publish_remote(lm_win *w, struct lm_win_shared *s, const unsigned char *local, void *base, MPI_Aint size,
                          int ok)
{
    lm_comm *c = w->comm;
    int n = c->size;
    /* address, network address, key, exposed */
    uint64_t mine[4] = {(uint64_t)(uintptr_t)base, 0, 0, 0};
    if (ok && w->flavor != MPI_WIN_FLAVOR_DYNAMIC && lm_cvar(LM_CVAR_RMA_NETWORK) &&
        lm_transport_expose_rma(base, (size_t)size, &mine[1], &mine[2], &s->net_handle) == LM_OK)
        mine[3] = 1;
    uint64_t *all = lm_malloc(LM_MEM_RMA, (size_t)n * sizeof mine);
    int got = all != NULL;
    int rc = lm_coll_allreduce(&got, 1, sizeof got, lm_win_and_int, NULL, c);
    if (!rc && !got) rc = MPI_ERR_NO_MEM;
    if (!rc) rc = lm_coll_allgather(mine, sizeof mine, all, c);
    if (!rc && ok && c->rank == s->lo)
        for (int r = 0; r < n; r++) {
            if (local[r]) continue;
            lm_win_entry *e = &s->table[r];
            e->addr = all[4 * r];
            e->net_addr = all[4 * r + 1];
            e->rkey = all[4 * r + 2];
            e->net = (int32_t)all[4 * r + 3];
        }
    lm_free(LM_MEM_RMA, all);
    return rc;
}

int lm_win_segment_create(lm_win *w, MPI_Aint size, MPI_Aint disp_unit, void *base, int parts_here, int noncontig)
{
    lm_comm *c = w->comm;
    int n = c->size;
    /* which ranks share this node: the same answer on each of its ranks */
    unsigned char *local = lm_malloc(LM_MEM_RMA, (size_t)n);
    struct lm_win_shared *s = lm_calloc(LM_MEM_RMA, 1, sizeof *s);
    /* each rank's entry, gathered only to lay the segments out; freed once
     * the tables are written */
    int64_t mine[4] = {size, disp_unit, (int64_t)(uintptr_t)base, lm_comm_world_rank(c, c->rank)};
    int64_t *all = lm_malloc(LM_MEM_RMA, (size_t)n * sizeof mine);
    int ok = s && all && local;
    int lo = n, hi = -1, nlocal = 0;
    for (int r = 0; ok && r < n; r++) {
        local[r] = (unsigned char)(r == c->rank || lm_boot_is_local(lm_comm_world_rank(c, r)));
        if (local[r] && r < lo) lo = r;
        if (local[r]) hi = r;
        nlocal += local[r];
    }
    int spread = ok && nlocal < n;
    int rc = lm_coll_allreduce(&ok, 1, sizeof ok, lm_win_and_int, NULL, c);
    if (!rc && !ok) rc = MPI_ERR_NO_MEM;
    /* the same answer everywhere: one node, or several */
    int one_node = !spread;
    if (!rc) rc = lm_coll_allreduce(&one_node, 1, sizeof one_node, lm_win_and_int, NULL, c);
    if (!rc && !one_node && w->flavor == MPI_WIN_FLAVOR_SHARED) rc = MPI_ERR_RMA_SHARED;
    if (!rc) rc = lm_coll_allgather(mine, sizeof mine, all, c);
    if (rc) {
        lm_free(LM_MEM_RMA, local);
        lm_free(LM_MEM_RMA, all);
        lm_free(LM_MEM_RMA, s);
        return rc;
    }
    spread = !one_node;
    s->nranks = n;
    s->lo = lo;
    s->span = hi - lo + 1;
    uint64_t data = 0;
    for (int r = 0; parts_here && r < n; r++) {
        if (!local[r]) continue;
        if (noncontig) data = round_up(data, PAGE);
        data += (uint64_t)all[4 * r];
    }
    s->len = (size_t)(control_bytes(n, s->span) + round_up(data, PAGE));

    announce a = {.pid = (int32_t)getpid(), .fd = -1, .rc = MPI_SUCCESS, .len = s->len};
    if (c->rank == lo) lead(s, all, local, n, parts_here, noncontig, &a);
    lm_free(LM_MEM_RMA, all);
    all = NULL;
    /* every leader's announcement to its node: a broadcast on one node,
     * gathered (a few words per rank, freed at once) on several */
    announce *heard = &a;
    if (!spread) {
        rc = lm_coll_bcast(&a, sizeof a, 0, c);
    } else if (!(heard = lm_malloc(LM_MEM_RMA, (size_t)n * sizeof a))) {
        rc = MPI_ERR_NO_MEM;
    } else {
        rc = lm_coll_allgather(&a, sizeof a, heard, c);
        if (!rc) a = heard[lo];
        lm_free(LM_MEM_RMA, heard);
    }
    /* any leader's failure is everyone's (the allreduce below) */
    ok = !rc && a.rc == MPI_SUCCESS;
    if (ok && c->rank != lo) ok = join(s, &a, n);
    if (ok && parts_here) base = s->parts + s->table[c->rank].offset;
    /* ranks on other nodes reach each part at its owner's address, known
     * once every owner has mapped its segment, and, where the network has
     * RMA, through the part's exposure (address and key) */
    if (!rc && spread) rc = publish_remote(w, s, local, base, size, ok);
    lm_free(LM_MEM_RMA, local);
    /* each leader keeps its descriptor until its node has opened the segment */
    int rc2 = lm_coll_allreduce(&ok, 1, sizeof ok, lm_win_and_int, NULL, c);
    if (c->rank == lo && a.fd >= 0) close(a.fd);
    if (rc || rc2 || !ok) {
        if (s->map) munmap(s->map, s->len);
        lm_free(LM_MEM_RMA, s);
        if (rc || rc2) return rc ? rc : rc2;
        return a.rc != MPI_SUCCESS ? a.rc : MPI_ERR_RMA_SHARED;
    }
    /* counted once per node, by its leader */
    if (c->rank == lo) {
        s->counted = 1;
        lm_mem_note_shared(LM_MEM_RMA, (long)s->len);
    }
    w->shared = s;
    w->spread = spread;
    if (parts_here) w->base = base;
    /* a process's own entry names its part in its own address space */
    s->table[c->rank].addr = (uint64_t)(uintptr_t)w->base;
    return MPI_SUCCESS;
}

void lm_win_shared_free(lm_win *w)
{
    struct lm_win_shared *s = w->shared;
    if (!s) return;
    if (s->counted) lm_mem_note_shared(LM_MEM_RMA, -(long)s->len);
    lm_transport_unexpose_rma(s->net_handle);
    munmap(s->map, s->len);
    lm_free(LM_MEM_RMA, s);
    w->shared = NULL;
}

void lm_win_shared_query(const lm_win *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void **base)
{
    const struct lm_win_shared *s = w->shared;
    const lm_win_entry *t = s->table;
    if (rank == MPI_PROC_NULL) {
        /* the lowest rank of this node with memory; if none has any, the
         * lowest rank's (empty) part */
        rank = s->lo;
        for (int r = 0; r < s->nranks; r++)
            if (t[r].size > 0 && !t[r].remote) {
                rank = r;
                break;
            }
    }
    if (t[rank].remote) {
        /* on another node: nothing this process can load from */
        *size = 0;
        *disp_unit = (MPI_Aint)t[rank].disp_unit;
        *base = NULL;
        return;
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
