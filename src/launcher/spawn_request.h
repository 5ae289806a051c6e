/* The commands of a spawn request (boot/kvs_wire.h, LM_REQ_SPAWN), as
 * mpirun and the launch agents read them: decoded in place, then resolved
 * where they run. */
#ifndef LM_LAUNCHER_SPAWN_REQUEST_H
#define LM_LAUNCHER_SPAWN_REQUEST_H
#include <limits.h>
#include <stddef.h>
#include "boot/kvs_wire.h"
#include "spawn.h"

typedef struct lm_spawn_cmd {
    int maxprocs, argc;
    const char *command, *wdir, *host; /* wdir, host: "" when not given */
    const char **args;                 /* the command, its arguments, NULL */
    char path[PATH_MAX];               /* the program to run (lm_spawn_cmds_resolve) */
} lm_spawn_cmd;

/* Across hosts, the part of a spawned job that one host starts (the head
 * of the SPAWN frame's payload): ranks first .. first + count - 1, as node
 * `node` of the job's `nodes`, which hold per_node consecutive ranks each
 * (the last fewer). */
typedef struct lm_spawn_part {
    int32_t first, count, node, nodes, per_node, pad;
} lm_spawn_part;

/* Decode the commands at [p, end): 0 with *cmds (lm_spawn_cmds_free it),
 * their number and the processes they ask for; -1 with why. */
int lm_spawn_cmds_decode(const char *p, const char *end, lm_spawn_cmd **cmds, int *count, int *total, char *why,
                         size_t whycap);
/* Find each command's program and check its working directory on this
 * host (named `host` in the reason, when given): 0, or -1 with why. */
int lm_spawn_cmds_resolve(lm_spawn_cmd *cmds, int count, const char *host, char *why, size_t whycap);
void lm_spawn_cmds_free(lm_spawn_cmd *cmds, int count);

/* The environment of a spawned job's processes: the launcher's own extra
 * settings (-x), then LEANMPI_JOB_NUM, LEANMPI_PARENT_PORT and, per
 * command, LEANMPI_APPNUM. */
typedef struct lm_spawn_env {
    char **env;
    int nbase;
    char jobnum[48], parent[LM_CTL_TEXT_MAX + 32], appnum[48];
} lm_spawn_env;

/* 0, or -1 out of memory. */
int lm_spawn_env_init(lm_spawn_env *e, char *const *base, int nbase, int job, const char *port);
/* Fill what command c (the appnum-th) sets in spec: program, arguments,
 * environment, working directory; the job's fields are the caller's. */
void lm_spawn_env_command(lm_spawn_env *e, const lm_spawn_cmd *c, int appnum, lm_spawn_job *spec);
void lm_spawn_env_free(lm_spawn_env *e);

#endif
