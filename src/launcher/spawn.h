/* Starting one rank: fork, wire its stdio, put it in the job's process group,
 * tie its life to mpirun's, give it its identity in the environment, exec. */
#ifndef LM_LAUNCHER_SPAWN_H
#define LM_LAUNCHER_SPAWN_H
#include <sys/types.h>

typedef struct lm_spawn_job {
    const char *path; /* resolved program */
    char **argv;      /* program and arguments */
    char **env;       /* extra "VAR=value" settings (-x, --env) */
    int nenv;
    int segment_fd; /* inherited by the rank (not close-on-exec) */
    const char *job_id;
    int world_size;
    int local_size;
    pid_t pgid;      /* 0 until the first rank has started: it leads the group */
    const char *cwd; /* the ranks' working directory, NULL: mpirun's */
    /* By world rank: the CPUs a rankfile binds the rank to (slot text,
     * checked beforehand with lm_cpus_from_slots), or NULL; NULL: none. */
    char *const *rank_cpus;
} lm_spawn_job;

/* stdin_fd/out_fd/err_fd become the rank's 0/1/2; agent_fd (or -1) is
 * inherited as LEANMPI_AGENT_FD. Returns the pid or -1. The first call sets
 * job->pgid. */
pid_t lm_spawn_rank(lm_spawn_job *job, int rank, int local_rank, int stdin_fd, int out_fd, int err_fd, int agent_fd);

/* Ranks of one node in one address space (mpirun --address-space=shared):
 * forks leanmpi-host (at host_path), which loads the program once per rank
 * and starts each as a task, a child of this process. count ranks, rank
 * ranks[k] with local rank locals[k] and descriptors fds[k] (its 0, 1, 2
 * and LEANMPI_AGENT_FD, or -1); report_fd gets "rank pid" per rank started
 * or "error MESSAGE". Returns the host's pid or -1; sets job->pgid first. */
pid_t lm_spawn_host(lm_spawn_job *job, const char *host_path, int count, const int *ranks, const int *locals,
                    const int (*fds)[4], int report_fd);

#endif
