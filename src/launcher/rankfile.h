/* mpirun --rankfile F: where each rank runs, rank by rank, in Open MPI's
 * rankfile syntax (what leanmpi-map --format openmpi writes):
 *
 *   rank 0=hostA slot=0
 *   rank 1=hostB slot=1-2     # the rank may run on CPUs 1 and 2 of hostB
 *
 * Every rank of the job has one line. The host names the node; slot= (or
 * slots=) binds the rank to those CPUs, counted from 0 among the CPUs the
 * launcher may use on that host (a list of numbers and ranges); a line
 * without slot= leaves the rank unbound. Open MPI's socket:core slots and
 * relative hosts (+n0) are refused with a message, not misread. */
#ifndef LM_LAUNCHER_RANKFILE_H
#define LM_LAUNCHER_RANKFILE_H
#include "hosts.h"

#include <stdint.h>

typedef struct lm_rankfile {
    int n;         /* ranks: lines given, rank 0 .. n-1 each once */
    int32_t *host; /* by rank: index in the host list */
    char **cpus;   /* by rank: the slot= text, or NULL (unbound) */
} lm_rankfile;

/* Reads path. With hosts already listed (--host, --hostfile) every host it
 * names must be one of them and its ranks fit the host's slots unless
 * oversubscribe; otherwise its hosts, in the order first named, become the
 * list with as many slots as ranks. Sets each host's nranks and drops
 * hosts left without ranks. 0, or -1 with a message on stderr. */
int lm_rankfile_read(const char *prog, const char *path, lm_hostlist *hl, int oversubscribe, lm_rankfile *rf);
void lm_rankfile_free(lm_rankfile *rf);

#endif
