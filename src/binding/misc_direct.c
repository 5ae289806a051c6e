/* MPI functions simple enough to need no validation or implementation hook:
 * timers, address arithmetic and the profiling control no-op. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under strict C11 */
#include <time.h>
#include "mpi.h"

#define LM_DIRECT(name) extern __typeof__(P##name) name __attribute__((weak, alias("P" #name)))

/* CLOCK_MONOTONIC: never jumps with wall-clock adjustments, so intervals
 * measured with MPI_Wtime are always meaningful. */
double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double PMPI_Wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0) return 1e-9;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Addresses are plain integers on the platforms LeanMPI supports. */
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return (MPI_Aint)((unsigned long)base + (unsigned long)disp); }

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((unsigned long)addr1 - (unsigned long)addr2);
}

/* Profiling libraries intercept MPI_Pcontrol; the library itself ignores it. */
int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}

LM_DIRECT(MPI_Wtime);
LM_DIRECT(MPI_Wtick);
LM_DIRECT(MPI_Aint_add);
LM_DIRECT(MPI_Aint_diff);
LM_DIRECT(MPI_Pcontrol);
