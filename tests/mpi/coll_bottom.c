/* Collectives with MPI_BOTTOM as both the send and the receive buffer: the
 * datatypes carry absolute addresses, so the two name different memory
 * and are not aliased buffers. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_world_rank(), size = mt_size(MPI_COMM_WORLD);
    int *sb = malloc(sizeof(int) * (size_t)size), *rb = malloc(sizeof(int) * (size_t)size);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *stypes = malloc(sizeof(MPI_Datatype) * (size_t)size);
    MPI_Datatype *rtypes = malloc(sizeof(MPI_Datatype) * (size_t)size);
    for (int j = 0; j < size; j++) {
        MPI_Aint a;
        sb[j] = rank * 100 + j;
        rb[j] = -1;
        counts[j] = 1;
        displs[j] = 0;
        /* one int at an absolute address, per peer */
        CHECK_MPI(MPI_Get_address(&sb[j], &a));
        int one = 1;
        CHECK_MPI(MPI_Type_create_struct(1, &one, &a, (MPI_Datatype[]){MPI_INT}, &stypes[j]));
        CHECK_MPI(MPI_Type_commit(&stypes[j]));
        CHECK_MPI(MPI_Get_address(&rb[j], &a));
        CHECK_MPI(MPI_Type_create_struct(1, &one, &a, (MPI_Datatype[]){MPI_INT}, &rtypes[j]));
        CHECK_MPI(MPI_Type_commit(&rtypes[j]));
    }
    CHECK_MPI(MPI_Alltoallw(MPI_BOTTOM, counts, displs, stypes, MPI_BOTTOM, counts, displs, rtypes, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++) CHECK_EQ(rb[i], i * 100 + rank);
    for (int i = 0; i < size; i++) rb[i] = -1;
    MPI_Request r;
    CHECK_MPI(
        MPI_Ialltoallw(MPI_BOTTOM, counts, displs, stypes, MPI_BOTTOM, counts, displs, rtypes, MPI_COMM_WORLD, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < size; i++) CHECK_EQ(rb[i], i * 100 + rank);
    mt_pass("alltoallw, ialltoallw with MPI_BOTTOM");

    /* allreduce from and to absolute addresses */
    int x = rank + 1, y = -1, one = 1;
    MPI_Aint ax, ay;
    MPI_Datatype tx, ty;
    CHECK_MPI(MPI_Get_address(&x, &ax));
    CHECK_MPI(MPI_Get_address(&y, &ay));
    CHECK_MPI(MPI_Type_create_hindexed(1, &one, &ax, MPI_INT, &tx));
    CHECK_MPI(MPI_Type_create_hindexed(1, &one, &ay, MPI_INT, &ty));
    CHECK_MPI(MPI_Type_commit(&tx));
    CHECK_MPI(MPI_Type_commit(&ty));
    CHECK_MPI(MPI_Allgather(MPI_BOTTOM, 1, tx, rb, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++) CHECK_EQ(rb[i], i + 1);
    CHECK_MPI(MPI_Sendrecv(MPI_BOTTOM, 1, tx, rank, 0, MPI_BOTTOM, 1, ty, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(y, rank + 1);
    mt_pass("allgather, sendrecv with MPI_BOTTOM");

    CHECK_MPI(MPI_Type_free(&tx));
    CHECK_MPI(MPI_Type_free(&ty));
    for (int j = 0; j < size; j++) {
        CHECK_MPI(MPI_Type_free(&stypes[j]));
        CHECK_MPI(MPI_Type_free(&rtypes[j]));
    }
    free(sb);
    free(rb);
    free(counts);
    free(displs);
    free(stypes);
    free(rtypes);
    MPI_Finalize();
    return 0;
}
