/* Page-table study: the system's page-table memory while every rank
 * communicates from a large buffer of its own.
 *
 * Each rank allocates a buffer (-b MiB, 64 by default), writes every page
 * of it, and then, for -r rounds, exchanges it with every other rank by an
 * in-place MPI_Alltoall (each rank's buffer is read by, and written from,
 * every peer: designs that map peers' memory map all of it). Between
 * rounds rank 0 reads PageTables from /proc/meminfo while every rank is
 * still alive and holds its buffer; the largest reading is printed, with
 * the reading before the buffers were touched:
 *
 *   pagetables_kb=<during> pagetables_start_kb=<after MPI_Init> ranks=<n> buffer_mib=<b>
 *
 * The harness reads PageTables before it starts the job, too (the system's
 * figure without the job). Standard MPI only: built with every MPI. */
#include "bench_common.h"

static long meminfo_kb(const char *field)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    size_t len = strlen(field);
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, field, len) && line[len] == ':') {
            kb = strtol(line + len + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long mib = 64, rounds = 4;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "-b")) mib = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-r")) rounds = strtol(argv[++i], NULL, 10);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long start_kb = rank == 0 ? meminfo_kb("PageTables") : 0;
    MPI_Barrier(MPI_COMM_WORLD);

    size_t bytes = (size_t)mib << 20;
    size_t block = bytes / (size_t)size / sizeof(int);
    char *buf = malloc(bytes);
    if (!buf || block == 0) {
        fprintf(stderr, "pagetables: cannot allocate %ld MiB\n", mib);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, rank + 1, bytes);

    long during_kb = 0;
    for (long r = 0; r < rounds; r++) {
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, (int)block, MPI_INT, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            long kb = meminfo_kb("PageTables");
            if (kb > during_kb) during_kb = kb;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* after an even number of in-place alltoalls each block is home again */
    int ok = 1;
    if (rounds % 2 == 0) {
        for (size_t i = 0; i < bytes; i += 4096) ok &= buf[i] == (char)(rank + 1);
    }
    int all_ok = 0;
    MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("pagetables_kb=%ld pagetables_start_kb=%ld ranks=%d buffer_mib=%ld\n", during_kb, start_kb, size, mib);
        if (rounds % 2 == 0) printf("# check=%s\n", all_ok ? "ok" : "FAILED");
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
