/* Memory of each rank at three phases of a job, for the memory scaling
 * report (bench/leanmpi_mem.py):
 *   init     right after MPI_Init, before any communication
 *   ring     after a message exchange with both ring neighbours (2 peers)
 *   alltoall after an MPI_Alltoall of 8-byte blocks (every peer touched)
 *
 * Each rank reads its own VmRSS (and its anonymous, file and shared-memory
 * parts, /proc/self/status) and Pss
 * (/proc/self/smaps_rollup, or the sum over /proc/self/smaps on kernels
 * without it) at each phase.  Every rank prints its own lines at the end
 * (one write per rank, so lines of different ranks do not mix), which needs
 * no communication and so also works with simulated ranks that do not run:
 *   "phase=<p> rank=<r> size=<n> rss_kb=<kB> pss_kb=<kB> anon_kb=<kB>
 *    file_kb=<kB> shmem_kb=<kB>"   (the last three: the parts of VmRSS)
 *
 * Options:
 *   -w DIR    pause at each phase so that the job can be measured from
 *             outside: after sampling, a rank creates DIR/ready.<phase>.<rank>
 *             and waits until DIR/go.<phase> exists (at most -T seconds;
 *             the pause never hangs the job).  Waiting is a sleep loop, not
 *             MPI, so no phase adds communication of its own.
 *   -T SEC    longest pause per phase (default 300)
 *   -p PHASE  last phase to run (init, ring or alltoall; default alltoall).
 *             "-p init" needs no communication at all (used with simulated
 *             world sizes, whose absent ranks cannot be talked to). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

enum { PH_INIT, PH_RING, PH_ALLTOALL, NPHASES };
static const char *const phase_name[NPHASES] = {"init", "ring", "alltoall"};

static long read_field_kb(const char *path, const char *key, int sum_all)
{
    FILE *f = fopen(path, "r");
    char line[512];
    size_t klen = strlen(key);
    long total = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            long v = strtol(line + klen + 1, NULL, 10);
            total = total < 0 ? v : total + v;
            if (!sum_all) break;
        }
    }
    fclose(f);
    return total;
}

/* VmRSS, Pss, and the parts of VmRSS: anonymous, file-backed (library
 * text and data), shared memory (segments, memfd). */
enum { M_RSS, M_PSS, M_ANON, M_FILE, M_SHMEM, NMETRICS };

static void sample(long out[NMETRICS])
{
    out[M_RSS] = read_field_kb("/proc/self/status", "VmRSS", 0);
    out[M_PSS] = read_field_kb("/proc/self/smaps_rollup", "Pss", 0);
    if (out[M_PSS] < 0) out[M_PSS] = read_field_kb("/proc/self/smaps", "Pss", 1);
    out[M_ANON] = read_field_kb("/proc/self/status", "RssAnon", 0);
    out[M_FILE] = read_field_kb("/proc/self/status", "RssFile", 0);
    out[M_SHMEM] = read_field_kb("/proc/self/status", "RssShmem", 0);
}

/* Tell the harness this rank reached `phase`, then wait for its go. */
static void pause_at(const char *dir, int phase, int rank, double max_s)
{
    char path[4096];
    if (!dir) return;
    snprintf(path, sizeof path, "%s/ready.%s.%d", dir, phase_name[phase], rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd >= 0) close(fd);
    snprintf(path, sizeof path, "%s/go.%s", dir, phase_name[phase]);
    struct timespec nap = {0, 20 * 1000 * 1000};
    for (double waited = 0; waited < max_s; waited += 0.02) {
        if (access(path, F_OK) == 0) return;
        nanosleep(&nap, NULL);
    }
}

int main(int argc, char **argv)
{
    long mem[NPHASES][NMETRICS];
    const char *dir = NULL;
    double max_s = 300;
    int last = PH_ALLTOALL, rank, nranks;

    MPI_Init(&argc, &argv);
    sample(mem[PH_INIT]);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-w") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strcmp(argv[i], "-T") == 0 && i + 1 < argc) max_s = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) {
            const char *p = argv[++i];
            for (int k = 0; k < NPHASES; k++)
                if (strcmp(p, phase_name[k]) == 0) last = k;
        }
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    pause_at(dir, PH_INIT, rank, max_s);

    if (last >= PH_RING) {
        /* Both neighbours: send right and receive from the left, then the
         * other way round. */
        int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
        long out = rank, in = -1;
        MPI_Sendrecv(&out, 1, MPI_LONG, right, 1, &in, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in != left) MPI_Abort(MPI_COMM_WORLD, 2);
        MPI_Sendrecv(&out, 1, MPI_LONG, left, 2, &in, 1, MPI_LONG, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in != right) MPI_Abort(MPI_COMM_WORLD, 2);
        sample(mem[PH_RING]);
        pause_at(dir, PH_RING, rank, max_s);
    }
    if (last >= PH_ALLTOALL) {
        long *snd = malloc(sizeof(long) * (size_t)nranks);
        long *rcv = malloc(sizeof(long) * (size_t)nranks);
        if (!snd || !rcv) MPI_Abort(MPI_COMM_WORLD, 3);
        for (int r = 0; r < nranks; r++) snd[r] = (long)rank * nranks + r;
        MPI_Alltoall(snd, 1, MPI_LONG, rcv, 1, MPI_LONG, MPI_COMM_WORLD);
        for (int r = 0; r < nranks; r++)
            if (rcv[r] != (long)r * nranks + rank) MPI_Abort(MPI_COMM_WORLD, 2);
        free(snd);
        free(rcv);
        sample(mem[PH_ALLTOALL]);
        pause_at(dir, PH_ALLTOALL, rank, max_s);
    }

    char text[NPHASES * 192 + MPI_MAX_LIBRARY_VERSION_STRING + 16];
    size_t len = 0;
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int liblen = 0;
        MPI_Get_library_version(lib, &liblen);
        for (int i = 0; i < liblen; i++) /* one line: the first line of it */
            if (lib[i] == '\n' || lib[i] == '\r') {
                lib[i] = '\0';
                break;
            }
        len += (size_t)snprintf(text, sizeof text, "# library=%s\n", lib);
    }
    for (int k = 0; k <= last; k++)
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "phase=%s rank=%d size=%d rss_kb=%ld pss_kb=%ld "
                                "anon_kb=%ld file_kb=%ld shmem_kb=%ld\n",
                                phase_name[k], rank, nranks, mem[k][M_RSS], mem[k][M_PSS], mem[k][M_ANON],
                                mem[k][M_FILE], mem[k][M_SHMEM]);
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
