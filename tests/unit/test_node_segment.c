/* Node segment: layout, attachment by an inherited descriptor, no name left
 * anywhere, and the layout descriptor's arithmetic. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, memrchr */
#endif
#include "boot/kvs.h"
#include "boot/node_segment.h"
#include "transport/shm_layout.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit_check.h"

static int count_shm_entries(const char *needle)
{
    int n = 0;
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    if (!d) return 0;
    while ((e = readdir(d)))
        if (strstr(e->d_name, needle)) n++;
    closedir(d);
    return n;
}

static void test_create_attach(void)
{
    lm_layout l = {.world_size = 5,
                   .reported_world_size = 64,
                   .universe_size = 100,
                   .node_count = 1,
                   .node_id = 0,
                   .local_size = 5,
                   .kind = LM_LAYOUT_BLOCK,
                   .ranks_per_node = 5};
    lm_node_segment *seg;
    int fd = lm_node_segment_create("unit-test", &l, &seg);
    CHECK(fd >= 0);
    CHECK(count_shm_entries("unit-test") == 0); /* no file-system name */
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK((size_t)st.st_size == lm_node_segment_size(5));
    CHECK(!(fcntl(fd, F_GETFD) & FD_CLOEXEC)); /* ranks inherit it */
    CHECK(seg->magic == LM_NODE_SEGMENT_MAGIC && strcmp(seg->job_id, "unit-test") == 0);
    CHECK(seg->launcher_pid == getpid());
    CHECK(seg->layout.reported_world_size == 64 && seg->layout.universe_size == 100);
    /* Areas are page aligned, in order, and inside the segment. */
    CHECK(seg->ranks_offset % 4096 == 0 && seg->kvs_offset % 4096 == 0 && seg->transport_offset % 4096 == 0);
    CHECK(seg->ranks_offset >= sizeof *seg);
    CHECK(seg->kvs_offset >= seg->ranks_offset + 5 * sizeof(lm_rank_block));
    CHECK(seg->transport_offset >= seg->kvs_offset + seg->kvs_size);
    CHECK(seg->transport_offset + seg->transport_size <= seg->total_size);
    CHECK(seg->transport_size == lm_shm_area_size(5));
    CHECK(lm_shm_area_check(lm_node_segment_at(seg, seg->transport_offset), 5) == 0);
    CHECK(lm_kvs_from(lm_node_segment_at(seg, seg->kvs_offset)) != NULL);
    for (int i = 0; i < 5; i++) {
        CHECK(lm_node_segment_rank(seg, i)->world_rank == i);
        CHECK(lm_node_segment_rank(seg, i)->state == LM_RANK_NOT_STARTED);
    }
    /* The segment cannot be resized under the ranks. */
    CHECK(ftruncate(fd, 4096) != 0);

    /* A child attaches through the inherited descriptor and writes. */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        lm_node_segment *s2;
        if (lm_node_segment_attach(fd, &s2) != 0) _exit(2);
        atomic_store(&lm_node_segment_rank(s2, 3)->state, LM_RANK_FINALIZED);
        lm_kvs *k = lm_kvs_from(lm_node_segment_at(s2, s2->kvs_offset));
        if (!k || lm_kvs_put(k, "from-child", "42", 3) != 0) _exit(3);
        lm_node_segment_detach(s2);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(lm_node_segment_rank(seg, 3)->state == LM_RANK_FINALIZED);
    char v[8];
    CHECK(lm_kvs_get(lm_kvs_from(lm_node_segment_at(seg, seg->kvs_offset)), "from-child", v, sizeof v) == 3 &&
          strcmp(v, "42") == 0);

    /* Something that is not a segment is refused. */
    int bogus = memfd_create("bogus", 0);
    CHECK(bogus >= 0 && ftruncate(bogus, 65536) == 0);
    lm_node_segment *s3;
    CHECK(lm_node_segment_attach(bogus, &s3) != 0);
    close(bogus);

    lm_node_segment_detach(seg);
    close(fd);
}

static void test_bad_layout(void)
{
    lm_node_segment *seg;
    lm_layout l = {.world_size = 0, .reported_world_size = 0, .node_count = 1, .local_size = 0};
    errno = 0;
    CHECK(lm_node_segment_create("x", &l, &seg) < 0 && errno == EINVAL);
    lm_layout l2 = {.world_size = 4,
                    .reported_world_size = 2,
                    .node_count = 1,
                    .local_size = 4,
                    .kind = LM_LAYOUT_BLOCK,
                    .ranks_per_node = 4};
    CHECK(lm_node_segment_create("x", &l2, &seg) < 0); /* reported < real */
    lm_layout l3 = {.world_size = 4,
                    .reported_world_size = 4,
                    .universe_size = 3,
                    .node_count = 1,
                    .local_size = 4,
                    .kind = LM_LAYOUT_BLOCK,
                    .ranks_per_node = 4};
    CHECK(lm_node_segment_create("x", &l3, &seg) < 0); /* universe < world */
}

static void test_private(void)
{
    lm_node_segment *seg;
    CHECK(lm_node_segment_create_private(&seg, NULL) == 0);
    CHECK(seg->layout.world_size == 1 && seg->layout.local_size == 1);
    CHECK(lm_kvs_put(lm_kvs_from(lm_node_segment_at(seg, seg->kvs_offset)), "k", "v", 2) == 0);
    CHECK(lm_shm_area_check(lm_node_segment_at(seg, seg->transport_offset), 1) == 0);
    lm_node_segment_detach(seg);
}

static void test_layout(void)
{
    /* 10 ranks, BLOCK of 4 per node: nodes hold 0-3, 4-7, 8-9. */
    lm_layout b = {.world_size = 10, .node_count = 3, .kind = LM_LAYOUT_BLOCK, .ranks_per_node = 4};
    CHECK(lm_layout_node_of(&b, 0) == 0 && lm_layout_node_of(&b, 5) == 1 && lm_layout_node_of(&b, 9) == 2);
    CHECK(lm_layout_local_rank_of(&b, 5) == 1 && lm_layout_local_rank_of(&b, 9) == 1);
    /* CYCLIC over 3 nodes: node 1 holds 1, 4, 7. */
    lm_layout c = {.world_size = 10, .node_count = 3, .kind = LM_LAYOUT_CYCLIC};
    CHECK(lm_layout_node_of(&c, 7) == 1 && lm_layout_local_rank_of(&c, 7) == 2);
    for (int r = 0; r < 10; r++) {
        CHECK(lm_layout_world_rank_of(&b, lm_layout_node_of(&b, r), lm_layout_local_rank_of(&b, r)) == r);
        CHECK(lm_layout_world_rank_of(&c, lm_layout_node_of(&c, r), lm_layout_local_rank_of(&c, r)) == r);
    }
}

/* VECTOR layouts against a table built by placing ranks pass by pass, the
 * way PMI_process_mapping reads: node, local rank and the way back agree. */
static void check_vector(lm_layout *v, int n)
{
    int node_of[64], local_of[64], count[8] = {0}, r = 0;
    v->kind = LM_LAYOUT_VECTOR;
    v->world_size = n;
    CHECK(lm_layout_vector_valid(v));
    while (r < n)
        for (int i = 0; i < v->nblocks && r < n; i++)
            for (int k = 0; k < v->block[i].nodes && r < n; k++)
                for (int j = 0; j < v->block[i].ppn && r < n; j++, r++) {
                    node_of[r] = v->block[i].node + k;
                    local_of[r] = count[node_of[r]]++;
                }
    for (r = 0; r < n; r++) {
        CHECK(lm_layout_node_of(v, r) == node_of[r]);
        CHECK(lm_layout_local_rank_of(v, r) == local_of[r]);
        CHECK(lm_layout_world_rank_of(v, node_of[r], local_of[r]) == r);
    }
    for (int node = 0; node < v->node_count; node++) CHECK(lm_layout_vector_ranks_on(v, node, n) == count[node]);
}

static void test_vector_layout(void)
{
    /* hosts with 1 and 3 slots */
    lm_layout a = {.node_count = 2, .nblocks = 2, .block = {{0, 1, 1}, {1, 1, 3}}};
    check_vector(&a, 4);
    /* Slurm's balanced blocks: 4 ranks on 3 nodes as 2, 1, 1 */
    lm_layout b = {.node_count = 3, .nblocks = 2, .block = {{0, 1, 2}, {1, 2, 1}}};
    check_vector(&b, 4);
    /* a pattern repeated: 2 on node 0, 1 on node 1, over and over */
    lm_layout c = {.node_count = 2, .nblocks = 2, .block = {{0, 1, 2}, {1, 1, 1}}};
    check_vector(&c, 11);
    /* blocks out of node order, and a node in two blocks */
    lm_layout d = {.node_count = 4, .nblocks = 3, .block = {{2, 2, 3}, {0, 1, 1}, {1, 2, 2}}};
    check_vector(&d, 40);
    /* canonical forms: the same placement as BLOCK or CYCLIC where the
     * blocks say exactly that, else unchanged */
    struct {
        int n, c, nblocks, kind, ppn;
        lm_layout_block b[2];
    } cases[] = {
        {3, 2, 1, LM_LAYOUT_BLOCK, 2, {{0, 2, 2}}},             /* Hydra -ppn 2, 3 ranks */
        {5, 2, 2, LM_LAYOUT_BLOCK, 3, {{0, 1, 3}, {1, 1, 2}}},  /* Slurm -n 5 -N 2 */
        {7, 3, 1, LM_LAYOUT_CYCLIC, 0, {{0, 3, 1}}},            /* round robin */
        {4, 2, 2, LM_LAYOUT_VECTOR, 0, {{0, 1, 1}, {1, 1, 3}}}, /* 1 and 3 */
        {4, 3, 2, LM_LAYOUT_VECTOR, 0, {{0, 1, 2}, {1, 2, 1}}}, /* 2, 1, 1 */
        {7, 2, 1, LM_LAYOUT_VECTOR, 0, {{0, 2, 2}}},            /* 2 and 2, over and over */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lm_layout v = {
            .world_size = cases[i].n, .node_count = cases[i].c, .kind = LM_LAYOUT_VECTOR, .nblocks = cases[i].nblocks};
        memcpy(v.block, cases[i].b, sizeof cases[i].b);
        lm_layout canon = v;
        lm_layout_canonical(&canon);
        CHECK(canon.kind == cases[i].kind);
        if (canon.kind == LM_LAYOUT_BLOCK) CHECK(canon.ranks_per_node == cases[i].ppn);
        for (int r = 0; r < cases[i].n; r++) {
            CHECK(lm_layout_node_of(&canon, r) == lm_layout_node_of(&v, r));
            CHECK(lm_layout_local_rank_of(&canon, r) == lm_layout_local_rank_of(&v, r));
        }
    }
    /* malformed: a block beyond the nodes, no blocks, too many */
    lm_layout e = {.node_count = 2, .nblocks = 1, .block = {{1, 2, 1}}};
    CHECK(!lm_layout_vector_valid(&e));
    e.nblocks = 0;
    CHECK(!lm_layout_vector_valid(&e));
    e.nblocks = LM_LAYOUT_BLOCKS_MAX + 1;
    CHECK(!lm_layout_vector_valid(&e));
}

static void test_slots_env(void)
{
    setenv("LEANMPI_KVS_SLOTS", "4096", 1);
    size_t big = lm_node_segment_size(2);
    setenv("LEANMPI_KVS_SLOTS", "64", 1);
    size_t small = lm_node_segment_size(2);
    unsetenv("LEANMPI_KVS_SLOTS");
    CHECK(big > small);
    CHECK(big - small >= lm_kvs_size(4096) - lm_kvs_size(64) - 4096);
}

/* A TABLE layout (a rankfile's placement): every rank's node and local
 * rank, each node's ranks back by local rank, the same through a second
 * mapping of the segment at another address; placements that contradict
 * the node's count or name a node out of range are refused. */
static void test_table_layout(void)
{
    const int32_t place[7] = {1, 0, 2, 0, 1, 2, 0};
    lm_layout l = {.world_size = 7,
                   .reported_world_size = 7,
                   .universe_size = 7,
                   .node_count = 3,
                   .node_id = 0,
                   .local_size = 3,
                   .kind = LM_LAYOUT_TABLE};
    lm_node_segment *seg, *again;
    int fd = lm_node_segment_create_placed("table", &l, place, &seg);
    CHECK(fd >= 0);
    CHECK(lm_node_segment_attach(fd, &again) == 0 && again != seg);
    const lm_layout *views[2] = {&seg->layout, &again->layout};
    for (int v = 0; v < 2; v++) {
        int seen[3] = {0, 0, 0};
        for (int r = 0; r < 7; r++) {
            int node = lm_layout_node_of(views[v], r), local = lm_layout_local_rank_of(views[v], r);
            CHECK(node == place[r] && local == seen[node]++);
            CHECK(lm_layout_world_rank_of(views[v], node, local) == r);
        }
        CHECK(lm_layout_world_rank_of(views[v], 0, 3) == -1 && lm_layout_world_rank_of(views[v], 2, -1) == -1);
    }
    CHECK(lm_node_segment_rank(seg, 0)->world_rank == 1 && lm_node_segment_rank(seg, 2)->world_rank == 6);
    lm_node_segment_detach(again);
    lm_node_segment_detach(seg);
    close(fd);
    l.local_size = 2; /* node 0 holds 3 */
    CHECK(lm_node_segment_create_placed("table", &l, place, &seg) < 0 && errno == EINVAL);
    l.local_size = 3;
    const int32_t out_of_range[7] = {1, 0, 3, 0, 1, 2, 0};
    CHECK(lm_node_segment_create_placed("table", &l, out_of_range, &seg) < 0 && errno == EINVAL);
    CHECK(lm_node_segment_create_placed("table", &l, NULL, &seg) < 0 && errno == EINVAL);
    int counts[4];
    CHECK(lm_placement_counts(place, 7, 3, counts) == 0 && counts[0] == 3 && counts[1] == 2 && counts[2] == 2);
    CHECK(lm_placement_counts(place, 7, 4, counts) != 0); /* node 3 holds none */
}

int main(void)
{
    lm_node_segment_set_transport_area(lm_shm_area_size, lm_shm_area_format);
    test_create_attach();
    test_bad_layout();
    test_private();
    test_layout();
    test_vector_layout();
    test_table_layout();
    test_slots_env();
    printf("test_node_segment: ok\n");
    return 0;
}
