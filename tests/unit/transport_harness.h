/* A node without a launcher, for transport unit tests: one anonymous shared
 * mapping holding a formatted shm area plus a small control page (pids,
 * barrier), and forked processes acting as the node's ranks (world rank ==
 * local rank). Every child arms an alarm so a bug shows up as a failure,
 * never as a hang. */
#ifndef LM_TRANSPORT_HARNESS_H
#define LM_TRANSPORT_HARNESS_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "transport/shm_layout.h"
#include "transport/transport.h"
#include "transport/transport_env.h"

#define H_MAX_RANKS 16
#define H_SKIP 77 /* ctest SKIP_RETURN_CODE */

typedef struct h_ctl {
    _Atomic int pid[H_MAX_RANKS];
    _Atomic int barrier_count, barrier_gen;
    _Atomic uint64_t word[8]; /* free for tests */
} h_ctl;

static struct {
    int n;
    h_ctl *ctl;
    void *area;
} H;

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s (pid %d)\n", __FILE__, __LINE__, #cond, (int)getpid()); \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

/* A fresh, zero-filled node of nranks ranks (the area must start zeroed). */
static inline void h_setup(int nranks)
{
    static size_t mapped;
    if (H.ctl) munmap(H.ctl, mapped);
    size_t size = 4096 + lm_shm_area_size(nranks);
    mapped = size;
    char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    H.n = nranks;
    H.ctl = (h_ctl *)m;
    H.area = m + 4096;
    lm_shm_area_format(H.area, nranks);
}

static inline int h_local_rank_of(int w) { return w >= 0 && w < H.n ? w : -1; }
static inline pid_t h_pid_of(int w) { return w >= 0 && w < H.n ? atomic_load(&H.ctl->pid[w]) : 0; }

/* In a child: become rank r (fastbox_peers: receivers it may hold fast
 * boxes at, 0 for any number). */
static inline void h_init_rank_peers(int r, int fastbox_threshold, int fastbox_max, int fastbox_peers, int cma_enable)
{
    lm_transport_env env = {
        .world_rank = r,
        .local_rank = r,
        .local_size = H.n,
        .shm_area = H.area,
        .local_rank_of = h_local_rank_of,
        .pid_of = h_pid_of,
        .fastbox_threshold = fastbox_threshold,
        .fastbox_max = fastbox_max,
        .fastbox_peers = fastbox_peers,
        .cma_enable = cma_enable,
    };
    CHECK(lm_transport_init_env(&env) == LM_OK);
    atomic_store(&H.ctl->pid[r], (int)getpid());
}

static inline void h_init_rank(int r, int fastbox_threshold, int fastbox_max, int cma_enable)
{
    h_init_rank_peers(r, fastbox_threshold, fastbox_max, 0, cma_enable);
}

/* Progresses while waiting, as the library would. */
static inline void h_barrier(void)
{
    int gen = atomic_load(&H.ctl->barrier_gen);
    if (atomic_fetch_add(&H.ctl->barrier_count, 1) == H.n - 1) {
        atomic_store(&H.ctl->barrier_count, 0);
        atomic_fetch_add(&H.ctl->barrier_gen, 1);
        return;
    }
    while (atomic_load(&H.ctl->barrier_gen) == gen) {
        if (lm_transport_progress() == 0) sched_yield();
    }
}

/* Send, progressing on LM_EAGAIN. */
static inline void h_send(int dst, const void *hdr, size_t hl, const void *p, size_t pl)
{
    int rc;
    while ((rc = lm_transport_am_send(dst, hdr, hl, p, pl)) == LM_EAGAIN) {
        if (lm_transport_progress() == 0) sched_yield();
    }
    CHECK(rc == LM_OK);
}

/* Run fn(rank) in n children on a fresh node; 0 if all exited 0, H_SKIP if any skipped. */
static inline int h_run(int n, int (*fn)(int rank), unsigned alarm_s)
{
    pid_t pids[H_MAX_RANKS];
    h_setup(n);
    fflush(stdout);
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        CHECK(pids[r] >= 0);
        if (pids[r] == 0) {
            alarm(alarm_s);
            exit(fn(r));
        }
    }
    int result = 0;
    for (int r = 0; r < n; r++) {
        int st;
        CHECK(waitpid(pids[r], &st, 0) == pids[r]);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (code == H_SKIP && result == 0) result = H_SKIP;
        else if (code != 0 && code != H_SKIP) {
            fprintf(stderr, "rank %d failed (status %d)\n", r, code);
            result = 1;
        }
    }
    return result;
}

#endif
