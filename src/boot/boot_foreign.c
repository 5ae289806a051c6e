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
 * The layout stays arithmetic (node_segment.h: block or cyclic, no
 * table). Each rank checks that the layout puts it on its node and that its
 * node holds as many ranks as the server says (block: ranks [k*P, k*P +
 * local_size) on node k, P read from the node's lowest rank; cyclic: ranks
 * k, k + nodes, ...): when every rank agrees the layout is exact, and one
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

/* The arithmetic layout that puts the server's ranks where it placed them,
 * as far as this node can tell; 0, or -1 with why. */
static int layout_of(const lm_boot_client_info *ci, lm_layout *l, char *why, size_t cap)
{
    memset(l, 0, sizeof *l);
    l->world_size = l->reported_world_size = ci->size;
    l->universe_size = ci->universe_size;
    l->appnum = ci->appnum;
    l->node_count = ci->node_count;
    l->node_id = ci->node_id;
    l->local_size = ci->local_size;
    int n = ci->size, c = ci->node_count, k = ci->node_id, f = ci->first_local;
    if (c == 1) {
        l->kind = LM_LAYOUT_BLOCK;
        l->ranks_per_node = n;
    } else if (ci->next_local >= 0 && ci->next_local - f == c) {
        l->kind = LM_LAYOUT_CYCLIC;
    } else if (f >= 0 && (k == 0 || f % k == 0)) {
        l->kind = LM_LAYOUT_BLOCK;
        l->ranks_per_node = k == 0 ? ci->local_size : f / k;
    } else {
        l->kind = -1;
    }
    int ppn = l->ranks_per_node;
    int expect_local = l->kind == LM_LAYOUT_CYCLIC ? (n - k + c - 1) / c
                       : ppn > 0                   ? (n - k * ppn < ppn ? n - k * ppn : ppn)
                                                   : -1;
    int ok = l->kind >= 0 && k >= 0 && k < c && ci->local_size == expect_local &&
             (l->kind == LM_LAYOUT_CYCLIC || (n + ppn - 1) / ppn == c) && lm_layout_node_of(l, ci->rank) == k;
    if (!ok) {
        snprintf(why, cap,
                 "the launcher placed rank %d on node %d of %d, with %d ranks there (the lowest %d): LeanMPI "
                 "needs ranks in blocks of equal size per node or round robin over the nodes",
                 ci->rank, k, c, ci->local_size, f);
        return -1;
    }
    return 0;
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

static int attach_segment(const lm_boot_client *cl, const lm_boot_client_info *ci, const lm_layout *l,
                          lm_node_segment **seg, char *why, size_t cap)
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
    if (strncmp((*seg)->job_id, ci->job_id, sizeof(*seg)->job_id) != 0 || s->world_size != l->world_size ||
        s->node_id != l->node_id || s->local_size != l->local_size || s->kind != l->kind ||
        s->ranks_per_node != l->ranks_per_node) {
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
    lm_layout l;
    if (layout_of(&ci, &l, why, cap) != 0) return -1;
    /* the node's lowest rank, whatever order the server numbers the node's
     * ranks in (PRRTE's local ranks follow its binding, not the ranks) */
    int leader = ci.rank == ci.first_local;
    if (leader && create_segment(cl, &ci, &l, &out->segment, &out->seg_fd, why, cap) != 0) return -1;
    if (cl->publish() != 0) {
        snprintf(why, cap, "the %s server failed the fence of start-up", cl->name);
        return -1;
    }
    if (!leader && attach_segment(cl, &ci, &l, &out->segment, why, cap) != 0) return -1;
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
