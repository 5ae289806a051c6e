/* MPI_Comm_split_type by hardware resource: MPI_COMM_TYPE_HW_GUIDED and
 * MPI_COMM_TYPE_RESOURCE_GUIDED give MPI_COMM_NULL unless the info names
 * a resource (mpi_shared_memory: the processes sharing this node's
 * memory, as MPI_COMM_TYPE_SHARED), and MPI_COMM_TYPE_HW_UNGUIDED gives a
 * strictly smaller communicator, naming its resource in the info, or
 * MPI_COMM_NULL. */
#include "mpitest.h"
#include <string.h>

static void same_members(MPI_Comm a, MPI_Comm b)
{
    int r;
    CHECK_MPI(MPI_Comm_compare(a, b, &r));
    CHECK(r == MPI_CONGRUENT, "guided split differs from the shared-memory split");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm shared, c;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));

#ifdef MPI_COMM_TYPE_RESOURCE_GUIDED /* MPI 4.1 */
    const int types[] = {MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_RESOURCE_GUIDED};
#else
    const int types[] = {MPI_COMM_TYPE_HW_GUIDED};
#endif
    for (int t = 0; t < (int)(sizeof types / sizeof types[0]); t++) {
        MPI_Info info;
        CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, types[t], rank, MPI_INFO_NULL, &c));
        CHECK(c == MPI_COMM_NULL, "guided split without info gave a communicator");
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Info_set(info, "mpi_hw_resource_type", "no-such-resource"));
        CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, types[t], rank, info, &c));
        CHECK(c == MPI_COMM_NULL, "guided split by an unknown resource gave a communicator");
        CHECK_MPI(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
        CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, types[t], rank, info, &c));
        CHECK(c != MPI_COMM_NULL, "guided split by shared memory gave MPI_COMM_NULL");
        same_members(c, shared);
        CHECK_MPI(MPI_Comm_free(&c));
        /* one process at a time asks, the others pass MPI_UNDEFINED */
        for (int root = 0; root < size; root++) {
            CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, rank == root ? types[t] : MPI_UNDEFINED, 0, info, &c));
            if (rank == root) {
                CHECK(c != MPI_COMM_NULL, "the asking process got MPI_COMM_NULL");
                CHECK_EQ(mt_size(c), 1);
                CHECK_MPI(MPI_Comm_free(&c));
            } else {
                CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
            }
        }
        CHECK_MPI(MPI_Info_free(&info));
    }
    mt_pass("hw_guided, resource_guided");

    /* unguided: strictly smaller each time, down to MPI_COMM_NULL */
    MPI_Comm parent = MPI_COMM_WORLD;
    for (int depth = 0; depth < 64; depth++) {
        MPI_Info info;
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_UNGUIDED, rank, info, &c));
        if (c != MPI_COMM_NULL) {
            char value[MPI_MAX_INFO_VAL + 1];
            int len = MPI_MAX_INFO_VAL, flag = 0;
            CHECK_MPI(MPI_Info_get_string(info, "mpi_hw_resource_type", &len, value, &flag));
            CHECK(flag && value[0], "unguided split named no resource");
            CHECK(mt_size(c) < mt_size(parent), "unguided split is not smaller than its parent");
        }
        CHECK_MPI(MPI_Info_free(&info));
        if (parent != MPI_COMM_WORLD) CHECK_MPI(MPI_Comm_free(&parent));
        if (c == MPI_COMM_NULL) break;
        parent = c;
    }
    mt_pass("hw_unguided");
    CHECK_MPI(MPI_Comm_free(&shared));
    MPI_Finalize();
    return 0;
}
