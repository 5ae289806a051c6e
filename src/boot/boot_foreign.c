/* Start-up under another launcher's process-management server (PMIx, PMI-2,
 * PMI-1; boot_client.h): the job layout from the server's placement, and a
 * node segment shared by the node's ranks as under LeanMPI's own launcher,
 * which there creates it and hands every rank its descriptor.
 *
 * Here the node's lowest rank creates the segment, a memfd, and puts "<pid> <fd>" under the key
 * "seg"; the others read that key and open /proc/<pid>/fd/<fd>, which
 * gives them the same memory file (the same way windows share theirs).
 * Nothing gets a file-system name, so nothing is left behind: the memory
 * goes with the last process that maps it. The creator keeps its
 * descriptor open, and at finalize waits for every rank of the node to
 * have attached before it may exit and take the descriptor with it.
 *
 * The layout stays arithmetic (node_segment.h: block, cyclic or a few
 * blocks, no table). Each rank checks that the layout puts it on its node
 * and that its node holds as many ranks as the server says (block: ranks
 * [k*P, k*P + local_size) on node k, P read from the node's lowest rank;
 * cyclic: ranks k, k + nodes, ...; otherwise the blocks of the server's
 * whole placement): when every rank agrees the layout is exact, and one
 * that does not ends the job through the server with the reason. A rank's
 * local rank is the layout's; the server's numbering of a node's ranks
 * may differ and is not used. */
#include "boot/boot_foreign.h"
#include "boot/boot.h"
#include "boot/boot_client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEG_KEY "seg"
/* How long the node's first rank waits at finalize for the others to have
 * attached (a rank that never starts is the launcher's to report). */
#define ATTACH_WAIT_S 60

/* 1 when the layout puts this rank on its node, and as many ranks there as
 * the server says. */
static int layout_fits(const lm_boot_client_info *ci, const lm_layout *l)
{
    int n = ci->size, c = ci->node_count, k = ci->node_id, ppn = l->ranks_per_node;
    if (k < 0 || k >= c || lm_layout_node_of(l, ci->rank) != k) return 0;
    if (l->kind == LM_LAYOUT_VECTOR) return lm_layout_vector_ranks_on(l, k, n) == ci->local_size;
    int expect_local = l->kind == LM_LAYOUT_CYCLIC ? (n - k + c - 1) / c
                       : ppn > 0                   ? (n - k * ppn < ppn ? n - k * ppn : ppn)
                                                   : -1;
    return ci->local_size == expect_local && (l->kind == LM_LAYOUT_CYCLIC || (n + ppn - 1) / ppn == c);
}

/* A node's consecutive ranks: [lowest, lowest + count). */
struct node_run {
    int node, lowest, count;
};

static int by_lowest(const void *a, const void *b)
{
    const struct node_run *x = a, *y = b;
    return (x->lowest > y->lowest) - (x->lowest < y->lowest);
}

/* Blocks of consecutive ranks per node, from the server's per-node answers
 * (PMIx): the nodes sorted by their lowest rank must tile the ranks in
 * order; neighbouring nodes with equal counts share a block. A list of the
 * nodes lives only while this runs. 0, or -1. */
static int vector_from_nodes(const lm_boot_client *cl, const lm_boot_client_info *ci, lm_layout *l)
{
    int c = ci->node_count, rc = -1;
    if (!cl->node_ranks || c < 2 || c > ci->size) return -1;
    struct node_run *run = malloc(sizeof *run * (size_t)c);
    if (!run) return -1;
    for (int j = 0; j < c; j++) {
        int contiguous;
        run[j].node = j;
        if (cl->node_ranks(j, &run[j].count, &run[j].lowest, &contiguous) != 0 || !contiguous) goto free_runs;
    }
    qsort(run, (size_t)c, sizeof *run, by_lowest);
    int next = 0;
    l->nblocks = 0;
    for (int i = 0; i < c; i++) {
        if (run[i].lowest != next || run[i].count < 1 || lm_layout_add_run(l, run[i].node, run[i].count) != 0)
            goto free_runs;
        next += run[i].count;
    }
    if (next != ci->size) goto free_runs;
    l->kind = LM_LAYOUT_VECTOR;
    rc = lm_layout_vector_valid(l) ? 0 : -1;
free_runs:
    free(run);
    return rc;
}

/* The arithmetic layout that puts the server's ranks where it placed them.
 * Every node must end with the same layout (each one's arithmetic for the
 * others' ranks must agree), so it comes from what the server says of the
 * whole job wherever it says it: PMI's mapping, or PMIx's ranks of each
 * node (job data the client holds); BLOCK or CYCLIC where those blocks are
 * exactly that. Only a server that tells neither leaves this node to infer
 * equal blocks or round robin from its own ranks, and then a node whose
 * ranks do not fit ends the job. 0, or -1 with why. */
static int layout_of(const lm_boot_client *cl, const lm_boot_client_info *ci, lm_layout *l, char *why, size_t cap)
{
    memset(l, 0, sizeof *l);
    l->world_size = l->reported_world_size = ci->size;
    l->universe_size = ci->universe_size;
    l->appnum = ci->appnum;
    l->node_count = ci->node_count;
    l->node_id = ci->node_id;
    l->local_size = ci->local_size;
    int n = ci->size, c = ci->node_count, k = ci->node_id, f = ci->first_local;
    l->kind = -1;
    if (c == 1) {
        l->kind = LM_LAYOUT_BLOCK;
        l->ranks_per_node = n;
    } else if (ci->nblocks > 0) {
        l->kind = LM_LAYOUT_VECTOR;
        l->nblocks = ci->nblocks;
        memcpy(l->block, ci->block, sizeof l->block);
        if (!lm_layout_vector_valid(l)) l->kind = -1;
    } else if (vector_from_nodes(cl, ci, l) != 0) {
        l->kind = -1;
        if (ci->next_local >= 0 && ci->next_local - f == c) {
            l->kind = LM_LAYOUT_CYCLIC;
        } else if (f >= 0 && (k == 0 || f % k == 0)) {
            l->kind = LM_LAYOUT_BLOCK;
            l->ranks_per_node = k == 0 ? ci->local_size : f / k;
        }
    }
    lm_layout_canonical(l);
    if (l->kind >= 0 && layout_fits(ci, l)) return 0;
    snprintf(why, cap,
             "the launcher placed rank %d on node %d of %d, with %d ranks there (the lowest %d): LeanMPI needs each "
             "node's ranks in consecutive blocks (at most %d runs of nodes with equal counts) or round robin over "
             "the nodes",
             ci->rank, k, c, ci->local_size, f, LM_LAYOUT_BLOCKS_MAX);
    return -1;
}

static int create_segment(const lm_boot_client *cl, const lm_boot_client_info *ci, lm_layout *l, lm_node_segment **seg,
                          int *seg_fd, char *why, size_t cap)
{
    l->node_cpus = lm_node_usable_cpus();
    int fd = lm_node_segment_create(ci->job_id, l, seg);
    if (fd < 0) {
        snprintf(why, cap, "cannot create the node segment: %s", strerror(errno));
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC); /* not for the processes this rank may start */
    char v[64];
    int n = snprintf(v, sizeof v, "%d %d", (int)getpid(), fd);
    if (cl->put(SEG_KEY, v, (size_t)n + 1) != 0) {
        snprintf(why, cap, "the %s server refused the key of the node segment", cl->name);
        return -1;
    }
    *seg_fd = fd;
    return 0;
}

/* The other ranks of a node take the layout from the segment its lowest
 * rank made rather than working it out again: under PMIx that takes a
 * lookup per node, which one rank per node is enough to pay. They check
 * that it is their job and puts them on their node with as many ranks as
 * the server says. */
static int attach_segment(const lm_boot_client *cl, const lm_boot_client_info *ci, lm_node_segment **seg, char *why,
                          size_t cap)
{
    char v[64];
    long got = cl->get(ci->first_local, SEG_KEY, v, sizeof v - 1);
    /* A server that should wait for the key may still answer "not found"
     * before its owner committed it (Open MPI 4.1's mpirun does): ask
     * again, for a bounded time. */
    struct timespec step = {0, 1000000};
    for (long waited = 0; got == -ENOENT && cl->get_waits && waited < ATTACH_WAIT_S * 1000L; waited++) {
        nanosleep(&step, NULL);
        got = cl->get(ci->first_local, SEG_KEY, v, sizeof v - 1);
    }
    int pid, fd;
    if (got <= 0) {
        snprintf(why, cap, "the node segment's key of rank %d is not in the %s server (%s)", ci->first_local, cl->name,
                 got == -ENOENT ? "not found" : "server error");
        return -1;
    }
    v[got] = '\0';
    lm_boot_count.key_fetches++;
    if (sscanf(v, "%d %d", &pid, &fd) != 2) {
        snprintf(why, cap, "the node segment's key of rank %d is malformed ('%s')", ci->first_local, v);
        return -1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
    int mine = open(path, O_RDWR | O_CLOEXEC);
    if (mine < 0) {
        snprintf(why, cap, "cannot open the node segment of rank %d (%s): %s", ci->first_local, path, strerror(errno));
        return -1;
    }
    int rc = lm_node_segment_attach(mine, seg);
    close(mine);
    if (rc != 0) {
        snprintf(why, cap, "cannot map the node segment of rank %d: %s", ci->first_local, strerror(errno));
        return -1;
    }
    const lm_layout *s = &(*seg)->layout;
    if (strncmp((*seg)->job_id, ci->job_id, sizeof(*seg)->job_id) != 0 || s->world_size != ci->size ||
        s->node_id != ci->node_id || s->local_size != ci->local_size || s->node_count != ci->node_count ||
        !layout_fits(ci, s)) {
        snprintf(why, cap, "the node segment of rank %d describes another job or placement", ci->first_local);
        lm_node_segment_detach(*seg);
        return -1;
    }
    return 0;
}

int lm_boot_foreign_start(const char *which, lm_boot_foreign *out, char *why, size_t cap)
{
    const lm_boot_client *cl = NULL;
    lm_boot_client_info ci;
    int forced = which != NULL;
    memset(out, 0, sizeof *out);
    int rc = 0;
    if (!which || !strcmp(which, "pmix")) rc = lm_boot_pmix_open(forced, &cl, &ci, why, cap);
    if (rc == 0 && (!which || !strcmp(which, "pmi"))) rc = lm_boot_pmi_open(forced, &cl, &ci, why, cap);
    if (rc <= 0) return rc;

    out->client = cl;
    out->seg_fd = -1;
    /* the node's lowest rank, whatever order the server numbers the node's
     * ranks in (PRRTE's local ranks follow its binding, not the ranks),
     * works out the layout and makes the segment */
    int leader = ci.rank == ci.first_local;
    lm_layout l;
    if (leader && (layout_of(cl, &ci, &l, why, cap) != 0 ||
                   create_segment(cl, &ci, &l, &out->segment, &out->seg_fd, why, cap) != 0))
        return -1;
    if (cl->publish() != 0) {
        snprintf(why, cap, "the %s server failed the fence of start-up", cl->name);
        return -1;
    }
    if (!leader && attach_segment(cl, &ci, &out->segment, why, cap) != 0) return -1;
    out->world_rank = ci.rank;
    return 1;
}

void lm_boot_foreign_wait_attached(lm_node_segment *seg, int local_size)
{
    struct timespec step = {0, 1000000};
    for (long waited = 0; waited < ATTACH_WAIT_S * 1000L; waited++) {
        int all = 1;
        for (int i = 0; i < local_size && all; i++)
            if (atomic_load(&lm_node_segment_rank(seg, i)->pid) == 0) all = 0;
        if (all) return;
        nanosleep(&step, NULL);
    }
}
