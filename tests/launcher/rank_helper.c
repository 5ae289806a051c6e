/* A stand-in for an MPI program, driven by its command line, for testing
 * mpirun without the MPI library. It uses the native bootstrap directly
 * (init / finalize / abort), which is exactly what the library does.
 *
 * Arguments are actions run in order; "rN:action" runs only on rank N.
 *   pidfile:DIR    write DIR/pid.RANK (the test checks these processes end)
 *   waitpids:N     wait until N ranks have written their pid file, so a
 *                  failure cannot end the job before every rank is recorded
 *   stamp          write DIR/time.RANK (realtime seconds) just before acting
 *   init, finalize lm_boot_init / lm_boot_finalize
 *   identity       print rank, sizes and local rank as the bootstrap sees them
 *   abort:CODE:MSG lm_boot_abort
 *   exit:CODE      exit now
 *   segv           dereference NULL
 *   ignoreterm     ignore SIGTERM (mpirun must escalate to SIGKILL)
 *   sleep:SECONDS  sleep; a negative value sleeps forever
 *   echo:TEXT, err:TEXT, partial:TEXT   write TEXT (partial: no newline)
 *   cat            copy stdin to stdout, then report the byte count
 *   env:VAR        print VAR's value
 *   flood:BYTES    write about BYTES of numbered lines to stdout
 *   usr1           wait for SIGUSR1 (after writing DIR/ready.RANK)
 *   kvs            put a value in the node KVS and read every rank's back
 *   cpus           print the CPUs the rank may run on (mpirun --rankfile) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include "boot/boot.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_rank;
static char g_dir[4096] = ".";
static volatile sig_atomic_t g_usr1;

static void write_file(const char *what, const char *text)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/%s.%d", g_dir, what, g_rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        perror(tmp);
        exit(90);
    }
    fputs(text, f);
    fclose(f);
    rename(tmp, path); /* the test never sees a half-written file */
}

static void on_usr1(int sig) { g_usr1 = 1; }

static void act(const char *a)
{
    char buf[256];
    if (strncmp(a, "pidfile:", 8) == 0) {
        snprintf(g_dir, sizeof g_dir, "%s", a + 8);
        snprintf(buf, sizeof buf, "%d\n", (int)getpid());
        write_file("pid", buf);
    } else if (strncmp(a, "waitpids:", 9) == 0) {
        int want = atoi(a + 9);
        for (int tries = 0; tries < 6000; tries++) {
            int have = 0;
            DIR *d = opendir(g_dir);
            struct dirent *e;
            while (d && (e = readdir(d)))
                if (strncmp(e->d_name, "pid.", 4) == 0 && !strstr(e->d_name, ".tmp")) have++;
            if (d) closedir(d);
            if (have >= want) return;
            usleep(5000);
        }
        fprintf(stderr, "rank_helper: waitpids: gave up\n");
        exit(96);
    } else if (strcmp(a, "stamp") == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(buf, sizeof buf, "%.6f\n", ts.tv_sec + ts.tv_nsec * 1e-9);
        write_file("time", buf);
    } else if (strcmp(a, "init") == 0) {
        if (lm_boot_init(NULL) != 0) exit(91);
    } else if (strcmp(a, "finalize") == 0) {
        lm_boot_finalize();
    } else if (strcmp(a, "identity") == 0) {
        const lm_boot_info *b = lm_boot();
        if (!b) exit(92);
        printf("rank %d size %d reported %d local %d/%d singleton %d\n", b->world_rank, b->world_size,
               b->reported_world_size, b->local_rank, b->local_size, b->singleton);
    } else if (strcmp(a, "cpus") == 0) { /* the CPUs this rank may run on */
        cpu_set_t set;
        char list[256] = "";
        size_t len = 0;
        if (sched_getaffinity(0, sizeof set, &set) != 0) exit(93);
        for (int c = 0; c < CPU_SETSIZE && len < sizeof list; c++)
            if (CPU_ISSET(c, &set)) len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", len ? "," : "", c);
        const char *rank = getenv("LEANMPI_RANK");
        printf("rank %s cpus %s\n", rank ? rank : "?", list);
    } else if (strncmp(a, "abort:", 6) == 0) {
        char *end;
        long code = strtol(a + 6, &end, 10);
        lm_boot_abort((int)code, *end == ':' ? end + 1 : "");
    } else if (strncmp(a, "exit:", 5) == 0) {
        fflush(NULL);
        exit(atoi(a + 5));
    } else if (strcmp(a, "segv") == 0) {
        fflush(NULL);
        signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would turn it into exit(1) */
        *(volatile int *)(uintptr_t)0 = 1;
    } else if (strcmp(a, "ignoreterm") == 0) {
        signal(SIGTERM, SIG_IGN);
    } else if (strncmp(a, "sleep:", 6) == 0) {
        double s = atof(a + 6);
        fflush(NULL);
        if (s < 0)
            for (;;) pause();
        struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
    } else if (strncmp(a, "echo:", 5) == 0) {
        printf("%s\n", a + 5);
    } else if (strncmp(a, "err:", 4) == 0) {
        fprintf(stderr, "%s\n", a + 4);
    } else if (strncmp(a, "partial:", 8) == 0) {
        printf("%s", a + 8);
    } else if (strcmp(a, "cat") == 0) {
        long total = 0;
        size_t n;
        char b[4096];
        while ((n = fread(b, 1, sizeof b, stdin)) > 0) {
            fwrite(b, 1, n, stdout);
            total += (long)n;
        }
        printf("\nrank %d stdin bytes %ld\n", g_rank, total);
    } else if (strncmp(a, "env:", 4) == 0) {
        const char *v = getenv(a + 4);
        printf("rank %d %s=%s\n", g_rank, a + 4, v ? v : "(unset)");
    } else if (strncmp(a, "flood:", 6) == 0) {
        long bytes = atol(a + 6), written = 0;
        for (long line = 0; written < bytes; line++) {
            int n = printf("rank %d line %ld abcdefghijklmnopqrstuvwxyz0123456789\n", g_rank, line);
            written += n;
        }
    } else if (strcmp(a, "usr1") == 0) {
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGUSR1);
        signal(SIGUSR1, on_usr1);
        sigprocmask(SIG_BLOCK, &block, &old);
        write_file("ready", "1\n");
        while (!g_usr1) sigsuspend(&old);
        sigprocmask(SIG_SETMASK, &old, NULL);
        printf("rank %d got SIGUSR1\n", g_rank);
    } else if (strcmp(a, "kvs") == 0) {
        const lm_boot_info *b = lm_boot();
        if (!b) exit(92);
        snprintf(buf, sizeof buf, "value-of-%d", b->world_rank);
        if (lm_boot_put("k", buf, strlen(buf) + 1) != 0) exit(93);
        for (int r = 0; r < b->world_size; r++) {
            char v[64];
            long n;
            while ((n = lm_boot_get(r, "k", v, sizeof v)) < 0)
                usleep(1000); /* no barrier here: wait for the peer's put */
            snprintf(buf, sizeof buf, "value-of-%d", r);
            if (strcmp(v, buf) != 0) exit(94);
        }
        printf("rank %d kvs ok\n", b->world_rank);
    } else {
        fprintf(stderr, "rank_helper: unknown action '%s'\n", a);
        exit(95);
    }
}

int main(int argc, char **argv)
{
    const char *r = getenv("LEANMPI_RANK");
    g_rank = r ? atoi(r) : 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == 'r' && a[1] >= '0' && a[1] <= '9') {
            char *end;
            long only = strtol(a + 1, &end, 10);
            if (*end == ':') {
                if (only != g_rank) continue;
                a = end + 1;
            }
        }
        act(a);
    }
    fflush(NULL);
    return 0;
}
