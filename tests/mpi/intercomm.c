/* Intercommunicators: MPI_Intercomm_create between the even and the odd
 * ranks (and between three groups), MPI_Intercomm_create_from_groups,
 * remote size and group, point-to-point both ways with MPI_ANY_SOURCE,
 * probe and MPI_PROC_NULL, MPI_Intercomm_merge with every high ordering,
 * dup (with attributes), compare, names, split and create on an
 * intercommunicator, the collectives with MPI_ROOT / MPI_PROC_NULL roots,
 * and the error classes of bad input. */
#include "mpitest.h"

static int wrank, wsize;

/* World rank of rank i of the side with the given parity (0 even, 1 odd). */
static int world_of(int parity, int i) { return 2 * i + parity; }
static int side_size(int parity) { return parity ? wsize / 2 : (wsize + 1) / 2; }

/* ic's remote group, translated to world ranks, must be want[0..n). */
static void check_remote(MPI_Comm ic, int n, const int *want, int line)
{
    int rs = -1, flag = -1;
    CHECK_MPI(MPI_Comm_test_inter(ic, &flag));
    if (!flag) mt_fail(__FILE__, line, "not an intercommunicator");
    CHECK_MPI(MPI_Comm_remote_size(ic, &rs));
    if (rs != n) mt_fail(__FILE__, line, "remote size %d, expected %d", rs, n);
    MPI_Group rg, wg;
    CHECK_MPI(MPI_Comm_remote_group(ic, &rg));
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int *in = malloc(sizeof(int) * (size_t)(n + 1)), *out = malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) in[i] = i;
    CHECK_MPI(MPI_Group_translate_ranks(rg, n, in, wg, out));
    for (int i = 0; i < n; i++)
        if (out[i] != want[i]) mt_fail(__FILE__, line, "remote rank %d is world %d, expected %d", i, out[i], want[i]);
    free(in);
    free(out);
    CHECK_MPI(MPI_Group_free(&rg));
    CHECK_MPI(MPI_Group_free(&wg));
}

/* Every process sends its world rank to every remote process and receives
 * from MPI_ANY_SOURCE; the status names the remote rank. rw: remote world ranks. */
static void all_pairs(MPI_Comm ic, int tag, const int *rw, int line)
{
    int rs, me = mt_rank(ic);
    CHECK_MPI(MPI_Comm_remote_size(ic, &rs));
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)rs);
    int *out = malloc(sizeof(int) * (size_t)rs * 2), *seen = calloc((size_t)rs, sizeof(int));
    for (int j = 0; j < rs; j++) {
        out[2 * j] = wrank;
        out[2 * j + 1] = j;
        CHECK_MPI(MPI_Isend(&out[2 * j], 2, MPI_INT, j, tag, ic, &req[j]));
    }
    for (int k = 0; k < rs; k++) {
        int in[2] = {-1, -1};
        MPI_Status st;
        CHECK_MPI(MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, tag, ic, &st));
        int s = st.MPI_SOURCE;
        if (s < 0 || s >= rs) mt_fail(__FILE__, line, "MPI_SOURCE %d out of range", s);
        if (seen[s]++) mt_fail(__FILE__, line, "two messages from remote rank %d", s);
        if (in[0] != rw[s] || in[1] != me)
            mt_fail(__FILE__, line, "from remote %d got (%d,%d), expected (%d,%d)", s, in[0], in[1], rw[s], me);
        CHECK_EQ(st.MPI_TAG, tag);
    }
    CHECK_MPI(MPI_Waitall(rs, req, MPI_STATUSES_IGNORE));
    free(req);
    free(out);
    free(seen);
}

static void p2p(MPI_Comm ic, int parity)
{
    int other = 1 - parity, rs = side_size(other), ls = side_size(parity), me = mt_rank(ic);
    int *rw = malloc(sizeof(int) * (size_t)rs);
    for (int i = 0; i < rs; i++) rw[i] = world_of(other, i);
    all_pairs(ic, 5, rw, __LINE__);

    /* probe: local rank i sends i+1 ints to remote rank i % rs */
    int dest = me % rs, expect = 0;
    int *buf = malloc(sizeof(int) * (size_t)(ls + rs + 2));
    for (int i = 0; i <= me; i++) buf[i] = wrank * 100 + i;
    MPI_Request r;
    CHECK_MPI(MPI_Isend(buf, me + 1, MPI_INT, dest, 11, ic, &r));
    for (int j = 0; j < rs; j++) expect += j % ls == me;
    int *in = malloc(sizeof(int) * (size_t)(ls + rs + 2));
    for (int k = 0; k < expect; k++) {
        MPI_Status st;
        int count = -1;
        CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, 11, ic, &st));
        CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
        int s = st.MPI_SOURCE;
        CHECK(s % ls == me, "probe found a message from remote %d meant for another rank", s);
        CHECK_EQ(count, s + 1);
        CHECK_MPI(MPI_Recv(in, count, MPI_INT, s, 11, ic, &st));
        for (int i = 0; i < count; i++) CHECK_EQ(in[i], rw[s] * 100 + i);
    }
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int flag = 1;
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 11, ic, &flag, MPI_STATUS_IGNORE));
    CHECK_EQ(flag, 0);

    /* MPI_PROC_NULL */
    MPI_Status st;
    CHECK_MPI(MPI_Send(buf, 1, MPI_INT, MPI_PROC_NULL, 1, ic));
    CHECK_MPI(MPI_Recv(in, 1, MPI_INT, MPI_PROC_NULL, 1, ic, &st));
    CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);

    /* sendrecv with the partner of the same local rank */
    if (me < rs) {
        int out = wrank, got = -1;
        CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, me, 12, &got, 1, MPI_INT, me, 12, ic, &st));
        CHECK_EQ(got, world_of(other, me));
        CHECK_EQ(st.MPI_SOURCE, me);

        /* a rendezvous-sized message, synchronous the other way, taken by
         * a matched probe */
        enum { BIG = 1 << 17 };
        int *big = malloc(sizeof(int) * BIG), *back = malloc(sizeof(int) * BIG);
        for (int i = 0; i < BIG; i++) big[i] = wrank ^ i;
        CHECK_MPI(MPI_Sendrecv(big, BIG, MPI_INT, me, 13, back, BIG, MPI_INT, me, 13, ic, &st));
        for (int i = 0; i < BIG; i++)
            if (back[i] != (world_of(other, me) ^ i)) CHECK_EQ(back[i], world_of(other, me) ^ i);
        if (parity == 0) {
            CHECK_MPI(MPI_Ssend(&out, 1, MPI_INT, me, 14, ic));
        } else {
            MPI_Message msg;
            int count = -1;
            CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, 14, ic, &msg, &st));
            CHECK_EQ(st.MPI_SOURCE, me);
            CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
            CHECK_EQ(count, 1);
            CHECK_MPI(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st));
            CHECK_EQ(got, world_of(other, me));
        }
        free(big);
        free(back);
    }
    free(rw);
    free(buf);
    free(in);
}

/* The merged communicator must put the low side first; world ranks in order. */
static void check_merge(MPI_Comm ic, int high, int parity, int low_parity)
{
    MPI_Comm m;
    CHECK_MPI(MPI_Intercomm_merge(ic, high, &m));
    int flag = -1;
    CHECK_MPI(MPI_Comm_test_inter(m, &flag));
    CHECK_EQ(flag, 0);
    CHECK_EQ(mt_size(m), wsize);
    int *w = malloc(sizeof(int) * (size_t)wsize);
    CHECK_MPI(MPI_Allgather(&wrank, 1, MPI_INT, w, 1, MPI_INT, m));
    if (low_parity < 0) {
        /* same high everywhere: either order, each side contiguous */
        low_parity = w[0] % 2;
    }
    int nlow = side_size(low_parity);
    for (int i = 0; i < wsize; i++) {
        int want = i < nlow ? world_of(low_parity, i) : world_of(1 - low_parity, i - nlow);
        CHECK_EQ(w[i], want);
    }
    CHECK_EQ(mt_rank(m), parity == low_parity ? wrank / 2 : nlow + wrank / 2);
    free(w);
    CHECK_MPI(MPI_Comm_free(&m));
}

static int copies;
static int count_copy(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)k, (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void dup_compare_name(MPI_Comm ic, int parity)
{
    int key, flag = 0, *val = NULL, res = -1;
    static int attr_value = 42;
    CHECK_MPI(MPI_Comm_create_keyval(count_copy, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    CHECK_MPI(MPI_Comm_set_attr(ic, key, &attr_value));
    CHECK_MPI(MPI_Comm_set_name(ic, "inter-even-odd"));
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_MPI(MPI_Comm_get_name(ic, name, &len));
    CHECK(strcmp(name, "inter-even-odd") == 0, "name '%s'", name);
    MPI_Comm d;
    copies = 0;
    CHECK_MPI(MPI_Comm_dup(ic, &d));
    CHECK_EQ(copies, 1);
    CHECK_MPI(MPI_Comm_get_attr(d, key, &val, &flag));
    CHECK(flag && val == &attr_value, "attribute not copied to the duplicate");
    CHECK_MPI(MPI_Comm_compare(ic, d, &res));
    CHECK_EQ(res, MPI_CONGRUENT);
    CHECK_MPI(MPI_Comm_compare(ic, ic, &res));
    CHECK_EQ(res, MPI_IDENT);
    CHECK_MPI(MPI_Comm_compare(ic, MPI_COMM_WORLD, &res));
    CHECK_EQ(res, MPI_UNEQUAL);
    int other = 1 - parity, rs = side_size(other);
    int *rw = malloc(sizeof(int) * (size_t)rs);
    for (int i = 0; i < rs; i++) rw[i] = world_of(other, i);
    check_remote(d, rs, rw, __LINE__);
    all_pairs(d, 6, rw, __LINE__);
    MPI_Comm d2;
    CHECK_MPI(MPI_Comm_dup_with_info(d, MPI_INFO_NULL, &d2));
    check_remote(d2, rs, rw, __LINE__);
    all_pairs(d2, 7, rw, __LINE__);
    CHECK_MPI(MPI_Comm_free(&d2));
    CHECK_MPI(MPI_Comm_free(&d));
    CHECK_MPI(MPI_Comm_delete_attr(ic, key));
    CHECK_MPI(MPI_Comm_free_keyval(&key));
    free(rw);
}

/* Split on both sides by local rank parity (rank 2 opts out), reversed order. */
static void split(MPI_Comm ic, int parity)
{
    int me = mt_rank(ic), other = 1 - parity;
    int color = me == 2 ? MPI_UNDEFINED : me % 2;
    MPI_Comm s;
    CHECK_MPI(MPI_Comm_split(ic, color, -me, &s));
    if (color == MPI_UNDEFINED) {
        CHECK(s == MPI_COMM_NULL, "MPI_UNDEFINED got a communicator");
        return;
    }
    /* members of a color on one side, by descending local rank */
    int lw[64], rw[64], nl = 0, nr = 0;
    for (int i = side_size(parity) - 1; i >= 0; i--)
        if (i != 2 && i % 2 == color) lw[nl++] = world_of(parity, i);
    for (int i = side_size(other) - 1; i >= 0; i--)
        if (i != 2 && i % 2 == color) rw[nr++] = world_of(other, i);
    if (!nr) {
        CHECK(s == MPI_COMM_NULL, "no remote partner of color %d, yet a communicator", color);
        return;
    }
    CHECK(s != MPI_COMM_NULL, "color %d has partners on both sides", color);
    CHECK_EQ(mt_size(s), nl);
    CHECK_EQ(lw[mt_rank(s)], wrank);
    check_remote(s, nr, rw, __LINE__);
    all_pairs(s, 8, rw, __LINE__);
    CHECK_MPI(MPI_Comm_free(&s));
}

/* MPI_Comm_create: each side keeps all but its last rank (all of a side of one). */
static void create(MPI_Comm ic, int parity)
{
    int other = 1 - parity, ls = side_size(parity), rs = side_size(other);
    MPI_Group lg, g;
    CHECK_MPI(MPI_Comm_group(ic, &lg));
    int ex = ls - 1;
    if (ls > 1) CHECK_MPI(MPI_Group_excl(lg, 1, &ex, &g));
    else CHECK_MPI(MPI_Group_excl(lg, 0, &ex, &g));
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_create(ic, g, &c));
    int me = mt_rank(ic);
    if (ls > 1 && me == ls - 1) {
        CHECK(c == MPI_COMM_NULL, "a rank outside the group got a communicator");
    } else {
        int nr = rs > 1 ? rs - 1 : rs, rw[64];
        for (int i = 0; i < nr; i++) rw[i] = world_of(other, i);
        CHECK(c != MPI_COMM_NULL, "a member got MPI_COMM_NULL");
        CHECK_EQ(mt_rank(c), me);
        check_remote(c, nr, rw, __LINE__);
        all_pairs(c, 9, rw, __LINE__);
        CHECK_MPI(MPI_Comm_free(&c));
    }
    CHECK_MPI(MPI_Group_free(&g));
    CHECK_MPI(MPI_Group_free(&lg));

    /* by node: the test's processes share one node, so the result pairs
     * the whole local group with the whole remote group */
    CHECK_MPI(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    CHECK(c != MPI_COMM_NULL, "MPI_COMM_TYPE_SHARED gave MPI_COMM_NULL");
    int rw[64];
    for (int i = 0; i < rs; i++) rw[i] = world_of(other, i);
    CHECK_EQ(mt_size(c), ls);
    check_remote(c, rs, rw, __LINE__);
    all_pairs(c, 10, rw, __LINE__);
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK_MPI(MPI_Comm_split_type(ic, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
}

static void collectives(MPI_Comm ic, int parity)
{
    int other = 1 - parity, ls = side_size(parity), rs = side_size(other), me = mt_rank(ic);
    CHECK_MPI(MPI_Barrier(ic));

    /* bcast from even local rank 0, then from the odd side's last rank */
    for (int round = 0; round < 2; round++) {
        int root_side = round, root_rank = side_size(root_side) - 1;
        if (round == 0) root_rank = 0;
        int v[3] = {-1, -1, -1}, root;
        if (parity == root_side) {
            root = me == root_rank ? MPI_ROOT : MPI_PROC_NULL;
            if (root == MPI_ROOT) v[0] = 7, v[1] = round, v[2] = wrank;
        } else {
            root = root_rank;
        }
        CHECK_MPI(MPI_Bcast(v, 3, MPI_INT, root, ic));
        if (parity != root_side) {
            CHECK_EQ(v[0], 7);
            CHECK_EQ(v[1], round);
            CHECK_EQ(v[2], world_of(root_side, root_rank));
        } else if (root == MPI_PROC_NULL) {
            CHECK_EQ(v[0], -1); /* untouched */
        }
    }

    /* allreduce: each side gets the remote side's sums */
    long in[2] = {wrank, (long)wrank * wrank}, out[2] = {-1, -1}, want[2] = {0, 0};
    for (int i = 0; i < rs; i++)
        want[0] += world_of(other, i), want[1] += (long)world_of(other, i) * world_of(other, i);
    CHECK_MPI(MPI_Allreduce(in, out, 2, MPI_LONG, MPI_SUM, ic));
    CHECK_EQ(out[0], want[0]);
    CHECK_EQ(out[1], want[1]);
    int mx = -1;
    CHECK_MPI(MPI_Allreduce(&wrank, &mx, 1, MPI_INT, MPI_MAX, ic));
    CHECK_EQ(mx, world_of(other, rs - 1));

    /* reduce to the odd side's rank 0 */
    long red[2] = {-1, -1};
    int root = parity == 1 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    CHECK_MPI(MPI_Reduce(in, red, 2, MPI_LONG, MPI_SUM, root, ic));
    if (root == MPI_ROOT) {
        CHECK_EQ(red[0], want[0]);
        CHECK_EQ(red[1], want[1]);
    }

    /* allgather: even ranks send one int, odd ranks two */
    int sc = parity ? 2 : 1, rc = parity ? 1 : 2;
    int sb[2] = {wrank, -wrank}, *rb = malloc(sizeof(int) * (size_t)(2 * rs + 1));
    CHECK_MPI(MPI_Allgather(sb, sc, MPI_INT, rb, rc, MPI_INT, ic));
    for (int i = 0; i < rs; i++) {
        CHECK_EQ(rb[i * rc], world_of(other, i));
        if (rc == 2) CHECK_EQ(rb[i * rc + 1], -world_of(other, i));
    }

    /* gather to the odd side's rank 0, scatter from the even side's last rank */
    int *g = malloc(sizeof(int) * (size_t)(ls + rs + 1));
    root = parity == 1 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int x = wrank * 3;
    CHECK_MPI(MPI_Gather(&x, 1, MPI_INT, g, 1, MPI_INT, root, ic));
    if (root == MPI_ROOT)
        for (int i = 0; i < rs; i++) CHECK_EQ(g[i], world_of(other, i) * 3);
    int sroot_rank = side_size(0) - 1;
    root = parity == 0 ? (me == sroot_rank ? MPI_ROOT : MPI_PROC_NULL) : sroot_rank;
    if (root == MPI_ROOT)
        for (int i = 0; i < rs; i++) g[i] = 1000 + i;
    int y = -1;
    CHECK_MPI(MPI_Scatter(g, 1, MPI_INT, &y, 1, MPI_INT, root, ic));
    if (parity == 1) CHECK_EQ(y, 1000 + me);
    else CHECK_EQ(y, -1);

    /* alltoall: block j of my send buffer goes to remote rank j */
    int *a = malloc(sizeof(int) * (size_t)rs), *b = malloc(sizeof(int) * (size_t)rs);
    for (int j = 0; j < rs; j++) a[j] = wrank * 100 + j;
    CHECK_MPI(MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, ic));
    for (int i = 0; i < rs; i++) CHECK_EQ(b[i], world_of(other, i) * 100 + me);
    free(a);
    free(b);
    free(g);
    free(rb);
    CHECK_MPI(MPI_Barrier(ic));
}

static void errors_on_inter(MPI_Comm ic)
{
    CHECK_MPI(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    int dims[1] = {1}, periods[1] = {0};
    MPI_Comm c;
    CHECK_ERRCLASS(MPI_Cart_create(ic, 1, dims, periods, 0, &c), MPI_ERR_COMM);
    int index[1] = {0}, edges[1] = {0};
    CHECK_ERRCLASS(MPI_Graph_create(ic, 1, index, edges, 0, &c), MPI_ERR_COMM);
#ifdef LEANMPI
    /* other implementations map without looking at the kind of communicator */
    int newrank;
    CHECK_ERRCLASS(MPI_Cart_map(ic, 1, dims, periods, &newrank), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Graph_map(ic, 1, index, edges, &newrank), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_create_group(ic, MPI_GROUP_EMPTY, 0, &c), MPI_ERR_COMM);
#endif
}

/* Three groups by world rank mod 3, each pair joined by an intercommunicator. */
static void three_groups(void)
{
    int color = wrank % 3;
    MPI_Comm local, ic[3];
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &local));
    for (int o = 0; o < 3; o++) {
        if (o == color) continue;
        /* the leader of group o is world rank o; the pair's tag is fixed */
        int tag = 100 + (color < o ? color * 3 + o : o * 3 + color);
        CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, o, tag, &ic[o]));
        int n = 0, rw[64];
        for (int w = o; w < wsize; w += 3) rw[n++] = w;
        check_remote(ic[o], n, rw, __LINE__);
        all_pairs(ic[o], tag, rw, __LINE__);
    }
    for (int o = 0; o < 3; o++) {
        if (o == color) continue;
        int v = mt_rank(local) == 0 ? wrank + 500 : -1;
        int root = o < color ? 0 : (mt_rank(local) == 0 ? MPI_ROOT : MPI_PROC_NULL);
        /* lower group broadcasts to higher: both sides see the same order */
        CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, root, ic[o]));
        if (o < color) CHECK_EQ(v, o + 500);
        CHECK_MPI(MPI_Comm_free(&ic[o]));
    }
    CHECK_MPI(MPI_Comm_free(&local));
}

#if MPI_VERSION >= 4 /* MPI-4.0 (Open MPI 4.1 lacks it) */
static void from_groups(int parity)
{
    MPI_Group wg, mine, theirs;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int r0[1][3] = {{parity, wsize - 1, 2}}, r1[1][3] = {{1 - parity, wsize - 1, 2}};
    CHECK_MPI(MPI_Group_range_incl(wg, 1, r0, &mine));
    CHECK_MPI(MPI_Group_range_incl(wg, 1, r1, &theirs));
    MPI_Comm ic;
    CHECK_MPI(MPI_Intercomm_create_from_groups(mine, 0, theirs, 0, "leanmpi-test-even-odd", MPI_INFO_NULL,
                                               MPI_ERRORS_RETURN, &ic));
    MPI_Errhandler eh;
    CHECK_MPI(MPI_Comm_get_errhandler(ic, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the error handler argument is not attached");
    CHECK_MPI(MPI_Errhandler_free(&eh));
    int other = 1 - parity, rs = side_size(other), rw[64];
    for (int i = 0; i < rs; i++) rw[i] = world_of(other, i);
    CHECK_EQ(mt_rank(ic), wrank / 2);
    check_remote(ic, rs, rw, __LINE__);
    all_pairs(ic, 30, rw, __LINE__);
    CHECK_MPI(MPI_Barrier(ic));
    CHECK_MPI(MPI_Comm_free(&ic));
    CHECK_MPI(MPI_Group_free(&mine));
    CHECK_MPI(MPI_Group_free(&theirs));
    CHECK_MPI(MPI_Group_free(&wg));
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wrank = mt_rank(MPI_COMM_WORLD);
    wsize = mt_size(MPI_COMM_WORLD);
    CHECK(wsize <= 64, "the test's tables hold 64 ranks");

    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm c = MPI_COMM_NULL;
#ifdef LEANMPI
    /* Bad input on an intracommunicator is erroneous; MPICH 4.0 does not
     * detect it (and fails an assertion on the merge), so only LeanMPI's
     * answers are checked. */
    int n = -1;
    MPI_Group g;
    CHECK_ERRCLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &c), MPI_ERR_COMM);
    /* a local leader naming itself as the remote leader: the groups overlap */
    CHECK_ERRCLASS(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, 0, 43, &c), MPI_ERR_RANK);
    if (wsize > 1) /* a remote leader that is no rank of the peer communicator */
        CHECK_ERRCLASS(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, wsize, 43, &c), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Intercomm_create(MPI_COMM_WORLD, wsize, MPI_COMM_WORLD, 0, 43, &c), MPI_ERR_RANK);
    /* groups that overlap, found by every caller before any traffic; the
     * error goes to MPI_COMM_SELF's handler (no communicator exists yet) */
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Group wg0, first;
    int zero0 = 0;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg0));
    CHECK_MPI(MPI_Group_incl(wg0, 1, &zero0, &first));
    CHECK_ERRCLASS(MPI_Intercomm_create_from_groups(wg0, 0, first, 0, "overlap", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c),
                   MPI_ERR_GROUP);
    CHECK_MPI(MPI_Group_free(&first));
    CHECK_MPI(MPI_Group_free(&wg0));
    CHECK(c == MPI_COMM_NULL, "a failed constructor set a communicator");
    mt_pass("intracommunicator errors");
#endif
    if (mt_skip_unless(2, "intercommunicators")) {
        MPI_Finalize();
        return 0;
    }

    int parity = wrank % 2, other = 1 - parity;
    MPI_Comm local, ic;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, parity, wrank, &local));
    CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, other, 42, &ic));
    CHECK_EQ(mt_size(ic), side_size(parity));
    CHECK_EQ(mt_rank(ic), wrank / 2);
    int rw[64];
    for (int i = 0; i < side_size(other); i++) rw[i] = world_of(other, i);
    check_remote(ic, side_size(other), rw, __LINE__);
    MPI_Group lg, wg;
    int zero = 0, w0 = -1;
    CHECK_MPI(MPI_Comm_group(ic, &lg));
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK_MPI(MPI_Group_translate_ranks(lg, 1, &zero, wg, &w0));
    CHECK_EQ(w0, parity);
    CHECK_MPI(MPI_Group_free(&lg));
    CHECK_MPI(MPI_Group_free(&wg));
    mt_pass("MPI_Intercomm_create");

    p2p(ic, parity);
    mt_pass("point-to-point");
    check_merge(ic, parity, parity, 0); /* evens low */
    check_merge(ic, other, parity, 1);  /* odds low */
    check_merge(ic, 0, parity, -1);     /* a tie, both low */
    check_merge(ic, 1, parity, -1);     /* a tie, both high */
    mt_pass("MPI_Intercomm_merge");
    dup_compare_name(ic, parity);
    mt_pass("dup, attributes, compare, names");
    split(ic, parity);
    create(ic, parity);
    mt_pass("split, create and split_type");
    collectives(ic, parity);
    mt_pass("collectives");
    errors_on_inter(ic);
    mt_pass("intercommunicator errors");

    CHECK_MPI(MPI_Comm_free(&ic));
    CHECK_MPI(MPI_Comm_free(&local));

#if MPI_VERSION >= 4
    from_groups(parity);
    mt_pass("MPI_Intercomm_create_from_groups");
#endif
    if (!mt_skip_unless(3, "three groups")) {
        three_groups();
        mt_pass("three groups");
    }
    MPI_Finalize();
    return 0;
}
