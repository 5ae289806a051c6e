/* The commands of a spawn request (boot/kvs_wire.h, LM_REQ_SPAWN), as
 * mpirun and the launch agents read them: decoded in place, then resolved
 * where they run. */
#ifndef LM_LAUNCHER_SPAWN_REQUEST_H
#define LM_LAUNCHER_SPAWN_REQUEST_H
#include <limits.h>
#include <stddef.h>

typedef struct lm_spawn_cmd {
    int maxprocs, argc;
    const char *command, *wdir, *host; /* wdir, host: "" when not given */
    const char **args;                 /* the command, its arguments, NULL */
    char path[PATH_MAX];               /* the program to run (lm_spawn_cmds_resolve) */
} lm_spawn_cmd;

/* Decode the commands at [p, end): 0 with *cmds (lm_spawn_cmds_free it),
 * their number and the processes they ask for; -1 with why. */
int lm_spawn_cmds_decode(const char *p, const char *end, lm_spawn_cmd **cmds, int *count, int *total, char *why,
                         size_t whycap);
/* Find each command's program and check its working directory on this
 * host (named `host` in the reason, when given): 0, or -1 with why. */
int lm_spawn_cmds_resolve(lm_spawn_cmd *cmds, int count, const char *host, char *why, size_t whycap);
void lm_spawn_cmds_free(lm_spawn_cmd *cmds, int count);

#endif
