#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, memrchr */
#endif
#include "spawn.h"
#include "cpu_binding.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static void setenv_int(const char *name, long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    setenv(name, buf, 1);
}

/* The child's part every start shares: the job's process group, its life
 * tied to mpirun's, default signals, the job's environment. */
static void join_job(lm_spawn_job *job, pid_t launcher)
{
    /* One group for the whole job: mpirun signals it as a unit, and the
     * terminal's Ctrl-C reaches only mpirun (which then ends the job). */
    setpgid(0, job->pgid);
    /* If mpirun dies, even by SIGKILL, the rank must not live on. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher) _exit(127); /* mpirun died before the line above took effect */

    /* mpirun blocks the signals it handles and ignores SIGPIPE; both would be
     * inherited through exec. */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);

    for (int i = 0; i < job->nenv; i++) {
        char *eq = strchr(job->env[i], '=');
        *eq = '\0';
        setenv(job->env[i], eq + 1, 1);
        *eq = '=';
    }
    setenv_int("LEANMPI_NODE_FD", job->segment_fd);
    setenv_int("LEANMPI_SIZE", job->world_size);
    setenv_int("LEANMPI_LOCAL_SIZE", job->local_size);
    setenv("LEANMPI_JOB_ID", job->job_id, 1);
}

/* Created close-on-exec: the child's copy must stay open through exec. */
static void keep_open(int fd)
{
    int flags = fd >= 0 ? fcntl(fd, F_GETFD) : 0;
    if (fd >= 0 && (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) != 0)) _exit(127);
}

static void enter_cwd(lm_spawn_job *job, const char *who)
{
    if (job->cwd && chdir(job->cwd) != 0) {
        fprintf(stderr, "mpirun: %s: cannot change to directory '%s': %s\n", who, job->cwd, strerror(errno));
        _exit(127);
    }
}

/* The rankfile's binding, before the program starts (so its first page
 * faults already land near its CPUs). */
static void bind_cpus(lm_spawn_job *job, int rank)
{
    if (!job->rank_cpus || !job->rank_cpus[rank]) return;
    cpu_set_t set;
    char why[200] = "";
    if (lm_cpus_from_slots(job->rank_cpus[rank], &set, why, sizeof why) != 0 ||
        sched_setaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "mpirun: rank %d: cannot bind to slot %s: %s\n", rank, job->rank_cpus[rank],
                why[0] ? why : strerror(errno));
        _exit(127);
    }
}

/* Runs in the child; never returns. */
static void child(lm_spawn_job *job, pid_t launcher, int rank, int local_rank, int in, int out, int err, int agent_fd)
{
    join_job(job, launcher);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
    setenv_int("LEANMPI_RANK", rank);
    setenv_int("LEANMPI_LOCAL_RANK", local_rank);
    if (agent_fd >= 0) { /* this rank's copy stays open */
        keep_open(agent_fd);
        setenv_int("LEANMPI_AGENT_FD", agent_fd);
    }
    char who[32];
    snprintf(who, sizeof who, "rank %d", rank);
    enter_cwd(job, who);
    bind_cpus(job, rank);
    execv(job->path, job->argv);
    fprintf(stderr, "mpirun: rank %d: cannot execute '%s': %s\n", rank, job->path, strerror(errno));
    _exit(127);
}

/* After fork, in the parent: the child joins the job's group (also from
 * here, so the group exists before we might signal it; whichever of the
 * two setpgid calls runs first wins, and both agree). */
static pid_t started(lm_spawn_job *job, pid_t pid)
{
    if (pid <= 0) return pid < 0 ? -1 : pid;
    if (job->pgid == 0) job->pgid = pid;
    setpgid(pid, job->pgid);
    return pid;
}

pid_t lm_spawn_rank(lm_spawn_job *job, int rank, int local_rank, int stdin_fd, int out_fd, int err_fd, int agent_fd)
{
    pid_t launcher = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) child(job, launcher, rank, local_rank, stdin_fd, out_fd, err_fd, agent_fd);
    return started(job, pid);
}

/* glibc gives a process 4 link-map namespaces unless told more (16 at
 * most): one for the host, one per rank. */
static void allow_namespaces(int count)
{
    const char *old = getenv("GLIBC_TUNABLES");
    char t[512];
    snprintf(t, sizeof t, "%s%sglibc.rtld.nns=%d", old ? old : "", old && *old ? ":" : "", count + 1);
    setenv("GLIBC_TUNABLES", t, 1);
}

/* A rank's bound CPUs as leanmpi-host takes them: numbers joined by '.',
 * "-" for none. Returns the length written (as snprintf). */
static size_t cpu_numbers(const lm_spawn_job *job, int rank, char *out, size_t cap)
{
    cpu_set_t set;
    char why[200];
    if (!job->rank_cpus || !job->rank_cpus[rank] || lm_cpus_from_slots(job->rank_cpus[rank], &set, why, sizeof why))
        return (size_t)snprintf(out, cap, "-");
    size_t len = 0;
    for (int c = 0; c < CPU_SETSIZE && len < cap; c++)
        if (CPU_ISSET(c, &set)) len += (size_t)snprintf(out + len, cap - len, "%s%d", len ? "." : "", c);
    return len;
}

static void host_child(lm_spawn_job *job, pid_t launcher, const char *host_path, int count, const int *ranks,
                       const int *locals, const int (*fds)[4], int report_fd)
{
    join_job(job, launcher);
    char spec[1024] = "";
    size_t len = 0;
    for (int k = 0; k < count; k++) {
        for (int s = 0; s < 4; s++) keep_open(fds[k][s]);
        len += (size_t)snprintf(spec + len, sizeof spec - len, "%s%d,%d,%d,%d,%d,%d,", k ? ";" : "", ranks[k],
                                locals[k], fds[k][0], fds[k][1], fds[k][2], fds[k][3]);
        if (len < sizeof spec) len += cpu_numbers(job, ranks[k], spec + len, sizeof spec - len);
        if (len >= sizeof spec) _exit(127);
    }
    keep_open(report_fd);
    setenv("LEANMPI_HOST_RANKS", spec, 1);
    setenv_int("LEANMPI_HOST_REPORT", report_fd);
    setenv_int("LEANMPI_HOST_LAUNCHER", launcher);
    setenv("LEANMPI_HOST_PROGRAM", job->path, 1);
    /* the transports' word on which peers share this address space */
    char group[64];
    snprintf(group, sizeof group, "%d,%d", ranks[0], count);
    setenv("LEANMPI_ADDRESS_SPACE_RANKS", group, 1);
    allow_namespaces(count);
    enter_cwd(job, "the address-space host");
    char **argv = job->argv;
    int n = 0;
    while (argv[n]) n++;
    char **hv = calloc((size_t)n + 2, sizeof *hv);
    if (!hv) _exit(127);
    hv[0] = (char *)host_path;
    for (int i = 0; i < n; i++) hv[i + 1] = argv[i];
    execv(host_path, hv);
    dprintf(report_fd, "error cannot execute %s: %s\n", host_path, strerror(errno));
    _exit(127);
}

pid_t lm_spawn_host(lm_spawn_job *job, const char *host_path, int count, const int *ranks, const int *locals,
                    const int (*fds)[4], int report_fd)
{
    pid_t launcher = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) host_child(job, launcher, host_path, count, ranks, locals, fds, report_fd);
    return started(job, pid);
}
