/* Communicators from groups: MPI_Comm_create (one group, disjoint groups,
 * the empty group), MPI_Comm_create_group (disjoint and overlapping groups
 * with one tag, non-members), MPI_Comm_split_type (shared memory,
 * MPI_UNDEFINED), MPI_Comm_dup_with_info and MPI_Comm_test_inter, with
 * traffic on every new communicator and error classes. */
#include "mpitest.h"

/* Ring exchange, allreduce of world ranks and a barrier on c, whose members
 * are the world ranks w[0..n) in order. */
static void exercise(MPI_Comm c, int n, const int *w, int line)
{
    int r = mt_rank(c), s = mt_size(c), flag = -1;
    if (s != n) mt_fail(__FILE__, line, "size %d, expected %d", s, n);
    if (w[r] != mt_rank(MPI_COMM_WORLD))
        mt_fail(__FILE__, line, "rank %d is world %d, expected world %d", r, mt_rank(MPI_COMM_WORLD), w[r]);
    CHECK_MPI(MPI_Comm_test_inter(c, &flag));
    CHECK_EQ(flag, 0);
    int right = (r + 1) % s, left = (r - 1 + s) % s, out = w[r], in = -1;
    CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, right, 3, &in, 1, MPI_INT, left, 3, c, MPI_STATUS_IGNORE));
    if (in != w[left]) mt_fail(__FILE__, line, "received %d from the left, expected %d", in, w[left]);
    int sum = -1, want = 0;
    for (int i = 0; i < n; i++) want += w[i];
    CHECK_MPI(MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, c));
    if (sum != want) mt_fail(__FILE__, line, "allreduce gave %d, expected %d", sum, want);
    CHECK_MPI(MPI_Barrier(c));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);
    int *w = malloc(sizeof(int) * (size_t)(size + 1)), n;
    MPI_Group world, par, other;
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));

    /* The even ranks, everyone passing the same group. */
    int evens = (size + 1) / 2, odds = size / 2;
    int r_even[1][3] = {{0, size - 1, 2}};
    CHECK_MPI(MPI_Group_range_incl(world, 1, r_even, &par));
    CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, par, &c));
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL, "an odd rank got a communicator");
    } else {
        for (n = 0; n < evens; n++) w[n] = 2 * n;
        exercise(c, n, w, __LINE__);
        CHECK_EQ(mt_rank(c), rank / 2);
        CHECK_MPI(MPI_Comm_free(&c));
    }
    CHECK_MPI(MPI_Group_free(&par));
    /* Each parity passing its own (disjoint) group. */
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &c)); /* a non-world parent */
    {
        MPI_Group pg, mine;
        CHECK_MPI(MPI_Comm_group(c, &pg));
        int r[1][3] = {{rank % 2, size - 1, 2}};
        if (rank % 2 == 0 || size > 1) {
            CHECK_MPI(MPI_Group_range_incl(pg, 1, r, &mine));
            MPI_Comm pc;
            CHECK_MPI(MPI_Comm_create(c, mine, &pc));
            CHECK(pc != MPI_COMM_NULL, "a member got MPI_COMM_NULL");
            for (n = 0; n < (rank % 2 ? odds : evens); n++) w[n] = 2 * n + rank % 2;
            exercise(pc, n, w, __LINE__);
            CHECK_MPI(MPI_Comm_free(&pc));
            CHECK_MPI(MPI_Group_free(&mine));
        }
        CHECK_MPI(MPI_Group_free(&pg));
        CHECK_MPI(MPI_Comm_free(&c));
    }
    /* The empty group: MPI_COMM_NULL everywhere. */
    CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "empty group gave a communicator");
    mt_pass("comm_create: Comm_create one group, disjoint groups, empty group");

    /* Comm_create_group: each parity alone (the other never joins), reversed order. */
    {
        int *ranks = malloc(sizeof(int) * (size_t)size), k = 0;
        for (int i = size - 1; i >= 0; i--)
            if (i % 2 == rank % 2) ranks[k++] = i;
        CHECK_MPI(MPI_Group_incl(world, k, ranks, &par));
        CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, par, 11, &c));
        exercise(c, k, ranks, __LINE__);
        CHECK_MPI(MPI_Comm_free(&c));
        CHECK_MPI(MPI_Group_free(&par));
        free(ranks);
    }
    /* Overlapping groups in sequence with one tag: A = first three ranks,
     * B = every rank but 0. Members of both take A first. */
    {
        int a_n = size < 3 ? size : 3;
        int ra[1][3] = {{0, a_n - 1, 1}};
        CHECK_MPI(MPI_Group_range_incl(world, 1, ra, &par));
        if (rank < a_n) {
            CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, par, 7, &c));
            for (n = 0; n < a_n; n++) w[n] = n;
            exercise(c, n, w, __LINE__);
            CHECK_MPI(MPI_Comm_free(&c));
        } else {
            /* a non-member's call is local and gives MPI_COMM_NULL */
            CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, par, 7, &c));
            CHECK(c == MPI_COMM_NULL, "a non-member got a communicator");
        }
        CHECK_MPI(MPI_Group_free(&par));
        if (size > 1) {
            int zero = 0;
            CHECK_MPI(MPI_Group_excl(world, 1, &zero, &other));
            if (rank > 0) {
                CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, other, 7, &c));
                for (n = 0; n < size - 1; n++) w[n] = n + 1;
                exercise(c, n, w, __LINE__);
                CHECK_MPI(MPI_Comm_free(&c));
            }
            CHECK_MPI(MPI_Group_free(&other));
        }
    }
    /* Many in a row on the whole world: ids are released and reused. */
    for (int i = 0; i < 50; i++) {
        CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, world, i, &c));
        CHECK_EQ(mt_rank(c), rank);
        CHECK_MPI(MPI_Comm_free(&c));
    }
    mt_pass("comm_create: Comm_create_group disjoint/overlapping/non-member/repeated");

    /* Split by shared memory: everyone here shares one node; keys reverse the order. */
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &c));
    for (n = 0; n < size; n++) w[n] = size - 1 - n;
    exercise(c, n, w, __LINE__);
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK_MPI(
        MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED split_type gave a communicator");
    } else {
        for (n = 0; n < evens; n++) w[n] = 2 * n;
        exercise(c, n, w, __LINE__);
        CHECK_MPI(MPI_Comm_free(&c));
    }
    mt_pass("comm_create: Comm_split_type SHARED and MPI_UNDEFINED");

    /* dup_with_info and test_inter. */
    {
        int res = -1, flag = -1;
        CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &c));
        CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, c, &res));
        CHECK_EQ(res, MPI_CONGRUENT);
        for (n = 0; n < size; n++) w[n] = n;
        exercise(c, n, w, __LINE__);
        CHECK_MPI(MPI_Comm_free(&c));
        CHECK_MPI(MPI_Comm_test_inter(MPI_COMM_SELF, &flag));
        CHECK_EQ(flag, 0);
    }
    mt_pass("comm_create: Comm_dup_with_info, Comm_test_inter");

    /* Error classes. */
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int rc, cls;
    rc = MPI_Comm_create(MPI_COMM_NULL, world, &c);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_COMM);
    rc = MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_GROUP);
    rc = MPI_Comm_create_group(MPI_COMM_WORLD, world, -5, &c);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_TAG);
    rc = MPI_Comm_test_inter(MPI_COMM_NULL, &cls);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_COMM);
    mt_pass("comm_create: error classes COMM/GROUP/TAG under MPI_ERRORS_RETURN");

    CHECK_MPI(MPI_Group_free(&world));
    free(w);
    MPI_Finalize();
    return 0;
}
