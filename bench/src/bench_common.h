/* Shared helpers for the LeanMPI side-by-side benchmarks.
 *
 * The programs use only standard MPI so that the same source is compiled
 * with every MPI under comparison.  Every result is printed by rank 0 as one
 * line of space-separated key=value pairs; lines starting with '#' are
 * comments.  bench/leanmpi_bench.py parses these lines.
 *
 * Common options:
 *   -q          quick mode: fewer sizes (powers of 4, plus 8 B) and 10x
 *               fewer iterations, for smoke runs
 *   -m BYTES    largest message size (default 4 MiB)
 *   -t SECONDS  time budget of the timed loop of one size (default 0.3,
 *               quick 0.05): on a slow or busy machine the iteration count
 *               is lowered, after the warm-up, so that a run stays short
 */
#ifndef LEANMPI_BENCH_COMMON_H
#define LEANMPI_BENCH_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200112L /* posix_memalign under -std=c11 */
#endif

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_MAX_SIZE_DEFAULT (4u << 20)
#define BENCH_MAX_SIZES 64

struct bench_opts {
    int quick;
    size_t max_size;
    double budget_s;
};

static inline void bench_parse_args(int argc, char **argv, struct bench_opts *o)
{
    o->quick = 0;
    o->max_size = BENCH_MAX_SIZE_DEFAULT;
    o->budget_s = -1.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-q") == 0) o->quick = 1;
        else if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) o->max_size = (size_t)strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) o->budget_s = strtod(argv[++i], NULL);
    }
    if (o->budget_s <= 0.0) o->budget_s = o->quick ? 0.05 : 0.3;
}

/* Message sizes: every power of two from 1 B to max_size (8 B is among them).
 * Quick mode keeps powers of four plus 8 B, so that the sizes the targets
 * are judged at (8 B and 1 MiB) are always measured. */
static inline int bench_sizes(const struct bench_opts *o, size_t *sizes)
{
    int n = 0;
    for (size_t s = 1; s <= o->max_size && n < BENCH_MAX_SIZES; s <<= 1) {
        int log2 = 0;
        for (size_t t = s; t > 1; t >>= 1) log2++;
        if (o->quick && (log2 % 2) != 0 && s != 8) continue;
        sizes[n++] = s;
    }
    return n;
}

/* Iterations so that each size moves about `budget` bytes, clamped. */
static inline long bench_iters(size_t bytes_per_iter, double budget, long lo, long hi, int quick)
{
    double it = budget / (double)bytes_per_iter;
    long n = it > (double)hi ? hi : (it < (double)lo ? lo : (long)it);
    if (quick) {
        n /= 10;
        if (n < 3) n = 3;
    }
    return n;
}

/* How many of `iters` iterations fit in `budget_s` seconds, given that
 * `done` iterations just took `done_s` seconds as seen by rank 0: at most
 * `iters`, at least `floor`, agreed by all ranks (rank 0 decides).  Used to
 * size the warm-up from a two-iteration probe and the timed loop from the
 * warm-up, so that a slow or busy machine still finishes in time.  The
 * calibration and its broadcast are not timed. */
static inline long bench_fit(long iters, long done, double done_s, double budget_s, long floor, int rank)
{
    long n = iters;
    if (rank == 0 && done > 0 && done_s > 0.0) {
        double fit = budget_s / (done_s / (double)done);
        if (fit < (double)n) n = (long)fit;
        if (n < floor) n = floor;
    }
    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return n;
}

/* Page-aligned buffer, written once so that page faults are not timed. */
static inline char *bench_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0) bytes = 1;
    if (posix_memalign(&p, 4096, bytes) != 0) {
        fprintf(stderr, "bench: cannot allocate %zu bytes\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(p, 'a', bytes);
    return (char *)p;
}

/* Prints "# library=<first line of MPI_Get_library_version>" from rank 0. */
static inline void bench_print_library(int rank)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    if (rank != 0) return;
    for (int i = 0; i < len && v[i]; i++)
        if (v[i] == '\n' || v[i] == '\r') {
            v[i] = '\0';
            break;
        }
    printf("# library=%s\n", v);
}

static inline void bench_require_two(int size, int rank)
{
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "bench: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* How many of `iters` iterations fit in `budget_s` seconds, given that
 * `done` iterations just took `done_s` seconds, decided by the caller
 * alone (one-sided benchmarks: the target takes no part): at most
 * `iters`, at least `floor`. */
static inline long bench_fit_alone(long iters, long done, double done_s, double budget_s, long floor)
{
    long n = iters;
    if (done > 0 && done_s > 0.0) {
        double fit = budget_s / (done_s / (double)done);
        if (fit < (double)n) n = (long)fit;
        if (n < floor) n = floor;
    }
    return n;
}

/* The value in kB of `key:` in a /proc file (smaps_rollup, status), or -1. */
static inline long bench_read_kb(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    char line[512];
    size_t klen = strlen(key);
    long v = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            v = strtol(line + klen + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* One_put_all's closing line (rma.c -p, acp.c -p): the origin's private
 * memory (Private_Clean + Private_Dirty of smaps_rollup; VmRSS where that
 * file is missing, said in a "# private_from=VmRSS" line) and its VmRSS. */
static inline void bench_report_putall(const char *bench, int ranks, double t, long rounds, long planned)
{
    long clean = bench_read_kb("/proc/self/smaps_rollup", "Private_Clean");
    long dirty = bench_read_kb("/proc/self/smaps_rollup", "Private_Dirty");
    long rss = bench_read_kb("/proc/self/status", "VmRSS");
    long priv = clean >= 0 && dirty >= 0 ? clean + dirty : rss;
    if (clean < 0 || dirty < 0) printf("# private_from=VmRSS\n");
    printf("# bench=%s ranks=%d\n", bench, ranks);
    printf("op=one_put_all size=%d private_kb=%ld rss_kb=%ld time_s=%.4f rounds=%ld planned=%ld\n", ranks, priv, rss, t,
           rounds, planned);
    fflush(stdout);
}

#endif
