/* The hosts of a job across nodes: `--host a:2,b:2` and `--hostfile F`, and
 * where the ranks go. Ranks fill each host's slots in order (rank 0 on the
 * first host), so the layout is a block layout: every node but the last
 * holds the same number of ranks, which lets every rank compute any rank's
 * node by arithmetic (no table that grows with the job). */
#ifndef LM_LAUNCHER_HOSTS_H
#define LM_LAUNCHER_HOSTS_H

typedef struct lm_host {
    char *name;
    int slots;  /* from the host list; 1 when not given */
    int nranks; /* placed here */
} lm_host;

typedef struct lm_hostlist {
    int n;
    lm_host *h;
} lm_hostlist;

/* "a:2,b,c:4" -> hosts a (2 slots), b (1), c (4). Appends to hl. 0 or -1
 * with a message on stderr. */
int lm_hosts_parse_list(const char *prog, const char *spec, lm_hostlist *hl);
/* One host per line: "name", "name:N", "name slots=N" (max_slots= is
 * accepted and ignored), '#' starts a comment. Appends to hl. */
int lm_hosts_parse_file(const char *prog, const char *path, lm_hostlist *hl);
/* Place nranks ranks (0: one per slot). Fills nranks of each host, drops
 * hosts that get none and sets *ranks_per_node (the first host's count).
 * Refuses more ranks than slots without oversubscribe, and placements the
 * job layout cannot express (more than LM_LAYOUT_BLOCKS_MAX runs of hosts
 * with equal counts). */
int lm_hosts_place(const char *prog, lm_hostlist *hl, int *nranks, int oversubscribe, int *ranks_per_node);
int lm_hosts_total_slots(const lm_hostlist *hl);
/* Appends host name with slots; a bad name or a host listed twice is refused
 * with a message that starts "prog: where: ". 0 or -1. */
int lm_hosts_add(const char *prog, const char *where, lm_hostlist *hl, const char *name, int slots);
/* The index of host name in hl, or -1. */
int lm_hosts_find(const lm_hostlist *hl, const char *name);
/* Is this name the machine we run on ("localhost", or our host name)? */
int lm_host_is_local(const char *name);
void lm_hosts_free(lm_hostlist *hl);

#endif
