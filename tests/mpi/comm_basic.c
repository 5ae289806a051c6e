/* Communicator duplication, splitting, comparison, naming, freeing, and
 * isolation of traffic between communicators that share a group. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD), res = -1;
    MPI_Comm dup, split, rev, none, self_none;

    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_EQ(mt_rank(dup), rank);
    CHECK_EQ(mt_size(dup), size);
    CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    CHECK_EQ(res, MPI_IDENT);
    CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK_EQ(res, MPI_CONGRUENT);
    CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res));
    CHECK_EQ(res, size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL);
    mt_pass("comm_basic: Comm_dup, Comm_compare IDENT/CONGRUENT/UNEQUAL");

    /* Split by parity, keys reversed: ranks in each half come out reversed. */
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split));
    int half = (size + 1 - rank % 2) / 2; /* ranks with my parity */
    CHECK_EQ(mt_size(split), half);
    CHECK_EQ(mt_rank(split), half - 1 - rank / 2);
    /* One color, reversed keys: same group, other order. */
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &rev));
    CHECK_EQ(mt_rank(rev), size - 1 - rank);
    CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, rev, &res));
    CHECK_EQ(res, size == 1 ? MPI_CONGRUENT : MPI_SIMILAR);
    /* Groups agree with the ranks. */
    MPI_Group gw, gs;
    int wr = -1, sr = mt_rank(split);
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    CHECK_MPI(MPI_Comm_group(split, &gs));
    CHECK_MPI(MPI_Group_translate_ranks(gs, 1, &sr, gw, &wr));
    CHECK_EQ(wr, rank);
    CHECK_MPI(MPI_Group_free(&gs));
    CHECK_MPI(MPI_Group_free(&gw));
    /* MPI_UNDEFINED color gives MPI_COMM_NULL (every third rank; and on COMM_SELF). */
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 3 == 2 ? MPI_UNDEFINED : 1, rank, &none));
    if (rank % 3 == 2) {
        CHECK(none == MPI_COMM_NULL, "color MPI_UNDEFINED must give MPI_COMM_NULL");
    } else {
        CHECK(none != MPI_COMM_NULL, "defined color gave MPI_COMM_NULL");
        CHECK_EQ(mt_size(none), size - size / 3);
        CHECK_MPI(MPI_Comm_free(&none));
    }
    CHECK_MPI(MPI_Comm_split(MPI_COMM_SELF, MPI_UNDEFINED, 0, &self_none));
    CHECK(self_none == MPI_COMM_NULL, "split of COMM_SELF with MPI_UNDEFINED must give MPI_COMM_NULL");
    mt_pass("comm_basic: Comm_split parity/reversed keys/MPI_UNDEFINED, SIMILAR");

    /* Isolation: the same tag and peers on WORLD, dup, split-same-group and rev;
     * sent in one order, received in the opposite one. */
    {
        MPI_Comm same;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 7, rank, &same));
        MPI_Comm comms[4] = {MPI_COMM_WORLD, dup, same, rev};
        int out[4], in[4], right, left;
        MPI_Request sreq[4];
        for (int c = 0; c < 4; c++) {
            int r = mt_rank(comms[c]), s = mt_size(comms[c]);
            right = (r + 1) % s;
            out[c] = 1000 * c + rank;
            CHECK_MPI(MPI_Isend(&out[c], 1, MPI_INT, right, 5, comms[c], &sreq[c]));
        }
        for (int c = 3; c >= 0; c--) {
            MPI_Status st;
            int r = mt_rank(comms[c]), s = mt_size(comms[c]);
            left = (r + s - 1) % s;
            /* ANY_SOURCE/ANY_TAG must not catch the other communicators' messages. */
            CHECK_MPI(MPI_Recv(&in[c], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c], &st));
            CHECK_EQ(st.MPI_SOURCE, left);
            CHECK_EQ(st.MPI_TAG, 5);
            int wleft = c == 3 ? (rank + 1) % size : (rank + size - 1) % size;
            CHECK(in[c] == 1000 * c + wleft, "communicator %d received %d, expected %d", c, in[c], 1000 * c + wleft);
        }
        CHECK_MPI(MPI_Waitall(4, sreq, MPI_STATUSES_IGNORE));
        CHECK_MPI(MPI_Comm_free(&same));
    }
    mt_pass("comm_basic: context isolation between WORLD, dup and split communicators");

    /* Names. */
    char name[MPI_MAX_OBJECT_NAME + 1];
    int len = -1;
    CHECK_MPI(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "COMM_WORLD name '%s' (%d)", name, len);
    CHECK_MPI(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(strcmp(name, "MPI_COMM_SELF") == 0 && len == 13, "COMM_SELF name '%s' (%d)", name, len);
    CHECK_MPI(MPI_Comm_set_name(dup, "lean dup"));
    CHECK_MPI(MPI_Comm_get_name(dup, name, &len));
    CHECK(strcmp(name, "lean dup") == 0 && len == 8, "dup name '%s' (%d)", name, len);
    CHECK_MPI(MPI_Comm_set_name(dup, "renamed"));
    CHECK_MPI(MPI_Comm_get_name(dup, name, &len));
    CHECK(strcmp(name, "renamed") == 0 && len == 7, "dup name '%s' (%d)", name, len);
    CHECK_MPI(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "naming a dup renamed COMM_WORLD to '%s'", name);
    mt_pass("comm_basic: Comm_set_name/Comm_get_name");

    /* A dup of a dup, then free everything; freed handles become MPI_COMM_NULL. */
    MPI_Comm dd;
    CHECK_MPI(MPI_Comm_dup(dup, &dd));
    CHECK_MPI(MPI_Comm_compare(dup, dd, &res));
    CHECK_EQ(res, MPI_CONGRUENT);
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL, "Comm_free sets MPI_COMM_NULL");
    int x = rank, y = -1;
    CHECK_MPI(MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % size, 9, &y, 1, MPI_INT, (rank + size - 1) % size, 9, dd,
                           MPI_STATUS_IGNORE));
    CHECK_EQ(y, (rank + size - 1) % size);
    CHECK_MPI(MPI_Comm_free(&dd));
    CHECK_MPI(MPI_Comm_free(&split));
    CHECK_MPI(MPI_Comm_free(&rev));
    CHECK(split == MPI_COMM_NULL && rev == MPI_COMM_NULL, "Comm_free sets MPI_COMM_NULL");
    /* Many dup/free cycles do not exhaust context ids. */
    for (int i = 0; i < 300; i++) {
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dd));
        CHECK_MPI(MPI_Comm_free(&dd));
    }
    mt_pass("comm_basic: Comm_free, dup of dup, 300 dup/free cycles");
    MPI_Finalize();
    return 0;
}
