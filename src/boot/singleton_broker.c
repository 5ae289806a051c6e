/* Starting the broker of a singleton (singleton_broker.h).
 *
 * The broker is `mpirun --lm-singleton CTL SEG PID`: CTL its end of the
 * request socket, SEG the singleton's node segment (where mpirun reads the
 * singleton's keys for the jobs it spawns), PID the singleton. It is
 * started through a double fork, so it is never this process's child:
 * nothing of the program's own child handling (SIGCHLD, wait) sees it,
 * and it outlives the singleton as long as jobs it spawned run. It stays
 * in the singleton's process group, so an interrupt at the terminal ends
 * it and what it started too.
 *
 * Which mpirun: LEANMPI_MPIRUN, else the one beside this library (bin/ in
 * a build tree, ../bin/ once installed), found through dladdr. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "boot/singleton_broker.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int find_mpirun(char *path, size_t cap)
{
    const char *env = getenv("LEANMPI_MPIRUN");
    if (env && *env) {
        snprintf(path, cap, "%s", env);
        return access(path, X_OK) == 0 ? 0 : -1;
    }
    Dl_info info;
    if (!dladdr((void *)lm_singleton_broker_start, &info) || !info.dli_fname) return -1;
    char lib[PATH_MAX - 16];
    snprintf(lib, sizeof lib, "%s", info.dli_fname);
    char *slash = strrchr(lib, '/');
    const char *dir = ".";
    if (slash) {
        *slash = '\0';
        dir = lib;
    }
    static const char *const rel[] = {"bin/mpirun", "../bin/mpirun"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(path, cap, "%s/%s", dir, rel[i]);
        if (access(path, X_OK) == 0) return 0;
    }
    return -1;
}

int lm_singleton_broker_start(int seg_fd, char *why, unsigned whycap)
{
    char path[PATH_MAX];
    if (find_mpirun(path, sizeof path) != 0) {
        const char *env = getenv("LEANMPI_MPIRUN");
        if (env && *env)
            snprintf(why, whycap, "this process was not started by mpirun, and LEANMPI_MPIRUN=%.200s is not a program",
                     env);
        else
            snprintf(why, whycap,
                     "this process was not started by mpirun, and no mpirun to serve dynamic processes was found "
                     "beside the library (set LEANMPI_MPIRUN)");
        return -1;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(why, whycap, "cannot create the socket to mpirun: %s", strerror(errno));
        return -1;
    }
    /* everything the child needs is made before fork: after it, only
     * async-signal-safe calls */
    char ctl_s[16], seg_s[16], pid_s[16];
    snprintf(ctl_s, sizeof ctl_s, "%d", sv[1]);
    snprintf(seg_s, sizeof seg_s, "%d", seg_fd);
    snprintf(pid_s, sizeof pid_s, "%d", (int)getpid());
    char *argv[] = {path, "--lm-singleton", ctl_s, seg_s, pid_s, NULL};
    pid_t mid = fork();
    if (mid < 0) {
        snprintf(why, whycap, "cannot start mpirun: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (mid == 0) {
        close(sv[0]);
        if (fork() == 0) {
            if (fcntl(sv[1], F_SETFD, 0) != 0 || fcntl(seg_fd, F_SETFD, 0) != 0) _exit(127);
            execv(path, argv);
            _exit(127);
        }
        _exit(0);
    }
    close(sv[1]);
    int status;
    while (waitpid(mid, &status, 0) < 0 && errno == EINTR) continue;
    return sv[0];
}
