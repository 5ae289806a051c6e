#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, memrchr */
#endif
#include "spawn.h"

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

/* Runs in the child; never returns. */
static void child(lm_spawn_job *job, pid_t launcher, int rank, int local_rank, int in, int out, int err, int agent_fd)
{
    /* One group for the whole job: mpirun signals it as a unit, and the
     * terminal's Ctrl-C reaches only mpirun (which then ends the job). */
    setpgid(0, job->pgid);
    /* If mpirun dies, even by SIGKILL, the rank must not live on. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher) _exit(127); /* mpirun died before the line above took effect */

    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);

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
    setenv_int("LEANMPI_RANK", rank);
    setenv_int("LEANMPI_SIZE", job->world_size);
    setenv_int("LEANMPI_LOCAL_RANK", local_rank);
    setenv_int("LEANMPI_LOCAL_SIZE", job->local_size);
    setenv("LEANMPI_JOB_ID", job->job_id, 1);
    if (agent_fd >= 0) { /* created close-on-exec: this rank's copy stays open */
        int flags = fcntl(agent_fd, F_GETFD);
        if (flags < 0 || fcntl(agent_fd, F_SETFD, flags & ~FD_CLOEXEC) != 0) _exit(127);
        setenv_int("LEANMPI_AGENT_FD", agent_fd);
    }

    if (job->cwd && chdir(job->cwd) != 0) {
        fprintf(stderr, "mpirun: rank %d: cannot change to directory '%s': %s\n", rank, job->cwd, strerror(errno));
        _exit(127);
    }
    execv(job->path, job->argv);
    fprintf(stderr, "mpirun: rank %d: cannot execute '%s': %s\n", rank, job->path, strerror(errno));
    _exit(127);
}

pid_t lm_spawn_rank(lm_spawn_job *job, int rank, int local_rank, int stdin_fd, int out_fd, int err_fd, int agent_fd)
{
    pid_t launcher = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) child(job, launcher, rank, local_rank, stdin_fd, out_fd, err_fd, agent_fd);
    /* Also from the parent, so the group exists before we might signal it
     * (whichever of the two setpgid calls runs first wins; both agree). */
    if (job->pgid == 0) job->pgid = pid;
    setpgid(pid, job->pgid);
    return pid;
}
