/* Node segment creation, attachment and layout evaluation.
 *
 * Layout of the segment (every area starts on a page boundary so that each
 * area's pages are only ever touched by the code that uses them; pages no one
 * touches are never allocated, which keeps an idle segment nearly free):
 *
 *   [ header | placement tables (TABLE layouts only) | rank blocks (local_size)
 *     | KVS | shm transport area ]
 *
 * The memfd has no file-system name and is sealed against resizing once
 * sized, so a rank can neither leave a file behind nor make its peers fault
 * by shrinking the mapping under them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, memrchr */
#endif
#include "boot/node_segment.h"
#include "boot/kvs.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LM_SEG_ALIGN 4096u
#define LM_KVS_MIN_SLOTS 1024u
#define LM_KVS_SLOTS_PER_RANK 16u

static size_t align_up(size_t n) { return (n + LM_SEG_ALIGN - 1) & ~(size_t)(LM_SEG_ALIGN - 1); }

/* The creator decides the slot count; attachers read the offsets from the
 * header, so a differing environment in a rank cannot break the layout.
 * Default: room for 16 keys per local rank (at least 1024 slots), at most
 * half full in practice so probe chains stay short. Unused slot pages are
 * never touched, so the reserve costs address space, not memory. */
static unsigned kvs_slots(int local_size)
{
    const char *s = getenv("LEANMPI_KVS_SLOTS");
    if (s && *s) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (*end == '\0' && v >= 16 && v <= (1ul << 24)) return (unsigned)v;
    }
    unsigned long n = (unsigned long)local_size * LM_KVS_SLOTS_PER_RANK;
    return n > LM_KVS_MIN_SLOTS ? (unsigned)(n < (1ul << 24) ? n : (1ul << 24)) : LM_KVS_MIN_SLOTS;
}

static size_t (*area_size)(int local_size);
static void (*area_format)(void *area, int local_size);

void lm_node_segment_set_transport_area(size_t (*size)(int), void (*format)(void *, int))
{
    area_size = size;
    area_format = format;
}

struct seg_plan {
    size_t table_offset, ranks_offset, kvs_offset, kvs_size, transport_offset, transport_size, total;
};

/* int32_t entries of a TABLE layout's tables (lm_layout_table). */
static size_t table_entries(const lm_layout *l)
{
    return l->kind == LM_LAYOUT_TABLE ? 3 * (size_t)l->world_size + (size_t)l->node_count + 1 : 0;
}

static struct seg_plan plan_placed(int local_size, unsigned nslots, size_t table_bytes)
{
    struct seg_plan p;
    p.table_offset = align_up(sizeof(lm_node_segment));
    p.ranks_offset = p.table_offset + align_up(table_bytes);
    p.kvs_offset = p.ranks_offset + align_up((size_t)local_size * sizeof(lm_rank_block));
    p.kvs_size = lm_kvs_size(nslots);
    p.transport_offset = p.kvs_offset + align_up(p.kvs_size);
    p.transport_size = area_size ? area_size(local_size) : 0;
    p.total = p.transport_offset + align_up(p.transport_size);
    return p;
}

static struct seg_plan plan(int local_size, unsigned nslots) { return plan_placed(local_size, nslots, 0); }

/* A TABLE layout's tables from the node of every rank (checked by
 * lm_placement_counts). first[] ends as each node's start in by_node;
 * while filling, first[k + 1] counts node k's ranks placed so far. */
static void fill_table(int32_t *t, const int32_t *rank_node, int n, int nodes)
{
    int32_t *node_of = t, *local_of = t + n, *by_node = t + 2 * (size_t)n, *first = t + 3 * (size_t)n;
    for (int i = 0; i <= nodes; i++) first[i] = 0;
    for (int r = 0; r < n; r++) {
        int32_t k = rank_node[r];
        node_of[r] = k;
        local_of[r] = first[k + 1]++;
    }
    for (int i = 0; i < nodes; i++) first[i + 1] += first[i];
    for (int r = 0; r < n; r++) by_node[first[rank_node[r]] + local_of[r]] = r;
}

int lm_placement_counts(const int32_t *rank_node, int n, int nodes, int *counts)
{
    for (int i = 0; i < nodes; i++) counts[i] = 0;
    for (int r = 0; r < n; r++) {
        if (rank_node[r] < 0 || rank_node[r] >= nodes) return -1;
        counts[rank_node[r]]++;
    }
    for (int i = 0; i < nodes; i++)
        if (counts[i] == 0) return -1;
    return 0;
}

size_t lm_node_segment_size(int local_size) { return plan(local_size, kvs_slots(local_size)).total; }

/* Fill a zero-filled mapping of plan p: header, rank blocks, KVS, transport. */
static void format(lm_node_segment *seg, const struct seg_plan *p, unsigned nslots, const char *job_id,
                   const lm_layout *layout, const int32_t *rank_node)
{
    seg->version = LM_NODE_SEGMENT_VERSION;
    seg->header_size = sizeof(lm_node_segment);
    seg->total_size = p->total;
    snprintf(seg->job_id, sizeof seg->job_id, "%s", job_id);
    seg->launcher_pid = (int32_t)getpid();
    seg->layout = *layout;
    seg->layout.table_offset = 0;
    if (layout->kind == LM_LAYOUT_TABLE) {
        seg->layout.table_offset = (int64_t)p->table_offset - (int64_t)offsetof(lm_node_segment, layout);
        fill_table(lm_node_segment_at(seg, p->table_offset), rank_node, layout->world_size, layout->node_count);
    }
    seg->ranks_offset = p->ranks_offset;
    seg->kvs_offset = p->kvs_offset;
    seg->kvs_size = p->kvs_size;
    seg->transport_offset = p->transport_offset;
    seg->transport_size = p->transport_size;
    for (int i = 0; i < layout->local_size; i++) {
        lm_rank_block *rb = lm_node_segment_rank(seg, i);
        rb->world_rank = lm_layout_world_rank_of(&seg->layout, layout->node_id, i);
    }
    lm_kvs_format(lm_node_segment_at(seg, seg->kvs_offset), nslots);
    if (area_format && p->transport_size)
        area_format(lm_node_segment_at(seg, seg->transport_offset), layout->local_size);
    /* Magic last: an attacher that sees it sees a fully formatted segment. */
    atomic_thread_fence(memory_order_release);
    seg->magic = LM_NODE_SEGMENT_MAGIC;
}

static int valid_layout(const lm_layout *l)
{
    return l && l->world_size > 0 && l->local_size > 0 && l->node_count > 0 && l->node_id >= 0 &&
           l->node_id < l->node_count && l->local_size <= l->world_size && l->reported_world_size >= l->world_size &&
           l->universe_size >= l->reported_world_size &&
           (l->kind == LM_LAYOUT_CYCLIC || (l->kind == LM_LAYOUT_BLOCK && l->ranks_per_node > 0) ||
            (l->kind == LM_LAYOUT_VECTOR && lm_layout_vector_valid(l)) || l->kind == LM_LAYOUT_TABLE);
}

/* A TABLE placement that gives this node local_size ranks. */
static int valid_placement(const lm_layout *l, const int32_t *rank_node)
{
    if (l->kind != LM_LAYOUT_TABLE) return 1;
    if (!rank_node) return 0;
    int here = 0;
    for (int r = 0; r < l->world_size; r++) {
        if (rank_node[r] < 0 || rank_node[r] >= l->node_count) return 0;
        here += rank_node[r] == l->node_id;
    }
    return here == l->local_size;
}

int lm_node_segment_create_placed(const char *job_id, const lm_layout *layout, const int32_t *rank_node,
                                  lm_node_segment **out)
{
    if (!job_id || !out || !valid_layout(layout) || !valid_placement(layout, rank_node)) {
        errno = EINVAL;
        return -1;
    }
    unsigned nslots = kvs_slots(layout->local_size);
    struct seg_plan p = plan_placed(layout->local_size, nslots, table_entries(layout) * sizeof(int32_t));
    char name[64];
    snprintf(name, sizeof name, "leanmpi-%s", job_id);

    int fd = memfd_create(name, MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    int saved;
    if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)p.total) != 0) goto fail;
    /* Sealing is a safety net, not a requirement: ignore kernels without it. */
    (void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    void *m = mmap(NULL, p.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) goto fail;
    format(m, &p, nslots, job_id, layout, rank_node);
    *out = m;
    return fd;
fail:
    saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

int lm_node_segment_create(const char *job_id, const lm_layout *layout, lm_node_segment **out)
{
    return lm_node_segment_create_placed(job_id, layout, NULL, out);
}

int lm_node_segment_attach(int fd, lm_node_segment **out)
{
    struct stat st;
    if (!out || fstat(fd, &st) != 0) return -1;
    if ((size_t)st.st_size < sizeof(lm_node_segment)) {
        errno = EINVAL;
        return -1;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) return -1;
    lm_node_segment *seg = m;
    if (seg->magic != LM_NODE_SEGMENT_MAGIC || seg->version != LM_NODE_SEGMENT_VERSION ||
        seg->header_size != sizeof(lm_node_segment) || seg->total_size != (uint64_t)st.st_size ||
        seg->transport_offset + seg->transport_size > seg->total_size ||
        seg->kvs_offset + seg->kvs_size > seg->total_size ||
        (seg->layout.kind == LM_LAYOUT_TABLE &&
         (seg->layout.table_offset < 0 || (uint64_t)seg->layout.table_offset + offsetof(lm_node_segment, layout) +
                                                  table_entries(&seg->layout) * sizeof(int32_t) >
                                              seg->ranks_offset))) {
        munmap(m, (size_t)st.st_size);
        errno = EPROTO;
        return -1;
    }
    atomic_thread_fence(memory_order_acquire);
    *out = seg;
    return 0;
}

int lm_node_segment_create_private(lm_node_segment **out, int *fd_out)
{
    lm_layout l = {.world_size = 1,
                   .reported_world_size = 1,
                   .universe_size = 1,
                   .node_count = 1,
                   .node_id = 0,
                   .local_size = 1,
                   .kind = LM_LAYOUT_BLOCK,
                   .ranks_per_node = 1,
                   .appnum = 0};
    char job[32];
    snprintf(job, sizeof job, "singleton-%d", (int)getpid());
    /* A memory file first, so that a launcher started later (a singleton's
     * broker for dynamic processes) can map it; kept out of exec'd programs. */
    int fd = lm_node_segment_create(job, &l, out);
    if (fd >= 0) {
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        if (fd_out) *fd_out = fd;
        else close(fd); /* the mapping keeps it */
        return 0;
    }
    if (fd_out) *fd_out = -1;
    unsigned nslots = kvs_slots(1);
    struct seg_plan p = plan(1, nslots);
    /* Anonymous shared memory: same layout as a launcher's segment, no name,
     * gone with the process. Shared (not private) so a fork()ed helper of the
     * singleton sees the same segment. */
    void *m = mmap(NULL, p.total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return -1;
    format(m, &p, nslots, job, &l, NULL);
    *out = m;
    return 0;
}

void lm_node_segment_detach(lm_node_segment *seg)
{
    if (seg) munmap(seg, (size_t)seg->total_size);
}

/* ---- VECTOR: passes over the blocks ---- */

static long vector_pass(const lm_layout *l)
{
    long t = 0;
    for (int i = 0; i < l->nblocks; i++) t += (long)l->block[i].nodes * l->block[i].ppn;
    return t;
}

/* Ranks one pass puts on node. */
static long vector_per_pass(const lm_layout *l, int node)
{
    long n = 0;
    for (int i = 0; i < l->nblocks; i++)
        if (node >= l->block[i].node && node < l->block[i].node + l->block[i].nodes) n += l->block[i].ppn;
    return n;
}

int lm_layout_vector_valid(const lm_layout *l)
{
    if (l->nblocks < 1 || l->nblocks > LM_LAYOUT_BLOCKS_MAX) return 0;
    for (int i = 0; i < l->nblocks; i++) {
        const lm_layout_block *b = &l->block[i];
        if (b->node < 0 || b->nodes < 1 || b->ppn < 1 || (long)b->node + b->nodes > l->node_count) return 0;
    }
    return vector_pass(l) <= 0x7fffffff;
}

int lm_layout_vector_ranks_on(const lm_layout *l, int node, int below)
{
    long pass = vector_pass(l), n = (below / pass) * vector_per_pass(l, node), r = below % pass;
    for (int i = 0; i < l->nblocks && r > 0; i++) {
        const lm_layout_block *b = &l->block[i];
        long span = (long)b->nodes * b->ppn, here = r < span ? r : span;
        int k = node - b->node;
        if (k >= 0 && k < b->nodes) {
            long from = (long)k * b->ppn, upto = from + b->ppn;
            if (here > from) n += (here < upto ? here : upto) - from;
        }
        r -= here;
    }
    return (int)n;
}

static int vector_node_of(const lm_layout *l, int world_rank)
{
    long r = world_rank % vector_pass(l);
    for (int i = 0; i < l->nblocks; i++) {
        long span = (long)l->block[i].nodes * l->block[i].ppn;
        if (r < span) return l->block[i].node + (int)(r / l->block[i].ppn);
        r -= span;
    }
    return -1;
}

static int vector_world_rank_of(const lm_layout *l, int node, int local_rank)
{
    long pass = vector_pass(l), per = vector_per_pass(l, node);
    if (per <= 0) return -1;
    long k = local_rank % per, off = (local_rank / per) * pass;
    for (int i = 0; i < l->nblocks; i++) {
        const lm_layout_block *b = &l->block[i];
        if (node >= b->node && node < b->node + b->nodes) {
            if (k < b->ppn) return (int)(off + (long)(node - b->node) * b->ppn + k);
            k -= b->ppn;
        }
        off += (long)b->nodes * b->ppn;
    }
    return -1;
}

void lm_layout_canonical(lm_layout *l)
{
    if (l->kind != LM_LAYOUT_VECTOR || !lm_layout_vector_valid(l)) return;
    const lm_layout_block *a = &l->block[0], *b = &l->block[1];
    long n = l->world_size, c = l->node_count;
    if (a->node != 0) return;
    if (l->nblocks == 1 && a->nodes == c && a->ppn == 1 && n >= c) { /* one rank per node, pass after pass */
        l->kind = LM_LAYOUT_CYCLIC;
    } else if (l->nblocks == 1 && a->nodes == c && n <= c * a->ppn && n > (c - 1) * a->ppn) {
        l->kind = LM_LAYOUT_BLOCK; /* equal blocks, the last node's possibly short */
        l->ranks_per_node = a->ppn;
    } else if (l->nblocks == 2 && a->nodes == c - 1 && b->node == c - 1 && b->nodes == 1 && b->ppn < a->ppn &&
               n == (c - 1) * a->ppn + b->ppn) {
        l->kind = LM_LAYOUT_BLOCK; /* the same, the short last node spelled out */
        l->ranks_per_node = a->ppn;
    } else {
        return;
    }
    l->nblocks = 0;
}

int lm_layout_from_counts(lm_layout *l, const int *counts, int nodes)
{
    int equal = nodes >= 1 && counts[0] > 0 && counts[nodes - 1] <= counts[0];
    for (int i = 1; i < nodes - 1 && equal; i++) equal = counts[i] == counts[0];
    l->node_count = nodes;
    l->nblocks = 0;
    if (equal) {
        l->kind = LM_LAYOUT_BLOCK;
        l->ranks_per_node = counts[0];
        return 0;
    }
    l->kind = LM_LAYOUT_VECTOR;
    l->ranks_per_node = 0;
    for (int i = 0; i < nodes; i++)
        if (counts[i] < 1 || lm_layout_add_run(l, i, counts[i]) != 0) return -1;
    return 0;
}

int lm_layout_add_run(lm_layout *l, int node, int count)
{
    lm_layout_block *last = l->nblocks > 0 ? &l->block[l->nblocks - 1] : NULL;
    if (last && node == last->node + last->nodes && count == last->ppn) {
        last->nodes++;
        return 0;
    }
    if (l->nblocks == LM_LAYOUT_BLOCKS_MAX) return -1;
    l->block[l->nblocks++] = (lm_layout_block){node, 1, count};
    return 0;
}

int lm_layout_node_of(const lm_layout *l, int world_rank)
{
    if (l->kind == LM_LAYOUT_TABLE) return lm_layout_table(l)[world_rank];
    if (l->kind == LM_LAYOUT_CYCLIC) return world_rank % l->node_count;
    if (l->kind == LM_LAYOUT_VECTOR) return vector_node_of(l, world_rank);
    return world_rank / l->ranks_per_node;
}

int lm_layout_local_rank_of(const lm_layout *l, int world_rank)
{
    if (l->kind == LM_LAYOUT_TABLE) return lm_layout_table(l)[l->world_size + world_rank];
    if (l->kind == LM_LAYOUT_CYCLIC) return world_rank / l->node_count;
    if (l->kind == LM_LAYOUT_VECTOR) return lm_layout_vector_ranks_on(l, vector_node_of(l, world_rank), world_rank);
    return world_rank % l->ranks_per_node;
}

int lm_layout_world_rank_of(const lm_layout *l, int node, int local_rank)
{
    if (l->kind == LM_LAYOUT_TABLE) {
        const int32_t *t = lm_layout_table(l), *first = t + 3 * (size_t)l->world_size;
        if (local_rank < 0 || local_rank >= first[node + 1] - first[node]) return -1;
        return t[2 * (size_t)l->world_size + first[node] + local_rank];
    }
    if (l->kind == LM_LAYOUT_CYCLIC) return local_rank * l->node_count + node;
    if (l->kind == LM_LAYOUT_VECTOR) return vector_world_rank_of(l, node, local_rank);
    return node * l->ranks_per_node + local_rank;
}

int lm_node_usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
