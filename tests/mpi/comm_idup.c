/* MPI_Comm_idup is nonblocking: the agreement on the new communicator
 * moves on while its caller does other things, including waiting in
 * MPI_Recv for a message that the peer sends only after its own
 * MPI_Comm_idup has returned. Several idups on one or more communicators
 * may be in flight at once and completed in any order; idup mixes with
 * blocking constructors (MPI_Comm_create_group, MPI_Comm_dup) started while
 * it is pending; what the new communicators copy (attributes, topology,
 * hints) is there, and each one is a communicator of its own. All of it
 * holds for intercommunicators as well. */
#include "mpitest.h"

#define NDUP 12

static int rank, size;

/* Traffic that only works if every communicator in c[0..n) is distinct:
 * the same tag on each, received in the opposite order. */
static void distinct(MPI_Comm *c, int n)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request r[2 * NDUP];
    int got[NDUP];
    for (int i = 0; i < n; i++) MPI_Irecv(&got[i], 1, MPI_INT, left, 5, c[n - 1 - i], &r[i]);
    for (int i = 0; i < n; i++) {
        int v = 1000 * rank + i;
        MPI_Isend(&v, 1, MPI_INT, right, 5, c[i], &r[n + i]);
        MPI_Wait(&r[n + i], MPI_STATUS_IGNORE);
    }
    CHECK_MPI(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++) CHECK_EQ(got[n - 1 - i], 1000 * left + i);
}

static void sum_check(MPI_Comm c)
{
    int one = 1, total = 0, n;
    MPI_Comm_size(c, &n);
    CHECK_MPI(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, c));
    CHECK_EQ(total, n);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* 1. the case that hung: even ranks idup then send, odd ranks receive
     * first and idup after */
    {
        MPI_Comm dup;
        MPI_Request req;
        int partner = rank ^ 1, v = rank, got = -1;
        if (partner >= size) partner = MPI_PROC_NULL;
        if (rank % 2 == 0) {
            CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
            CHECK_MPI(MPI_Send(&v, 1, MPI_INT, partner, 1, MPI_COMM_WORLD));
        } else {
            CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_EQ(got, partner);
            CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
        }
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        sum_check(dup);
        distinct(&dup, 1);
        CHECK_MPI(MPI_Comm_free(&dup));
    }

    /* 2. many in flight on one communicator and on several, completed in
     * reverse order, through Waitany, and through Test */
    {
        MPI_Comm base[3], dup[NDUP];
        MPI_Request req[NDUP];
        for (int i = 0; i < 3; i++) CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &base[i]));
        for (int i = 0; i < NDUP; i++) CHECK_MPI(MPI_Comm_idup(base[i % 3], &dup[i], &req[i]));
        for (int i = NDUP - 1; i >= NDUP / 2; i--) CHECK_MPI(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
        for (int k = 0; k < NDUP / 4; k++) {
            int idx;
            CHECK_MPI(MPI_Waitany(NDUP / 2, req, &idx, MPI_STATUS_IGNORE));
            CHECK(idx != MPI_UNDEFINED, "Waitany found nothing");
        }
        for (int i = 0; i < NDUP / 2; i++) {
            int flag = 0;
            while (!flag) CHECK_MPI(MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE));
        }
        distinct(dup, NDUP);
        for (int i = 0; i < NDUP; i++) {
            sum_check(dup[i]);
            CHECK_MPI(MPI_Comm_free(&dup[i]));
        }
        for (int i = 0; i < 3; i++) CHECK_MPI(MPI_Comm_free(&base[i]));
    }

    /* 3. blocking constructors while an idup is pending: MPI_Comm_create_group
     * over half of the ranks (each half in its own order) and MPI_Comm_dup */
    {
        MPI_Group world, half;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        int n = 0, members[64];
        for (int r = rank % 2; r < size; r += 2) members[n++] = r;
        MPI_Group_incl(world, n, members, &half);
        MPI_Comm dup, sub, dup2;
        MPI_Request req;
        if (rank % 2 == 0) {
            CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
            CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, half, 7, &sub));
        } else {
            CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, half, 7, &sub));
            CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
        }
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup2));
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        sum_check(sub);
        MPI_Comm all[2] = {dup, dup2};
        distinct(all, 2);
        CHECK_MPI(MPI_Comm_free(&sub));
        CHECK_MPI(MPI_Comm_free(&dup));
        CHECK_MPI(MPI_Comm_free(&dup2));
        MPI_Group_free(&half);
        MPI_Group_free(&world);
    }

    /* 4. what a duplicate copies: attributes (at the call), topology, hints */
    {
        int kv, val = 42, *got, flag = 0;
        CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv, NULL));
        MPI_Comm cart, dup;
        int dims[1] = {size}, periods[1] = {1};
        CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
        CHECK_MPI(MPI_Comm_set_attr(cart, kv, &val));
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
        MPI_Request req;
        CHECK_MPI(MPI_Comm_idup_with_info(cart, info, &dup, &req));
        MPI_Info_free(&info);
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Comm_get_attr(dup, kv, &got, &flag));
        CHECK(flag && got == &val, "the attribute was not copied");
        int topo;
        CHECK_MPI(MPI_Topo_test(dup, &topo));
        CHECK_EQ(topo, MPI_CART);
        MPI_Info used;
        char v[32];
        CHECK_MPI(MPI_Comm_get_info(dup, &used));
        CHECK_MPI(MPI_Info_get(used, "mpi_assert_no_any_tag", 31, v, &flag));
        CHECK(flag && !strcmp(v, "true"), "the hint was not kept");
        MPI_Info_free(&used);
        sum_check(dup);
        CHECK_MPI(MPI_Comm_free(&dup));
        CHECK_MPI(MPI_Comm_free(&cart));
        CHECK_MPI(MPI_Comm_free_keyval(&kv));
    }

    /* 5. an intercommunicator's idup */
    if (size > 1) {
        MPI_Comm half, inter, dup;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &inter));
        MPI_Request req;
        CHECK_MPI(MPI_Comm_idup(inter, &dup, &req));
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        int rs;
        CHECK_MPI(MPI_Comm_remote_size(dup, &rs));
        CHECK_EQ(rs, rank % 2 ? (size + 1) / 2 : size / 2);
        CHECK_MPI(MPI_Comm_free(&dup));
        CHECK_MPI(MPI_Comm_free(&inter));
        CHECK_MPI(MPI_Comm_free(&half));
    }

    /* 6. an intercommunicator's idup is nonblocking too: the first side
     * idups and then sends to the other side, which receives first and
     * idups after; several in flight, a blocking MPI_Comm_dup while they
     * are pending, completed in reverse order, each one distinct */
    if (size > 1) {
        MPI_Comm half, inter, dup[NDUP + 1];
        MPI_Request req[NDUP];
        int side = rank % 2, lrank;
        MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half);
        MPI_Comm_rank(half, &lrank);
        CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, side ? 0 : 1, 11, &inter));
        int rsize, v = rank, got = -1;
        MPI_Comm_remote_size(inter, &rsize);
        int partner = lrank < rsize ? lrank : MPI_PROC_NULL;
        if (side == 0) {
            CHECK_MPI(MPI_Comm_idup(inter, &dup[0], &req[0]));
            CHECK_MPI(MPI_Send(&v, 1, MPI_INT, partner, 1, inter));
        } else {
            CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, partner, 1, inter, MPI_STATUS_IGNORE));
            if (partner != MPI_PROC_NULL) CHECK_EQ(got, 2 * partner);
            CHECK_MPI(MPI_Comm_idup(inter, &dup[0], &req[0]));
        }
        for (int i = 1; i < NDUP; i++) CHECK_MPI(MPI_Comm_idup(inter, &dup[i], &req[i]));
        CHECK_MPI(MPI_Comm_dup(inter, &dup[NDUP]));
        for (int i = NDUP - 1; i >= 0; i--) CHECK_MPI(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
        /* distinct: the same tag on each, received in the opposite order */
        MPI_Request r[2 * (NDUP + 1)];
        int in[NDUP + 1], n = NDUP + 1, flag;
        for (int i = 0; i < n; i++) {
            CHECK_MPI(MPI_Comm_test_inter(dup[i], &flag));
            CHECK(flag, "an intercommunicator's duplicate is not an intercommunicator");
            MPI_Irecv(&in[i], 1, MPI_INT, partner, 5, dup[n - 1 - i], &r[i]);
        }
        for (int i = 0; i < n; i++) {
            int out = 1000 * rank + i;
            MPI_Isend(&out, 1, MPI_INT, partner, 5, dup[i], &r[n + i]);
            MPI_Wait(&r[n + i], MPI_STATUS_IGNORE);
        }
        CHECK_MPI(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
        if (partner != MPI_PROC_NULL) {
            int prank = side ? 2 * partner : 2 * partner + 1;
            for (int i = 0; i < n; i++) CHECK_EQ(in[n - 1 - i], 1000 * prank + i);
        }
        /* a collective over both groups on the last one, then a merge */
        int one = 1, total = 0;
        CHECK_MPI(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, dup[NDUP - 1]));
        CHECK_EQ(total, rsize);
        MPI_Comm merged;
        CHECK_MPI(MPI_Intercomm_merge(dup[0], side, &merged));
        sum_check(merged);
        CHECK_MPI(MPI_Comm_free(&merged));
        for (int i = 0; i < n; i++) CHECK_MPI(MPI_Comm_free(&dup[i]));
        CHECK_MPI(MPI_Comm_free(&inter));
        CHECK_MPI(MPI_Comm_free(&half));
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS comm_idup\n");
    MPI_Finalize();
    return 0;
}
