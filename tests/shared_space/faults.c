/* A rank that fails in one address space (argv[1]): "segv" dereferences
 * NULL, "abort" calls abort(), "exit3" exits with 3 after MPI_Finalize,
 * "nofinalize" exits 0 without MPI_Finalize, "fork_mpi" makes a child that
 * calls MPI, "exec" becomes /bin/true. Rank 1 fails; the others wait in a
 * barrier, which the launcher must end. "fork" is no failure: the child
 * exits at once, and the job goes on. */
#include "mpitest.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *how = argc > 1 ? argv[1] : "segv";
    if (rank == 1) {
        if (!strcmp(how, "segv")) *(volatile int *)(uintptr_t)argc = 0; /* argc is small: an unmapped address */
        if (!strcmp(how, "abort")) abort();
        if (!strcmp(how, "nofinalize")) exit(0);
        if (!strcmp(how, "fork")) {
            pid_t child = fork();
            if (child == 0) _exit(0);
            int status = -1;
            if (child < 0 || waitpid(child, &status, 0) != child || status != 0) {
                printf("FAIL: fork/waitpid: status %d\n", status);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            if (system("exit 4") != 4 << 8) {
                printf("FAIL: system() in a rank\n");
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        }
        if (!strcmp(how, "fork_mpi")) {
            /* the child's call ends the job; the rank waits for it, so
             * that the job cannot finish before the child has called */
            pid_t child = fork();
            if (child == 0) MPI_Barrier(MPI_COMM_WORLD);
            if (child > 0) waitpid(child, NULL, 0);
        }
        if (!strcmp(how, "exec")) execl("/bin/true", "true", (char *)NULL);
    }
    if (!strcmp(how, "exit3")) {
        MPI_Finalize();
        return rank == 1 ? 3 : 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
