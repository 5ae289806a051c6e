/* Ranks in one address space (mpirun --address-space=shared) keep what a
 * process gives them: globals, heap, errno, thread-local storage,
 * environment, process id, stdio buffers and atexit handlers at exit; and
 * each can read another's memory of its address space by plain loads.
 * With ranks in several address spaces (--address-space-ranks), a rank
 * shares memory with the ranks of its group only. */
#include "mpitest.h"
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

static int global_rank = -1;
static __thread int tls_rank = -1;

static void at_exit(void)
{
    /* no newline flush before this: exit must flush the rank's own stdout */
    if (global_rank == 1) printf("PASS atexit of rank 1 (pid %d)", (int)getpid());
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int first = 0, count = 0;
    const char *space = getenv("LEANMPI_ADDRESS_SPACE_RANKS");
    CHECK(space && sscanf(space, "%d,%d", &first, &count) == 2, "LEANMPI_ADDRESS_SPACE_RANKS is '%s'",
          space ? space : "(unset)");
    CHECK(rank >= first && rank < first + count, "rank %d outside its group %d,%d", rank, first, count);

    global_rank = rank;
    tls_rank = rank;
    errno = 100 + rank;
    char value[16];
    snprintf(value, sizeof value, "%d", rank);
    setenv("LM_ISOLATION_RANK", value, 1);
    atexit(at_exit);
    /* a heap block of each rank, its address and pid to everyone */
    unsigned char *block = malloc(1 << 16);
    for (int i = 0; i < 1 << 16; i++) block[i] = (unsigned char)(rank * 31 + i);
    uint64_t mine[2] = {(uint64_t)(uintptr_t)block, (uint64_t)getpid()}, *all = malloc(sizeof mine * (size_t)size);
    MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, MPI_COMM_WORLD);

    /* others' work in their heaps leaves mine alone */
    for (int k = 0; k < 1000; k++) free(malloc((size_t)(k % 97 + 1) * 64));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(global_rank, rank);
    CHECK_EQ(tls_rank, rank);
    CHECK_EQ(errno, 100 + rank);
    CHECK(!strcmp(getenv("LM_ISOLATION_RANK"), value), "environment holds %s", getenv("LM_ISOLATION_RANK"));
    for (int i = 0; i < 1 << 16; i++) CHECK(block[i] == (unsigned char)(rank * 31 + i), "own heap byte %d", i);
    for (int r = 0; r < size; r++)
        if (r != rank) CHECK(all[2 * r + 1] != (uint64_t)getpid(), "rank %d has this rank's pid", r);
    /* a rank of my group: its block is readable here, at its address */
    for (int r = first; r < first + count; r++) {
        const unsigned char *theirs = (const unsigned char *)(uintptr_t)all[2 * r];
        for (int i = 0; i < 1 << 16; i += 4093)
            CHECK(theirs[i] == (unsigned char)(r * 31 + i), "rank %d's byte %d read in place", r, i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(block);
    free(all);
    if (rank == 0) printf("PASS isolation: %d ranks, groups of %d\n", size, count);
    MPI_Finalize();
    return 0;
}
