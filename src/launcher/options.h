/* mpirun's command line. */
#ifndef LM_LAUNCHER_OPTIONS_H
#define LM_LAUNCHER_OPTIONS_H
#include "hosts.h"
#include "rankfile.h"

typedef struct lm_options {
    int nranks; /* -n/-np; 1 when absent (with hosts: one per slot) */
    int nranks_given;
    int reported_world_size;  /* --simulate-world-size; 0 = nranks */
    int universe_size;        /* --universe-size; 0 = the CPUs mpirun may use (at least the world) */
    int tag_output;           /* --tag-output */
    int oversubscribe;        /* --oversubscribe: more ranks than the hosts' slots */
    lm_hostlist hosts;        /* --host, --hostfile: empty = this node only */
    lm_rankfile rankfile;     /* --rankfile: n = 0 when not given */
    const char *launch_agent; /* --launch-agent template; NULL = ssh */
    int fanout;               /* --launch-fanout: agents each agent starts */
    double timeout_s;         /* --timeout; 0 = none */
    int shared_space;         /* --address-space (or LEANMPI_ADDRESS_SPACE): LM_SPACE_* */
    int space_ranks;          /* --address-space-ranks: ranks per address space (at most 15) */
    int nenv;                 /* -x / --env settings, each "VAR=value" */
    char **env;
    char **argv; /* program and its arguments (points into main's argv) */
} lm_options;

enum { LM_OPTS_RUN = 0, LM_OPTS_EXIT_OK = 1, LM_OPTS_ERROR = -1 };
/* --address-space: a process per rank, ranks of this node in one address
 * space, or that where the program can be loaded once per rank */
enum { LM_SPACE_SEPARATE, LM_SPACE_SHARED, LM_SPACE_AUTO };
/* glibc's 16 link-map namespaces: one for the host, one per rank */
#define LM_SPACE_RANKS_MAX 15

/* Parses argv; prints help/version (LM_OPTS_EXIT_OK) or a message on stderr
 * (LM_OPTS_ERROR). prog is the name messages start with. */
int lm_options_parse(const char *prog, int argc, char **argv, lm_options *o);
void lm_options_free(lm_options *o);

#endif
