/* Alltoallv, alltoallw, gatherv and scatterv whose blocks differ a lot
 * from pair to pair:
 * most small or empty, a few large, and the counts from i to j unrelated
 * to those from j to i. Across hosts (the "hier" schedule of
 * src/coll/sched_hier_v.c) small blocks between two hosts then go through
 * the hosts' first ranks and large ones rank to rank, both within one
 * pair of hosts and one direction; every block is checked value by value,
 * the gaps between blocks against a guard. In place (symmetric counts),
 * through MPI_Alltoallw with byte displacements, on a communicator of
 * every other rank, nonblocking and persistent (started twice); gatherv
 * and scatterv with roots on the first, the last and a middle rank.
 *
 * argv[1] "hier": the job is in node blocks across hosts, so the blocking
 * calls on MPI_COMM_WORLD must have run "hier", whatever their form
 * (coll_algorithm pvar); without it the algorithm is not checked. */
#include "mpitest.h"
#include <string.h>

#define GUARD (-5555555)
#define ROUNDS 6

static int want_hier;

/* Ints from src to dst in round k: mostly 0-12, about one pair in six
 * large (6,000 ints, above the 4 KiB a block on average that go through
 * the leaders), depending on the direction. */
static int count_of(int src, int dst, int k)
{
    unsigned h = (unsigned)(src * 7919 + dst * 104729 + k * 15485863);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    if (h % 6 == 0 && k % 3 != 2) return 6000 + src;
    return (int)(h % 13);
}

static int val(int src, int dst, int k, int i) { return src * 1000003 + dst * 1009 + k * 31 + i; }

static const char *ran(MPI_Comm c)
{
    static char name[128];
    int idx, value, count, x, len = sizeof name;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    MPI_T_enum et;
    MPI_Datatype dt;
    int verb, cls, bind, ro, cont, atomic, nlen = sizeof name, dlen = 0;
    CHECK_MPI(MPI_T_pvar_get_index("coll_algorithm", MPI_T_PVAR_CLASS_STATE, &idx));
    CHECK_MPI(MPI_T_pvar_get_info(idx, name, &nlen, &verb, &cls, &dt, &et, NULL, &dlen, &bind, &ro, &cont, &atomic));
    CHECK_MPI(MPI_T_pvar_session_create(&s));
    CHECK_MPI(MPI_T_pvar_handle_alloc(s, idx, &c, &h, &count));
    CHECK_MPI(MPI_T_pvar_read(s, h, &value));
    CHECK_MPI(MPI_T_enum_get_item(et, value + 1, &x, name, &len));
    CHECK_MPI(MPI_T_pvar_handle_free(s, &h));
    CHECK_MPI(MPI_T_pvar_session_free(&s));
    return name;
}

enum { BLOCKING, NONBLOCKING, PERSISTENT };

/* One alltoallv (w: as alltoallw; in_place: counts made symmetric; form:
 * as it says) on c in round k, checked. */
static void one(MPI_Comm c, int k, int w, int in_place, int form)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
    int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)n);
    CHECK(sc && sd && rc && rd && ty, "out of memory");
    /* blocks laid out in reverse rank order with a one-int gap after each */
    long sat = 0, rat = 0;
    for (int j = n - 1; j >= 0; j--) {
        sc[j] = in_place ? count_of(me, j, k) + count_of(j, me, k) : count_of(me, j, k);
        rc[j] = in_place ? count_of(j, me, k) + count_of(me, j, k) : count_of(j, me, k);
        sd[j] = (int)sat;
        rd[j] = (int)rat;
        sat += sc[j] + 1;
        rat += rc[j] + 1;
        ty[j] = MPI_INT;
    }
    int *s = malloc(sizeof(int) * (size_t)(sat + 1)), *r = malloc(sizeof(int) * (size_t)(rat + 1));
    CHECK(s && r, "out of memory");
    for (long i = 0; i < rat; i++) r[i] = GUARD;
    for (int j = 0; j < n; j++) {
        int *blk = in_place ? r + rd[j] : s + sd[j];
        for (int i = 0; i < sc[j]; i++) blk[i] = val(me, j, k, i);
    }
    const void *sb = in_place ? MPI_IN_PLACE : s;
    if (w) {
        int *sdb = malloc(sizeof(int) * (size_t)n), *rdb = malloc(sizeof(int) * (size_t)n);
        CHECK(sdb && rdb, "out of memory");
        for (int j = 0; j < n; j++) {
            sdb[j] = sd[j] * (int)sizeof(int);
            rdb[j] = rd[j] * (int)sizeof(int);
        }
        CHECK_MPI(MPI_Alltoallw(sb, sc, sdb, ty, r, rc, rdb, ty, c));
        free(sdb);
        free(rdb);
    } else if (form == NONBLOCKING) {
        MPI_Request q;
        CHECK_MPI(MPI_Ialltoallv(sb, sc, sd, MPI_INT, r, rc, rd, MPI_INT, c, &q));
        CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else if (form == PERSISTENT) {
        MPI_Request q;
        CHECK_MPI(MPI_Alltoallv_init(sb, sc, sd, MPI_INT, r, rc, rd, MPI_INT, c, MPI_INFO_NULL, &q));
        for (int twice = 0; twice < 2; twice++) {
            CHECK_MPI(MPI_Start(&q));
            CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        }
        CHECK_MPI(MPI_Request_free(&q));
    } else {
        CHECK_MPI(MPI_Alltoallv(sb, sc, sd, MPI_INT, r, rc, rd, MPI_INT, c));
    }
    if (want_hier && c == MPI_COMM_WORLD) {
        const char *alg = ran(c), *expect = w ? "alltoallw:hier" : "alltoallv:hier";
        CHECK(strcmp(alg, expect) == 0, "round %d (form %d) ran %s, expected %s", k, form, alg, expect);
    }
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < rc[j]; i++)
            if (r[rd[j] + i] != val(j, me, k, i)) {
                CHECK(0, "round %d%s%s: block from %d, int %d of %d: %d, expected %d", k, w ? " (w)" : "",
                      in_place ? " (in place)" : "", j, i, rc[j], r[rd[j] + i], val(j, me, k, i));
                break;
            }
        CHECK(r[rd[j] + rc[j]] == GUARD, "round %d: the gap after the block from %d was written", k, j);
    }
    free(s);
    free(r);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(ty);
}

/* One gatherv (gather) or scatterv on c with root `root` in round k, its
 * blocks sized as count_of(rank, root, k) says, laid out in reverse rank
 * order with a gap after each at the root; checked. */
static void rooted(MPI_Comm c, int k, int root, int gather, int form)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    int *cnt = malloc(sizeof(int) * (size_t)n), *dsp = malloc(sizeof(int) * (size_t)n);
    CHECK(cnt && dsp, "out of memory");
    long at = 0;
    for (int j = n - 1; j >= 0; j--) {
        cnt[j] = count_of(j, root, k);
        dsp[j] = (int)at;
        at += cnt[j] + 1;
    }
    int *all = malloc(sizeof(int) * (size_t)(at + 1)), *mine = malloc(sizeof(int) * (size_t)(cnt[me] + 1));
    CHECK(all && mine, "out of memory");
    for (long i = 0; i < at; i++) all[i] = GUARD;
    for (int i = 0; i < cnt[me]; i++) mine[i] = gather ? val(me, root, k, i) : GUARD;
    if (!gather && me == root)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < cnt[j]; i++) all[dsp[j] + i] = val(root, j, k, i);
    MPI_Request q = MPI_REQUEST_NULL;
    if (gather && form == NONBLOCKING)
        CHECK_MPI(MPI_Igatherv(mine, cnt[me], MPI_INT, all, cnt, dsp, MPI_INT, root, c, &q));
    else if (gather) CHECK_MPI(MPI_Gatherv(mine, cnt[me], MPI_INT, all, cnt, dsp, MPI_INT, root, c));
    else if (form == NONBLOCKING) CHECK_MPI(MPI_Iscatterv(all, cnt, dsp, MPI_INT, mine, cnt[me], MPI_INT, root, c, &q));
    else CHECK_MPI(MPI_Scatterv(all, cnt, dsp, MPI_INT, mine, cnt[me], MPI_INT, root, c));
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    if (want_hier && c == MPI_COMM_WORLD) {
        const char *alg = ran(c), *expect = gather ? "gatherv:hier" : "scatterv:hier";
        CHECK(strcmp(alg, expect) == 0, "round %d ran %s, expected %s", k, alg, expect);
    }
    if (gather && me == root) {
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < cnt[j]; i++)
                if (all[dsp[j] + i] != val(j, root, k, i)) {
                    CHECK(0, "gatherv round %d: block of %d, int %d of %d: %d", k, j, i, cnt[j], all[dsp[j] + i]);
                    break;
                }
            CHECK(all[dsp[j] + cnt[j]] == GUARD, "gatherv round %d: the gap after %d's block was written", k, j);
        }
    } else if (!gather) {
        for (int i = 0; i < cnt[me]; i++)
            if (mine[i] != val(root, me, k, i)) {
                CHECK(0, "scatterv round %d: int %d of %d: %d", k, i, cnt[me], mine[i]);
                break;
            }
    }
    free(all);
    free(mine);
    free(cnt);
    free(dsp);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    want_hier = argc >= 2 && !strcmp(argv[1], "hier");
    int provided;
    if (want_hier) CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm half;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    for (int k = 0; k < ROUNDS; k++) {
        one(MPI_COMM_WORLD, k, 0, 0, BLOCKING);
        one(MPI_COMM_WORLD, k, 0, 1, BLOCKING);
        one(MPI_COMM_WORLD, k, 1, 0, BLOCKING);
        one(MPI_COMM_WORLD, k, 0, k % 2, NONBLOCKING);
        one(MPI_COMM_WORLD, k, 0, 0, PERSISTENT);
        one(half, k, 0, k % 2 && k % 3 != PERSISTENT, k % 3);
        /* roots on the first host, the last, and inside one */
        for (int gather = 0; gather < 2; gather++) {
            rooted(MPI_COMM_WORLD, k, k % 3 == 0 ? 0 : k % 3 == 1 ? size - 1 : size / 2, gather, k % 2);
            rooted(half, k, 0, gather, BLOCKING);
        }
    }
    CHECK_MPI(MPI_Comm_free(&half));
    char msg[160];
    snprintf(msg, sizeof msg, "coll_alltoallv_nodes: %d rounds of alltoallv/w with uneven pairs on %d ranks (%s)",
             ROUNDS, size, want_hier ? "hier checked" : "any algorithm");
    mt_pass(msg);
    if (want_hier) CHECK_MPI(MPI_T_finalize());
    MPI_Finalize();
    return 0;
}
