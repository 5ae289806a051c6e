/* Zero-length blocks are legal anywhere in any constructor (MPI-4.1
 * section 5.1): first, last, in the middle, as the whole type, and inside
 * a type that another constructor then uses. Each type is checked by size,
 * extent and a pack/unpack round trip, and sent point-to-point. */
#include "mpitest.h"
#include <limits.h>
#include <stdint.h>

static void round_trip(MPI_Datatype t, const char *what, int expect_size)
{
    int size;
    CHECK_EQ(MPI_Type_size(t, &size), MPI_SUCCESS);
    CHECK(size == expect_size, "%s: size %d, expected %d", what, size, expect_size);
    int src[64], dst[64];
    for (int i = 0; i < 64; i++) src[i] = i + 1, dst[i] = 0;
    char packed[512];
    int pos = 0;
    CHECK_EQ(MPI_Pack(src, 1, t, packed, sizeof packed, &pos, MPI_COMM_SELF), MPI_SUCCESS);
    CHECK(pos == size, "%s: packed %d bytes, size %d", what, pos, size);
    pos = 0;
    CHECK_EQ(MPI_Unpack(packed, sizeof packed, &pos, dst, 1, t, MPI_COMM_SELF), MPI_SUCCESS);
    /* what came back is what the type covers, nothing else was touched */
    int moved = 0;
    for (int i = 0; i < 64; i++) {
        CHECK(dst[i] == 0 || dst[i] == src[i], "%s: int %d is %d", what, i, dst[i]);
        moved += dst[i] != 0;
    }
    CHECK(moved * (int)sizeof(int) == size, "%s: %d ints came back, size %d", what, moved, size);
    /* and through a message to oneself */
    for (int i = 0; i < 64; i++) dst[i] = 0;
    CHECK_EQ(MPI_Sendrecv(src, 1, t, 0, 0, dst, 1, t, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_SUCCESS);
    moved = 0;
    for (int i = 0; i < 64; i++) moved += dst[i] == src[i];
    CHECK(moved * (int)sizeof(int) == size, "%s: %d ints sent, size %d", what, moved, size);
}

static MPI_Datatype committed(MPI_Datatype t)
{
    CHECK_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Datatype t, idx0, u;

    /* the reported case: an indexed type whose first block is empty, inside a struct */
    CHECK_EQ(MPI_Type_indexed(3, (int[]){0, 2, 1}, (int[]){0, 1, 5}, MPI_INT, &idx0), MPI_SUCCESS);
    idx0 = committed(idx0);
    round_trip(idx0, "indexed {0,2,1}", 12);
    CHECK_EQ(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 32}, (MPI_Datatype[]){idx0, MPI_INT}, &t),
             MPI_SUCCESS);
    round_trip(committed(t), "struct {indexed {0,2,1}, int}", 16);
    MPI_Type_free(&t);
    /* zero-length first, middle and last blocks of a struct */
    CHECK_EQ(MPI_Type_create_struct(4, (int[]){0, 2, 0, 1}, (MPI_Aint[]){0, 4, 16, 20},
                                    (MPI_Datatype[]){MPI_DOUBLE, MPI_INT, idx0, MPI_INT}, &t),
             MPI_SUCCESS);
    round_trip(committed(t), "struct {0,2,0,1}", 12);
    MPI_Type_free(&t);
    /* every block empty */
    CHECK_EQ(MPI_Type_create_struct(2, (int[]){0, 0}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){MPI_INT, idx0}, &t),
             MPI_SUCCESS);
    round_trip(committed(t), "struct {0,0}", 0);
    MPI_Type_free(&t);
    CHECK_EQ(MPI_Type_indexed(2, (int[]){0, 0}, (int[]){3, 1}, MPI_INT, &t), MPI_SUCCESS);
    round_trip(committed(t), "indexed {0,0}", 0);
    MPI_Type_free(&t);
    /* the other block constructors */
    CHECK_EQ(MPI_Type_create_hindexed(3, (int[]){1, 0, 2}, (MPI_Aint[]){0, 8, 16}, MPI_INT, &t), MPI_SUCCESS);
    round_trip(committed(t), "hindexed {1,0,2}", 12);
    MPI_Type_free(&t);
    CHECK_EQ(MPI_Type_create_indexed_block(3, 0, (int[]){0, 2, 4}, MPI_INT, &t), MPI_SUCCESS);
    round_trip(committed(t), "indexed_block 0", 0);
    MPI_Type_free(&t);
    CHECK_EQ(MPI_Type_create_hindexed_block(2, 0, (MPI_Aint[]){0, 8}, idx0, &t), MPI_SUCCESS);
    round_trip(committed(t), "hindexed_block 0", 0);
    MPI_Type_free(&t);
    CHECK_EQ(MPI_Type_vector(3, 0, 2, MPI_INT, &t), MPI_SUCCESS);
    round_trip(committed(t), "vector blocklength 0", 0);
    MPI_Type_free(&t);
    CHECK_EQ(MPI_Type_contiguous(0, idx0, &t), MPI_SUCCESS);
    round_trip(committed(t), "contiguous 0", 0);
    /* an empty type inside others */
    CHECK_EQ(
        MPI_Type_create_struct(3, (int[]){1, 1, 2}, (MPI_Aint[]){0, 4, 8}, (MPI_Datatype[]){MPI_INT, t, MPI_INT}, &u),
        MPI_SUCCESS);
    round_trip(committed(u), "struct {int, empty, 2 int}", 12);
    MPI_Type_free(&u);
    CHECK_EQ(MPI_Type_vector(2, 1, 4, idx0, &u), MPI_SUCCESS);
    round_trip(committed(u), "vector of indexed {0,2,1}", 24);
    MPI_Type_free(&u);
    MPI_Type_free(&t);
    MPI_Type_free(&idx0);

    /* empty blocks at the far ends of the address range: they neither move the
     * bounds nor overflow anything computed from their displacements */
    MPI_Aint lb, extent;
    CHECK_EQ(MPI_Type_indexed(3, (int[]){0, 4, 0}, (int[]){INT_MAX, 2, INT_MIN}, MPI_INT, &t), MPI_SUCCESS);
    t = committed(t);
    CHECK_EQ(MPI_Type_get_extent(t, &lb, &extent), MPI_SUCCESS);
    CHECK(lb == 8 && extent == 16, "indexed {0@INT_MAX,4,0@INT_MIN}: lb %ld extent %ld", (long)lb, (long)extent);
    round_trip(t, "indexed {0@INT_MAX,4,0@INT_MIN}", 16);
    CHECK_EQ(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 32}, (MPI_Datatype[]){t, MPI_INT}, &u),
             MPI_SUCCESS);
    u = committed(u);
    CHECK_EQ(MPI_Type_get_extent(u, &lb, &extent), MPI_SUCCESS);
    CHECK(lb == 8 && extent == 28, "struct of it: lb %ld extent %ld", (long)lb, (long)extent);
    round_trip(u, "struct {indexed {0@INT_MAX,4,0@INT_MIN}, int}", 20);
    MPI_Type_free(&u);
    MPI_Type_free(&t);
    CHECK_EQ(MPI_Type_create_hindexed(3, (int[]){0, 4, 0}, (MPI_Aint[]){(MPI_Aint)INTPTR_MAX, 8, (MPI_Aint)INTPTR_MIN},
                                      MPI_INT, &t),
             MPI_SUCCESS);
    t = committed(t);
    CHECK_EQ(MPI_Type_get_extent(t, &lb, &extent), MPI_SUCCESS);
    CHECK(lb == 8 && extent == 16, "hindexed {0@AINT_MAX,4,0@AINT_MIN}: lb %ld extent %ld", (long)lb, (long)extent);
    round_trip(t, "hindexed {0@AINT_MAX,4,0@AINT_MIN}", 16);
    CHECK_EQ(MPI_Type_create_struct(3, (int[]){0, 1, 0}, (MPI_Aint[]){(MPI_Aint)INTPTR_MAX, 0, (MPI_Aint)INTPTR_MIN},
                                    (MPI_Datatype[]){MPI_DOUBLE, t, MPI_INT}, &u),
             MPI_SUCCESS);
    round_trip(committed(u), "struct {0@AINT_MAX, hindexed, 0@AINT_MIN}", 16);
    MPI_Type_free(&u);
    MPI_Type_free(&t);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS datatype_zero_blocks\n");
    MPI_Finalize();
    return 0;
}
