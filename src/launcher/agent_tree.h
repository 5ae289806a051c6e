/* Jobs across hosts: the job description that travels down the tree of
 * launch agents, the shape of that tree, and starting one agent.
 *
 * mpirun starts the agents of nodes 0..K-1 (K = --launch-fanout), and the
 * agent of node i starts those of nodes K(i+1) .. K(i+1)+K-1, each through
 * the launch template (ssh by default), so no process holds more than K
 * connections and startup takes log_K(hosts) rounds. Every frame goes up or
 * down this tree; an agent routes a frame for node d to its child whose
 * subtree holds d. */
#ifndef LM_LAUNCHER_AGENT_TREE_H
#define LM_LAUNCHER_AGENT_TREE_H
#include "agent_link.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LM_DEFAULT_LAUNCH_AGENT "ssh -x -o BatchMode=yes -o ConnectTimeout=5 {host}"
#define LM_DEFAULT_FANOUT 32

typedef struct lm_job_desc {
    const char *job_id;
    const char *cwd;          /* ranks start here */
    const char *path;         /* the program, resolved by mpirun */
    const char *agent_exe;    /* mpirun's own path: the agent is the same program */
    const char *launch_agent; /* template: {host} is replaced by the host name */
    int fanout;
    int world_size, reported_world_size, universe_size, ranks_per_node;
    int nhosts;
    const char **host_names;
    int *host_nranks;
    /* mpirun --rankfile: the host of each rank (world_size entries; NULL:
     * ranks fill the hosts in order) and the CPUs it is bound to (slot
     * text, or NULL; the array NULL when no rank is bound). */
    int32_t *rank_host;
    char **rank_cpus;
    int argc; /* program and its arguments */
    const char **argv;
    int nenv; /* "VAR=value" for every rank */
    const char **env;
    char *storage_; /* decode: what the pointers above point into */
} lm_job_desc;

/* The JOB frame's payload. The caller frees b->p. */
void lm_job_encode(const lm_job_desc *d, lm_wbuf *b);
/* Decodes a copy of payload; free with lm_job_desc_free. -1 if malformed. */
int lm_job_decode(const char *payload, size_t len, lm_job_desc *d);
void lm_job_desc_free(lm_job_desc *d);

/* Tree shape. v = -1 is mpirun. */
static inline int lm_tree_first_child(int v, int fanout) { return fanout * (v + 1); }
static inline int lm_tree_parent(int node, int fanout) { return node / fanout - 1; }
/* The child of v whose subtree holds node d, or -1 if d is not below v. */
int lm_tree_child_toward(int v, int d, int fanout);

/* Start the agent of `node` through the launch template (or directly when
 * the host is this machine), in a process group of its own and tied to our
 * life, and send it the job. On success *pid is the launch command's pid
 * and *link its control channel. -1 with a message in why[] otherwise. */
int lm_agent_start(const lm_job_desc *d, const void *job_payload, size_t job_len, int node, pid_t *pid, lm_link *link,
                   char *why, size_t why_cap);

/* The agents a process started (mpirun: those of nodes 0..K-1; the agent
 * of node v: those of its children). */
typedef struct lm_child_agent {
    int node;
    pid_t pid;  /* the launch command; 0 once reaped */
    int status; /* its wait status once reaped */
    lm_link link;
    int done; /* DONE received, or its loss handled */
} lm_child_agent;

typedef struct lm_subtree {
    int n;
    lm_child_agent *kids;
} lm_subtree;

/* Start the agents of v's children. On a failure: -1 and why[]; those
 * started so far stay (and the rest count as done). */
int lm_subtree_start(lm_subtree *t, const lm_job_desc *d, const void *job, size_t job_len, int v, char *why,
                     size_t why_cap);
/* The child whose subtree holds `node`, or NULL. */
lm_child_agent *lm_subtree_toward(lm_subtree *t, int v, int node, int fanout);
void lm_subtree_signal(lm_subtree *t, int sig); /* SIGNAL frame to every child */
/* A reaped pid: 1 if it was one of our launch commands. */
int lm_subtree_reaped(lm_subtree *t, pid_t pid, int status);
int lm_subtree_done(const lm_subtree *t);
/* A child's channel ended without DONE: mark it done and describe the loss
 * (waiting a moment for its exit status) in why[]. */
void lm_subtree_lost(lm_child_agent *c, const lm_job_desc *d, char *why, size_t why_cap);
/* Read what child c sent (POLLIN on its link) and hand every whole frame to
 * on_frame, which marks c done when its DONE comes. Returns 1 when c's
 * agent, or the link to it, went away before that (why: how, as
 * lm_subtree_lost says it), 0 otherwise. */
typedef void (*lm_frame_fn)(lm_child_agent *c, const lm_frame *f, const char *payload);
int lm_subtree_read(lm_child_agent *c, const lm_job_desc *d, lm_frame_fn on_frame, char *why, size_t why_cap);
/* End everything below: close the channels, SIGKILL the launch commands. */
void lm_subtree_kill(lm_subtree *t);
void lm_subtree_free(lm_subtree *t);

#endif
