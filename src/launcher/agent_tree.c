/* The job description, the tree of launch agents and starting one agent. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include "agent_tree.h"
#include "hosts.h"
#include "boot/node_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void lm_job_encode(const lm_job_desc *d, lm_wbuf *b)
{
    lm_wbuf_str(b, d->job_id);
    lm_wbuf_str(b, d->cwd);
    lm_wbuf_str(b, d->path);
    lm_wbuf_str(b, d->agent_exe);
    lm_wbuf_str(b, d->launch_agent);
    lm_wbuf_int(b, d->fanout);
    lm_wbuf_int(b, d->world_size);
    lm_wbuf_int(b, d->reported_world_size);
    lm_wbuf_int(b, d->universe_size);
    lm_wbuf_int(b, d->ranks_per_node);
    lm_wbuf_int(b, d->nhosts);
    for (int i = 0; i < d->nhosts; i++) {
        lm_wbuf_str(b, d->host_names[i]);
        lm_wbuf_int(b, d->host_nranks[i]);
    }
    lm_wbuf_int(b, d->argc);
    for (int i = 0; i < d->argc; i++) lm_wbuf_str(b, d->argv[i]);
    lm_wbuf_int(b, d->nenv);
    for (int i = 0; i < d->nenv; i++) lm_wbuf_str(b, d->env[i]);
    lm_wbuf_int(b, d->rank_host ? d->world_size : 0);
    for (int r = 0; d->rank_host && r < d->world_size; r++) {
        lm_wbuf_int(b, d->rank_host[r]);
        lm_wbuf_str(b, d->rank_cpus && d->rank_cpus[r] ? d->rank_cpus[r] : "");
    }
}

/* The rankfile's placement: a host for every rank, as many on each host as
 * host_nranks says. */
static int decode_placement(lm_rbuf *b, lm_job_desc *d)
{
    int64_t n = lm_rbuf_int(b);
    if (n == 0) return 0;
    if (n != d->world_size) return -1;
    d->rank_host = calloc((size_t)n, sizeof *d->rank_host);
    d->rank_cpus = calloc((size_t)n, sizeof *d->rank_cpus);
    int *counts = calloc((size_t)d->nhosts, sizeof *counts);
    int rc = d->rank_host && d->rank_cpus && counts ? 0 : -1;
    for (int r = 0; r < n && rc == 0; r++) {
        int64_t h = lm_rbuf_int(b);
        d->rank_host[r] = h >= 0 && h < d->nhosts ? (int32_t)h : -1;
        char *cpus = (char *)lm_rbuf_str(b);
        d->rank_cpus[r] = cpus && *cpus ? cpus : NULL;
    }
    if (rc == 0 && (b->failed || lm_placement_counts(d->rank_host, d->world_size, d->nhosts, counts) != 0)) rc = -1;
    for (int i = 0; i < d->nhosts && rc == 0; i++)
        if (counts[i] != d->host_nranks[i]) rc = -1;
    free(counts);
    return rc;
}

static int count_ok(int64_t v, size_t len) { return v >= 0 && (uint64_t)v <= len; }

int lm_job_decode(const char *payload, size_t len, lm_job_desc *d)
{
    memset(d, 0, sizeof *d);
    d->storage_ = malloc(len ? len : 1);
    if (!d->storage_) return -1;
    memcpy(d->storage_, payload, len);
    lm_rbuf b = {.p = d->storage_, .len = len};
    d->job_id = lm_rbuf_str(&b);
    d->cwd = lm_rbuf_str(&b);
    d->path = lm_rbuf_str(&b);
    d->agent_exe = lm_rbuf_str(&b);
    d->launch_agent = lm_rbuf_str(&b);
    d->fanout = (int)lm_rbuf_int(&b);
    d->world_size = (int)lm_rbuf_int(&b);
    d->reported_world_size = (int)lm_rbuf_int(&b);
    d->universe_size = (int)lm_rbuf_int(&b);
    d->ranks_per_node = (int)lm_rbuf_int(&b);
    int64_t n = lm_rbuf_int(&b);
    if (!count_ok(n, len) || n < 1) goto free_desc;
    d->nhosts = (int)n;
    d->host_names = calloc((size_t)n, sizeof *d->host_names);
    d->host_nranks = calloc((size_t)n, sizeof *d->host_nranks);
    if (!d->host_names || !d->host_nranks) goto free_desc;
    for (int i = 0; i < d->nhosts; i++) {
        d->host_names[i] = lm_rbuf_str(&b);
        d->host_nranks[i] = (int)lm_rbuf_int(&b);
    }
    n = lm_rbuf_int(&b);
    if (!count_ok(n, len) || n < 1) goto free_desc;
    d->argc = (int)n;
    d->argv = calloc((size_t)n + 1, sizeof *d->argv); /* NULL-terminated for exec */
    if (!d->argv) goto free_desc;
    for (int i = 0; i < d->argc; i++) d->argv[i] = lm_rbuf_str(&b);
    n = lm_rbuf_int(&b);
    if (!count_ok(n, len)) goto free_desc;
    d->nenv = (int)n;
    d->env = calloc((size_t)n + 1, sizeof *d->env);
    if (!d->env) goto free_desc;
    for (int i = 0; i < d->nenv; i++) d->env[i] = lm_rbuf_str(&b);
    if (b.failed || d->fanout < 1 || d->world_size < 1 || d->ranks_per_node < 1) goto free_desc;
    if (decode_placement(&b, d) != 0) goto free_desc;
    return 0;
free_desc:
    lm_job_desc_free(d);
    return -1;
}

void lm_job_desc_free(lm_job_desc *d)
{
    free(d->host_names);
    free(d->host_nranks);
    free(d->rank_host);
    free(d->rank_cpus);
    free(d->argv);
    free(d->env);
    free(d->storage_);
    memset(d, 0, sizeof *d);
}

int lm_tree_child_toward(int v, int d, int fanout)
{
    while (d >= 0) {
        int p = lm_tree_parent(d, fanout);
        if (p == v) return d;
        d = p;
    }
    return -1;
}

/* sh -c command: the template with {host} replaced (or the host appended),
 * then the agent: '<exe>' --lm-agent. */
static char *launch_command(const char *tmpl, const char *host, const char *exe)
{
    size_t cap = strlen(tmpl) * 2 + strlen(host) * 8 + strlen(exe) * 4 + 64;
    char *cmd = malloc(cap), *o = cmd;
    if (!cmd) return NULL;
    int replaced = 0;
    for (const char *p = tmpl; *p;) {
        if (strncmp(p, "{host}", 6) == 0 && (size_t)(o - cmd) + strlen(host) < cap - 1) {
            o += sprintf(o, "%s", host);
            p += 6;
            replaced = 1;
        } else {
            *o++ = *p++;
        }
    }
    if (!replaced) o += sprintf(o, " %s", host);
    *o++ = ' ';
    *o++ = '\'';
    for (const char *p = exe; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    o += sprintf(o, "' --lm-agent");
    return cmd;
}

/* In the child: never returns. */
static void exec_agent(const lm_job_desc *d, const char *host, const char *cmd, pid_t parent, int in, int out)
{
    setpgid(0, 0); /* the terminal's signals reach mpirun only; it ends the job in order */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    if (cmd) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    } else {
        execl(d->agent_exe, d->agent_exe, "--lm-agent", (char *)NULL);
    }
    fprintf(stderr, "mpirun: cannot start the launch agent for %s: %s\n", host, strerror(errno));
    _exit(127);
}

int lm_agent_start(const lm_job_desc *d, const void *job_payload, size_t job_len, int node, pid_t *pid, lm_link *link,
                   char *why, size_t why_cap)
{
    const char *host = d->host_names[node];
    char *cmd = NULL;
    if (!lm_host_is_local(host)) {
        cmd = launch_command(d->launch_agent, host, d->agent_exe);
        if (!cmd) {
            snprintf(why, why_cap, "out of memory starting the agent of host %s", host);
            return -1;
        }
    }
    int down[2], up[2];
    if (pipe2(down, O_CLOEXEC) != 0) goto free_cmd;
    if (pipe2(up, O_CLOEXEC) != 0) {
        close(down[0]);
        close(down[1]);
        goto free_cmd;
    }
    pid_t me = getpid();
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) exec_agent(d, host, cmd, me, down[0], up[1]);
    int saved = errno;
    close(down[0]);
    close(up[1]);
    free(cmd);
    if (p < 0) {
        close(down[1]);
        close(up[0]);
        snprintf(why, why_cap, "cannot start the launch agent for host %s: %s", host, strerror(saved));
        return -1;
    }
    fcntl(down[1], F_SETFL, O_NONBLOCK);
    fcntl(up[0], F_SETFL, O_NONBLOCK);
    lm_link_init(link, up[0], down[1]);
    *pid = p;
    /* If the agent is already gone the failure shows as the link's end. */
    lm_link_send(link, LM_FRAME_JOB, node, -1, 0, job_payload, job_len);
    return 0;
free_cmd: /* no pipes */
    snprintf(why, why_cap, "cannot create pipes for the agent of host %s: %s", host, strerror(errno));
    free(cmd);
    return -1;
}

int lm_subtree_start(lm_subtree *t, const lm_job_desc *d, const void *job, size_t job_len, int v, char *why,
                     size_t why_cap)
{
    int first = lm_tree_first_child(v, d->fanout);
    int n = 0;
    for (int c = first; c < first + d->fanout && c < d->nhosts; c++) n++;
    t->n = 0;
    t->kids = n ? calloc((size_t)n, sizeof *t->kids) : NULL;
    if (n && !t->kids) {
        snprintf(why, why_cap, "out of memory starting launch agents");
        return -1;
    }
    t->n = n;
    for (int k = 0; k < n; k++) {
        lm_child_agent *c = &t->kids[k];
        c->node = first + k;
        lm_link_init(&c->link, -1, -1);
        c->done = 1; /* until it is started */
    }
    for (int k = 0; k < n; k++) {
        lm_child_agent *c = &t->kids[k];
        if (lm_agent_start(d, job, job_len, c->node, &c->pid, &c->link, why, why_cap) != 0) return -1;
        c->done = 0;
    }
    return 0;
}

lm_child_agent *lm_subtree_toward(lm_subtree *t, int v, int node, int fanout)
{
    int c = lm_tree_child_toward(v, node, fanout);
    for (int k = 0; k < t->n; k++)
        if (t->kids[k].node == c) return &t->kids[k];
    return NULL;
}

void lm_subtree_signal(lm_subtree *t, int sig)
{
    for (int k = 0; k < t->n; k++) lm_link_send(&t->kids[k].link, LM_FRAME_SIGNAL, -1, -1, sig, NULL, 0);
}

int lm_subtree_reaped(lm_subtree *t, pid_t pid, int status)
{
    for (int k = 0; k < t->n; k++)
        if (t->kids[k].pid == pid) {
            t->kids[k].pid = 0; /* its channel's end tells the rest */
            t->kids[k].status = status;
            return 1;
        }
    return 0;
}

int lm_subtree_done(const lm_subtree *t)
{
    for (int k = 0; k < t->n; k++)
        if (!t->kids[k].done) return 0;
    return 1;
}

void lm_subtree_lost(lm_child_agent *c, const lm_job_desc *d, char *why, size_t why_cap)
{
    c->done = 1;
    int heard = c->link.frames_in > 0;
    lm_link_close(&c->link);
    for (int i = 0; i < 200 && c->pid > 0; i++) {
        if (waitpid(c->pid, &c->status, WNOHANG) == c->pid) c->pid = 0;
        else nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    const char *host = d->host_names[c->node];
    int st = c->status;
    if (c->pid == 0 && WIFEXITED(st) && !heard)
        snprintf(why, why_cap, "host %s: the launch command ended with status %d before the agent started%s", host,
                 WEXITSTATUS(st),
                 WEXITSTATUS(st) == 255   ? " (could it reach the host?)"
                 : WEXITSTATUS(st) == 127 ? " (is mpirun installed at the same path there?)"
                                          : "");
    else if (c->pid == 0 && WIFEXITED(st))
        snprintf(why, why_cap, "host %s: the launch agent ended with status %d before its ranks did%s", host,
                 WEXITSTATUS(st), WEXITSTATUS(st) == 255 ? " (could the launch command reach the host?)" : "");
    else if (c->pid == 0 && WIFSIGNALED(st))
        snprintf(why, why_cap, "host %s: the launch agent was killed by signal %d", host, WTERMSIG(st));
    else snprintf(why, why_cap, "host %s: lost the connection to the launch agent", host);
}

int lm_subtree_read(lm_child_agent *c, const lm_job_desc *d, lm_frame_fn on_frame, char *why, size_t why_cap)
{
    int eof = lm_link_read(&c->link) != 0;
    lm_frame f;
    const char *p;
    while (lm_link_next(&c->link, &f, &p)) on_frame(c, &f, p);
    if (eof && !c->done) {
        lm_subtree_lost(c, d, why, why_cap);
        return 1;
    }
    if (eof) lm_link_close(&c->link);
    return 0;
}

void lm_subtree_kill(lm_subtree *t)
{
    for (int k = 0; k < t->n; k++) {
        lm_link_close(&t->kids[k].link);
        if (t->kids[k].pid > 0) kill(-t->kids[k].pid, SIGKILL);
    }
}

void lm_subtree_free(lm_subtree *t)
{
    for (int k = 0; k < t->n; k++) lm_link_close(&t->kids[k].link);
    free(t->kids);
    t->kids = NULL;
    t->n = 0;
}
