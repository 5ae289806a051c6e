/* MPI_Alloc_mem / MPI_Free_mem: alignment, zero size, the alignment hint,
 * memory used for communication, and failures. */
#include "mpitest.h"
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

static int is_leanmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(v, &len);
    return !strncmp(v, "LeanMPI", 7);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int size = mt_size(MPI_COMM_WORLD), rank = mt_rank(MPI_COMM_WORLD);

    static const MPI_Aint sizes[] = {1, 3, 8, 100, 4096, 1 << 20};
    void *blocks[6];
    for (int i = 0; i < 6; i++) {
        CHECK_MPI(MPI_Alloc_mem(sizes[i], MPI_INFO_NULL, &blocks[i]));
        CHECK(blocks[i] != NULL, "a block of %ld bytes", (long)sizes[i]);
        CHECK_EQ((uintptr_t)blocks[i] % alignof(max_align_t), 0);
        memset(blocks[i], i + 1, (size_t)sizes[i]);
    }
    /* blocks do not overlap: each still holds its own pattern */
    for (int i = 0; i < 6; i++)
        for (MPI_Aint j = 0; j < sizes[i]; j++)
            CHECK(((unsigned char *)blocks[i])[j] == i + 1, "block %d byte %ld", i, (long)j);
    for (int i = 5; i >= 0; i -= 2) CHECK_MPI(MPI_Free_mem(blocks[i]));
    for (int i = 0; i < 6; i += 2) CHECK_MPI(MPI_Free_mem(blocks[i]));

    /* zero bytes: a call that succeeds and a pointer MPI_Free_mem takes */
    void *empty = NULL;
    CHECK_MPI(MPI_Alloc_mem(0, MPI_INFO_NULL, &empty));
    CHECK_MPI(MPI_Free_mem(empty));

    /* the alignment hint, and an info with keys the library does not know */
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096"));
    CHECK_MPI(MPI_Info_set(info, "org.leanmpi.test.unknown", "yes"));
    void *page;
    CHECK_MPI(MPI_Alloc_mem(100, info, &page));
    if (is_leanmpi()) CHECK_EQ((uintptr_t)page % 4096, 0);
    CHECK_MPI(MPI_Free_mem(page));
    CHECK_MPI(MPI_Info_free(&info));

    /* memory from MPI_Alloc_mem carries messages */
    int n = 1 << 16;
    int *out, *in;
    CHECK_MPI(MPI_Alloc_mem((MPI_Aint)(n * sizeof(int)), MPI_INFO_NULL, &out));
    CHECK_MPI(MPI_Alloc_mem((MPI_Aint)(n * sizeof(int)), MPI_INFO_NULL, &in));
    for (int i = 0; i < n; i++) out[i] = rank * n + i;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    CHECK_MPI(MPI_Sendrecv(out, n, MPI_INT, right, 3, in, n, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) CHECK(in[i] == left * n + i, "element %d", i);
    CHECK_MPI(MPI_Free_mem(out));
    CHECK_MPI(MPI_Free_mem(in));

    if (is_leanmpi()) {
        /* more than any machine has (MPICH 4.0 reports success) */
        void *huge = NULL;
        CHECK_ERRCLASS(MPI_Alloc_mem((MPI_Aint)1 << 60, MPI_INFO_NULL, &huge), MPI_ERR_NO_MEM);
        /* a pointer that did not come from MPI_Alloc_mem */
        int local;
        CHECK_ERRCLASS(MPI_Free_mem(&local), MPI_ERR_BASE);
        void *p;
        CHECK_MPI(MPI_Alloc_mem(64, MPI_INFO_NULL, &p));
        CHECK_ERRCLASS(MPI_Free_mem((char *)p + 8), MPI_ERR_BASE);
        CHECK_MPI(MPI_Free_mem(p));
        CHECK_ERRCLASS(MPI_Free_mem(p), MPI_ERR_BASE); /* twice */
        CHECK_ERRCLASS(MPI_Alloc_mem(-1, MPI_INFO_NULL, &p), MPI_ERR_SIZE);
    }
    mt_pass("MPI_Alloc_mem / MPI_Free_mem");
    CHECK_MPI(MPI_Finalize());
    return 0;
}
