/* Rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7) while every other rank blocks in
 * MPI_Recv from a rank that never sends: mpirun must end them all, name
 * rank 1 and exit with status 7. argv[1] is a directory for pid/time files
 * (see test_launcher.py). */
#include <mpi.h>
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
    int rank, size, buf = 0;
    char text[64];
    const char *dir = argc > 1 ? argv[1] : ".";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    snprintf(text, sizeof text, "%d\n", (int)getpid());
    write_file(dir, "pid", rank, text);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank is in the job before the abort */
    if (rank == 1) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(text, sizeof text, "%.6f\n", ts.tv_sec + ts.tv_nsec * 1e-9);
        write_file(dir, "time", rank, text);
        MPI_Abort(MPI_COMM_WORLD, 7);
    } else {
        /* Nobody sends this: only the abort can end this rank. */
        MPI_Recv(&buf, 1, MPI_INT, rank == 0 ? size - 1 : 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
