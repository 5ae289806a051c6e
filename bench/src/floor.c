/* The machine's floor for intra-node latency, without MPI: two processes
 * (a fork) bounce one cache line through shared memory. The parent writes
 * the round number into the line and waits until the child has written it
 * back; half of a round trip is what one 8-byte message could cost at
 * best, as the line must move from one core to the other once per
 * message. No binding, like the MPI runs of the harness. The timed run is
 * cut into SLICES equal slices and the fastest one is reported: a floor is
 * the best the machine does, and on a shared machine the cost of a line's
 * move changes from second to second (vCPUs placed on other host cores),
 * so the mean of a whole run would report the machine's state, not its
 * floor.
 *
 * Output (the series format of pingpong.c, one size):
 *   "# bench=floor"
 *   "size=8 iters=<n> lat_us=<half round trip in microseconds>"
 * Options: the common -q and -t (-m is ignored). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLICES 20

/* One cache line: the message is the line itself. */
typedef struct line {
    _Alignas(64) volatile int64_t ping; /* written by the parent */
    volatile int64_t pong;              /* written by the child */
} line;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* The parent's side of `n` rounds starting at round `first`. */
static void bounce(line *l, int64_t first, int64_t n)
{
    for (int64_t i = first; i < first + n; i++) {
        l->ping = i;
        while (l->pong != i) relax();
    }
}

int main(int argc, char **argv)
{
    int quick = 0;
    double budget = 1.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-q") == 0) quick = 1;
        else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) budget = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) i++;
    }
    if (quick) budget /= 4;
    line *l = mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (l == MAP_FAILED) {
        perror("floor: mmap");
        return 1;
    }
    memset((void *)l, 0, sizeof *l);
    l->ping = l->pong = -1;
    pid_t child = fork();
    if (child < 0) {
        perror("floor: fork");
        return 1;
    }
    if (child == 0) {
        /* answer every round until the parent says stop (ping = -2) */
        alarm(600);
        for (int64_t last = -1;;) {
            int64_t v = l->ping;
            if (v == -2) _exit(0);
            if (v != last) {
                l->pong = v;
                last = v;
            } else {
                relax();
            }
        }
    }
    /* warm up, then size the timed run to the budget */
    int64_t next = 0, n = 1000;
    double t = now();
    bounce(l, next, n);
    next += n;
    double per = (now() - t) / (double)n;
    int64_t iters = per > 0 ? (int64_t)(budget / 2 / per / SLICES) : 10000;
    if (iters < 1000) iters = 1000;
    if (iters > 1000000) iters = 1000000;
    double best = 0;
    for (int k = 0; k < SLICES; k++) {
        t = now();
        bounce(l, next, iters);
        next += iters;
        double dt = now() - t;
        if (k == 0 || dt < best) best = dt;
    }
    l->ping = -2;
    int status = 0;
    waitpid(child, &status, 0);
    printf("# bench=floor\n");
    printf("size=8 iters=%lld lat_us=%.4f\n", (long long)iters, best / (double)iters / 2 * 1e6);
    return 0;
}
