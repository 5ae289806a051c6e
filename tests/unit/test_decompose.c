/* The decomposition of collectives into point-to-point messages
 * (lm_coll_decompose): published and hand-derived per-pair byte matrices
 * (the hierarchical allreduce across hosts among them),
 * and for every algorithm at many sizes the property that makes a schedule
 * runnable at all: what each rank sends to a peer, in order, is exactly what
 * that peer receives from it, in order. */
#include "coll/decompose.h"
#include "coll/coll_shm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define EXPECT(cond, ...)                                        \
    do {                                                         \
        if (!(cond)) {                                           \
            failures++;                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fprintf(stderr, "\n");                               \
        }                                                        \
    } while (0)

#define MAXNP 16
#define MAXMSG 4096

typedef struct {
    size_t sent[MAXNP][MAXNP]; /* bytes row -> column */
    int nmsg;
    /* per (from, to): the sequence of sizes as sent and as received */
    size_t sseq[MAXNP][MAXNP][64], rseq[MAXNP][MAXNP][64];
    int ns[MAXNP][MAXNP], nr[MAXNP][MAXNP];
    int bad_peer;
} record;

static void on_message(int rank, int is_send, int step, int peer, size_t bytes, void *arg)
{
    record *r = arg;
    (void)step;
    if (peer < 0 || peer >= MAXNP || peer == rank) {
        r->bad_peer++;
        return;
    }
    if (is_send) {
        r->sent[rank][peer] += bytes;
        r->nmsg++;
        if (r->ns[rank][peer] < 64) r->sseq[rank][peer][r->ns[rank][peer]] = bytes;
        r->ns[rank][peer]++;
    } else {
        if (r->nr[peer][rank] < 64) r->rseq[peer][rank][r->nr[peer][rank]] = bytes;
        r->nr[peer][rank]++;
    }
}

static record *run_on(const char *coll, const char *alg, int np, size_t bytes, int root, int commutative, int ppn)
{
    static record r;
    memset(&r, 0, sizeof r);
    lm_coll_query q = {coll, alg, np, bytes, root, 4, commutative, 0, ppn};
    char err[256];
    const char *used = NULL;
    int rc = lm_coll_decompose(&q, on_message, &r, &used, err, sizeof err);
    EXPECT(rc == 0, "%s %s np %d: %s", coll, alg ? alg : "(table)", np, err);
    EXPECT(!alg || (used && !strcmp(used, alg)), "%s: ran %s instead of %s", coll, used ? used : "?", alg);
    return &r;
}

static record *run(const char *coll, const char *alg, int np, size_t bytes, int root, int commutative)
{
    return run_on(coll, alg, np, bytes, root, commutative, 0);
}

/* pair matrix: bytes sent + received between i and j */
static size_t pair(const record *r, int i, int j) { return r->sent[i][j] + r->sent[j][i]; }

static void published_bruck_vector(void)
{
    /* MPI_Alltoall by Bruck on 8 processes, 10-byte blocks: 80 at rank
     * distance 4, 40 at distances 1, 2, 6, 7, 0 at 3 and 5 */
    const size_t want[8] = {0, 40, 40, 0, 80, 0, 40, 40};
    record *r = run("alltoall", "bruck", 8, 10, 0, 1);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            EXPECT(pair(r, i, j) == want[(j - i + 8) % 8], "bruck alltoall pair (%d,%d): %zu, expected %zu", i, j,
                   pair(r, i, j), want[(j - i + 8) % 8]);
}

static void hand_derived_vectors(void)
{
    record *r;
    /* ring allgather, 5 ranks, 10 bytes: 4 blocks to the right neighbour */
    r = run("allgather", "ring", 5, 10, 0, 1);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) {
            int d = (j - i + 5) % 5;
            size_t want = (d == 1 || d == 4) ? 40 : 0;
            EXPECT(pair(r, i, j) == want, "ring allgather pair (%d,%d): %zu, expected %zu", i, j, pair(r, i, j), want);
        }
    /* recursive-doubling allgather, 8 ranks: 2^k blocks each way with i ^ 2^k */
    r = run("allgather", "recursive_doubling", 8, 10, 0, 1);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            int x = i ^ j;
            size_t want = (x == 1 || x == 2 || x == 4) ? (size_t)(2 * 10 * x) : 0;
            EXPECT(pair(r, i, j) == want, "rd allgather pair (%d,%d): %zu, expected %zu", i, j, pair(r, i, j), want);
        }
    /* binomial bcast, 8 ranks from 0: the tree 0-1 0-2 0-4 2-3 4-5 4-6 6-7 */
    r = run("bcast", "binomial", 8, 100, 0, 1);
    EXPECT(r->nmsg == 7, "binomial bcast: %d messages, expected 7", r->nmsg);
    const int edges[7][2] = {{0, 1}, {0, 2}, {0, 4}, {2, 3}, {4, 5}, {4, 6}, {6, 7}};
    for (int e = 0; e < 7; e++)
        EXPECT(r->sent[edges[e][0]][edges[e][1]] == 100, "binomial bcast: %d -> %d missing", edges[e][0], edges[e][1]);
    /* the same tree rooted at 3: every edge shifted by 3 */
    r = run("bcast", "binomial", 8, 100, 3, 1);
    for (int e = 0; e < 7; e++)
        EXPECT(r->sent[(edges[e][0] + 3) % 8][(edges[e][1] + 3) % 8] == 100, "binomial bcast root 3: edge %d missing",
               e);
    /* scatter + allgather bcast, 4 ranks, 400 bytes: pieces of 100; the
     * scatter sends 0->2 (pieces 2,3), 0->1, 2->3; the ring 3 x 100 around */
    r = run("bcast", "scatter_allgather", 4, 400, 0, 1);
    EXPECT(r->sent[0][1] == 400 && r->sent[1][2] == 300 && r->sent[2][3] == 400 && r->sent[3][0] == 300 &&
               r->sent[0][2] == 200,
           "scatter_allgather bcast: %zu %zu %zu %zu %zu", r->sent[0][1], r->sent[1][2], r->sent[2][3], r->sent[3][0],
           r->sent[0][2]);
    /* dissemination barrier, 5 ranks: empty messages at distances 1, 2, 4 */
    r = run("barrier", "dissemination", 5, 0, 0, 1);
    EXPECT(r->nmsg == 15, "dissemination barrier: %d messages, expected 15", r->nmsg);
    for (int i = 0; i < 5; i++)
        for (int d = 1; d < 5; d *= 2) EXPECT(r->ns[i][(i + d) % 5] == 1, "barrier: %d -> %d missing", i, (i + d) % 5);
    /* recursive-doubling allreduce, 8 ranks, 64 bytes: the vector each way with i ^ 2^k */
    r = run("allreduce", "recursive_doubling", 8, 64, 0, 0);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            int x = i ^ j;
            size_t want = (x == 1 || x == 2 || x == 4) ? 128 : 0;
            EXPECT(pair(r, i, j) == want, "rd allreduce pair (%d,%d): %zu, expected %zu", i, j, pair(r, i, j), want);
        }
    /* pairwise alltoall, 4 ranks: one block each way between every pair */
    r = run("alltoall", "pairwise", 4, 10, 0, 1);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            EXPECT(pair(r, i, j) == (i == j ? 0u : 20u), "pairwise alltoall pair (%d,%d): %zu", i, j, pair(r, i, j));
    /* ring reduce_scatter_block, 4 ranks, 8-byte blocks: 3 blocks to the right */
    r = run("reduce_scatter_block", "ring", 4, 8, 0, 1);
    for (int i = 0; i < 4; i++) EXPECT(r->sent[i][(i + 1) % 4] == 24 && r->nmsg == 12, "ring rsb: rank %d", i);
    /* reduce-scatter + gather, 4 ranks to root 1, 400 bytes of 4-byte
     * elements: 3 pieces of 100 around the ring, then each rank's finished
     * piece (rank r has piece r+1) to the root */
    r = run("reduce", "reduce_scatter_gather", 4, 400, 1, 1);
    for (int i = 0; i < 4; i++) {
        size_t want = 300 + ((i + 1) % 4 == 1 ? 100 : 0); /* rank 0's piece goes to its ring neighbour, the root */
        EXPECT(r->sent[i][(i + 1) % 4] == want, "rsg reduce %d -> %d: %zu, expected %zu", i, (i + 1) % 4,
               r->sent[i][(i + 1) % 4], want);
    }
    EXPECT(r->sent[2][1] == 100 && r->sent[3][1] == 100 && r->sent[1][0] == 0 && r->nmsg == 15,
           "rsg reduce gather: %zu %zu, %d messages", r->sent[2][1], r->sent[3][1], r->nmsg);
    /* node shared memory: a post read by k ranks is k messages from the
     * poster. bcast from 1 of 4, 100 bytes: 1 -> every other rank */
    r = run("bcast", "shm", 4, 100, 1, 1);
    EXPECT(r->nmsg == 3, "shm bcast: %d messages, expected 3", r->nmsg);
    for (int j = 0; j < 4; j++) EXPECT(r->sent[1][j] == (j == 1 ? 0u : 100u), "shm bcast 1 -> %d", j);
    /* allreduce on 3 ranks, 8 bytes: every rank reads every other's input */
    r = run("allreduce", "shm", 3, 8, 0, 0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            EXPECT(pair(r, i, j) == (i == j ? 0u : 16u), "shm allreduce pair (%d,%d): %zu", i, j, pair(r, i, j));
    /* alltoall on 4 ranks, 10-byte blocks: each rank reads its block of each peer's post */
    r = run("alltoall", "shm", 4, 10, 0, 1);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            EXPECT(r->sent[i][j] == (i == j ? 0u : 10u), "shm alltoall %d -> %d: %zu", i, j, r->sent[i][j]);
    /* barrier on 4 ranks: an empty message between every ordered pair */
    r = run("barrier", "shm", 4, 0, 0, 1);
    EXPECT(r->nmsg == 12, "shm barrier: %d messages, expected 12", r->nmsg);
    /* the selection for ranks of one node takes shm for small data, and
     * the point-to-point algorithm for ranks spread over nodes */
    {
        lm_coll_query q = {"allreduce", NULL, 4, 8, 0, 8, 1, 1};
        char err[256];
        const char *used = NULL;
        static record sink;
        EXPECT(lm_coll_decompose(&q, on_message, &sink, &used, err, sizeof err) == 0 && used && !strcmp(used, "shm"),
               "node-local allreduce of 8 bytes: %s, expected shm", used ? used : err);
        q.node_local = 0;
        EXPECT(lm_coll_decompose(&q, on_message, &sink, &used, err, sizeof err) == 0 && used && strcmp(used, "shm"),
               "allreduce of 8 bytes across nodes: %s", used ? used : err);
    }
    /* linear gather to root 2 of 5: one block from each other rank */
    r = run("gather", "linear", 5, 10, 2, 1);
    for (int i = 0; i < 5; i++) EXPECT(r->sent[i][2] == (i == 2 ? 0u : 10u), "linear gather from %d", i);
}

/* Hierarchical allreduce on 2 hosts of 3: across hosts only the two
 * leaders (ranks 0 and 3) exchange, once each way; within a host each rank
 * sends its input to the leader and gets the result back. */
static void hierarchical(void)
{
    record *r = run_on("allreduce", NULL, 6, 8, 0, 1, 3);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            size_t want = 0;
            if ((i == 0 && j == 3) || (i == 3 && j == 0)) want = 16;
            else if (i / 3 == j / 3 && i != j && (i % 3 == 0 || j % 3 == 0)) want = 16;
            EXPECT(pair(r, i, j) == want, "hier allreduce: %zu bytes between %d and %d, expected %zu", pair(r, i, j), i,
                   j, want);
        }
    /* the table takes it across hosts, not on one host */
    lm_coll_query q = {"barrier", NULL, 6, 0, 0, 1, 1, 0, 3};
    const char *used = NULL;
    char err[256];
    static record sink;
    EXPECT(lm_coll_decompose(&q, on_message, &sink, &used, err, sizeof err) == 0 && used && !strcmp(used, "hier"),
           "barrier across hosts: %s", used ? used : err);
    q.ranks_per_node = 0;
    q.algorithm = "hier";
    EXPECT(lm_coll_decompose(&q, on_message, &sink, NULL, err, sizeof err) == -1, "hier accepted on one host");
}

/* Node shared-memory algorithms run only where every post fits a mailbox
 * entry: scatter, alltoall and reduce_scatter_block post all np blocks. */
static int shm_runs(const char *coll, int np, size_t bytes)
{
    int all_blocks = !strcmp(coll, "scatter") || !strcmp(coll, "alltoall") || !strcmp(coll, "reduce_scatter_block");
    return np <= LM_COLL_SHM_MAX_PROCS && (all_blocks ? (size_t)np * bytes : bytes) <= LM_COLL_SHM_DATA;
}

/* Every algorithm, many sizes: sends and receives match pair by pair. */
static void schedules_match(void)
{
    const char *coll, *name, *summary;
    const size_t sizes[] = {0, 1, 10, 999, 300000};
    int checked = 0, commutative_only;
    for (int a = 0; lm_coll_algorithm_info(a, &coll, &name, &summary, &commutative_only); a++)
        for (int np = 1; np <= 9; np++)
            for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++)
                for (int commutative = 0; commutative < 2; commutative++)
                    for (int root = 0; root < np; root += (np > 1 ? np - 1 : 1)) {
                        if (!commutative && commutative_only) continue;
                        if (!strcmp(name, "hier")) { /* every block size across hosts */
                            for (int ppn = 2; ppn < np; ppn++) {
                                record *r = run_on(coll, name, np, sizes[b], root, commutative, ppn);
                                EXPECT(!r->bad_peer, "%s hier np %d ppn %d: bad peer", coll, np, ppn);
                                for (int i = 0; i < np; i++)
                                    for (int j = 0; j < np; j++)
                                        EXPECT(r->ns[i][j] == r->nr[i][j],
                                               "%s hier np %d ppn %d bytes %zu root %d: %d sends %d -> %d, %d "
                                               "receives",
                                               coll, np, ppn, sizes[b], root, r->ns[i][j], i, j, r->nr[i][j]);
                                checked++;
                            }
                            continue;
                        }
                        if (!strcmp(name, "shm") && !shm_runs(coll, np, sizes[b])) {
                            lm_coll_query q = {coll, name, np, sizes[b], root, 4, commutative, 1};
                            char err[256];
                            static record sink;
                            EXPECT(lm_coll_decompose(&q, on_message, &sink, NULL, err, sizeof err) == -1,
                                   "%s shm np %d bytes %zu: accepted where no mailbox entry holds it", coll, np,
                                   sizes[b]);
                            continue;
                        }
                        record *r = run(coll, name, np, sizes[b], root, commutative);
                        EXPECT(!r->bad_peer, "%s %s np %d: message to itself or out of range", coll, name, np);
                        for (int i = 0; i < np; i++)
                            for (int j = 0; j < np; j++) {
                                EXPECT(r->ns[i][j] == r->nr[i][j],
                                       "%s %s np %d bytes %zu root %d: %d sends %d -> %d, %d receives", coll, name, np,
                                       sizes[b], root, r->ns[i][j], i, j, r->nr[i][j]);
                                int n = r->ns[i][j] < 64 ? r->ns[i][j] : 64;
                                for (int k = 0; k < n && r->ns[i][j] == r->nr[i][j]; k++)
                                    EXPECT(r->sseq[i][j][k] == r->rseq[i][j][k],
                                           "%s %s np %d: message %d from %d to %d: %zu sent, %zu expected", coll, name,
                                           np, k, i, j, r->sseq[i][j][k], r->rseq[i][j][k]);
                            }
                        checked++;
                    }
    printf("%d schedules checked\n", checked);
}

static void bad_queries(void)
{
    lm_coll_query q = {"nosuch", NULL, 4, 10, 0, 1, 1};
    char err[256];
    record r;
    EXPECT(lm_coll_decompose(&q, on_message, &r, NULL, err, sizeof err) == -1, "unknown collective accepted");
    q.collective = "alltoall";
    q.algorithm = "nosuch";
    EXPECT(lm_coll_decompose(&q, on_message, &r, NULL, err, sizeof err) == -1, "unknown algorithm accepted");
    q.algorithm = NULL;
    q.root = 4;
    EXPECT(lm_coll_decompose(&q, on_message, &r, NULL, err, sizeof err) == -1, "root outside np accepted");
    q = (lm_coll_query){"allreduce", "ring", 4, 10, 0, 4, 0};
    EXPECT(lm_coll_decompose(&q, on_message, &r, NULL, err, sizeof err) == -1,
           "ring allreduce accepted for a non-commutative op");
}

int main(void)
{
    published_bruck_vector();
    hand_derived_vectors();
    hierarchical();
    schedules_match();
    bad_queries();
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("PASS decompose\n");
    return 0;
}
