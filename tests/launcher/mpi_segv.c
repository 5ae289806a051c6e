/* Rank 2 (or the last rank in smaller jobs) crashes with SIGSEGV after
 * MPI_Init while every other rank waits in an MPI_Barrier it never joins:
 * mpirun must end them all, name the rank and SIGSEGV, and exit with 139.
 * argv[1] is a directory for pid/time files (see test_launcher.py). */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void write_file(const char *dir, const char *what, int rank, const char *text)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s.%d", dir, what, rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
        rename(tmp, path);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    char text[64];
    const char *dir = argc > 1 ? argv[1] : ".";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    snprintf(text, sizeof text, "%d\n", (int)getpid());
    write_file(dir, "pid", rank, text);
    int victim = size > 2 ? 2 : size - 1;
    if (rank == victim) {
        usleep(200000); /* let the others reach the barrier */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(text, sizeof text, "%.6f\n", ts.tv_sec + ts.tv_nsec * 1e-9);
        write_file(dir, "time", rank, text);
        signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would turn it into exit(1) */
        *(volatile int *)(uintptr_t)0 = 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
