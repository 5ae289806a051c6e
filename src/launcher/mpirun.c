/* mpirun / mpiexec: starts the ranks of a job on this node, or across hosts
 * through a tree of launch agents (agent.c, agent_tree.h), and owns the job
 * until its end.
 *
 * One thread, one poll loop, no busy waiting: signals arrive through a
 * signalfd (SIGCHLD included), rank output through pipes, and the only
 * timers (--timeout, the SIGTERM->SIGKILL grace) become poll timeouts.
 *
 * The first failure decides the job's fate: a rank that calls MPI_Abort,
 * dies by a signal, exits non-zero, or exits 0 after MPI_Init without
 * MPI_Finalize. mpirun then sends SIGTERM to the job's process group and
 * SIGKILL after TERM_GRACE_S, reports that first failure in one line and
 * exits with a status derived from it (see --help). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, memrchr */
#endif
#include "boot/node_segment.h"
#include "transport/shm_layout.h"
#include "agent.h"
#include "agent_tree.h"
#include "find_program.h"
#include "options.h"
#include "output_forward.h"
#include "rank_exit.h"
#include "signal_names.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TERM_GRACE_S 0.5 /* SIGTERM -> SIGKILL: well inside the 2 s teardown rule */
#define KILL_WAIT_S 5.0  /* after SIGKILL, stop waiting for unkillable processes */
#define STDIN_BUF (64 * 1024)

enum cause {
    CAUSE_NONE,
    CAUSE_ABORT,
    CAUSE_SIGNAL,
    CAUSE_EXIT,
    CAUSE_NO_FINALIZE,
    CAUSE_TIMEOUT,
    CAUSE_INTERRUPT,
    CAUSE_LAUNCH,
    CAUSE_AGENT /* a launch agent failed or was lost: agent_message says how */
};

typedef struct rank_proc {
    pid_t pid; /* 0 once reaped (across hosts: -1 while running, pid known at its end) */
    lm_outstream out, err;
} rank_proc;

static const char *g_prog = "mpirun";

static struct job {
    int n;
    rank_proc *ranks;
    int alive;
    pid_t pgid;
    lm_node_segment *seg; /* one node: the job's segment (across hosts the agents hold them) */
    int seg_fd;
    /* across hosts */
    int multi;
    lm_job_desc desc;
    lm_subtree agents;
    /* first failure */
    enum cause cause;
    int cause_rank, cause_value, exit_status;
    pid_t cause_pid;
    char abort_message[256];
    char agent_message[512];
    double timeout_s; /* --timeout, 0 = none */
    double deadline;  /* when --timeout expires (monotonic) */
    /* teardown */
    int tearing_down;
    double kill_at, give_up_at;
    int killed;
    /* stdin of rank 0 */
    int stdin_open; /* still reading mpirun's stdin */
    int stdin_pipe; /* write end towards rank 0, or -1 */
    char inbuf[STDIN_BUF];
    size_t in_len, in_off;
} J;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void signal_job(int sig)
{
    if (J.multi) lm_subtree_signal(&J.agents, sig);
    else if (J.pgid > 0) kill(-J.pgid, sig);
}

static void begin_teardown(int first_signal)
{
    if (J.tearing_down) return;
    J.tearing_down = 1;
    signal_job(first_signal);
    J.kill_at = now_s() + TERM_GRACE_S;
    J.give_up_at = J.kill_at + KILL_WAIT_S;
}

static void kill_now(void)
{
    signal_job(SIGKILL);
    J.killed = 1;
}

static void set_cause(enum cause c, int rank, int value, int status)
{
    if (J.cause != CAUSE_NONE) return;
    J.cause = c;
    J.cause_rank = rank;
    J.cause_pid = (rank >= 0 && rank < J.n) ? J.ranks[rank].pid : 0;
    J.cause_value = value;
    J.exit_status = status;
}

static int abort_status(int errorcode)
{
    if (errorcode <= 0) return 1;
    return errorcode > 255 ? 255 : errorcode;
}

/* Rank r ended as x says: the first abnormal end decides the job's fate. */
static void rank_ended(int r, const lm_exit_wire *x)
{
    if (J.tearing_down) return; /* what happens to ranks now is our doing */
    int status = x->wait_status;
    if (x->abort_claimed) {
        int complete = x->abort_claimed == 2;
        int code = complete ? x->abort_code : 1;
        if (complete) snprintf(J.abort_message, sizeof J.abort_message, "%s", x->abort_message);
        set_cause(CAUSE_ABORT, complete ? x->abort_rank : r, code, abort_status(code));
    } else if (WIFSIGNALED(status)) {
        set_cause(CAUSE_SIGNAL, r, WTERMSIG(status), 128 + WTERMSIG(status));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        set_cause(CAUSE_EXIT, r, WEXITSTATUS(status), WEXITSTATUS(status));
    } else if (x->state == LM_RANK_INITIALIZED) {
        set_cause(CAUSE_NO_FINALIZE, r, 0, 1);
    } else {
        return; /* a normal end */
    }
    begin_teardown(SIGTERM);
}

static void rank_gone(int r)
{
    J.ranks[r].pid = 0;
    J.alive--;
    if (r == 0 && J.stdin_pipe >= 0) { /* nobody left to read it */
        close(J.stdin_pipe);
        J.stdin_pipe = -1;
    }
    if (r == 0) J.stdin_open = 0;
}

static void reap(void)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) return;
        if (J.multi) {
            lm_subtree_reaped(&J.agents, pid, status);
            continue;
        }
        for (int r = 0; r < J.n; r++) {
            if (J.ranks[r].pid != pid) continue;
            lm_exit_wire x;
            lm_rank_exit_read(J.seg, r, pid, status, &x);
            rank_ended(r, &x);
            rank_gone(r);
            break;
        }
    }
}

static void on_signal(int sig)
{
    switch (sig) {
    case SIGCHLD: reap(); break;
    case SIGUSR1:
    case SIGUSR2: signal_job(sig); break;
    default: /* SIGINT, SIGTERM, SIGHUP, SIGQUIT */
        if (J.tearing_down && J.cause == CAUSE_INTERRUPT) {
            kill_now(); /* asked twice: do not wait for the grace period */
        } else {
            set_cause(CAUSE_INTERRUPT, -1, sig, 128 + sig);
            begin_teardown(SIGTERM);
        }
        break;
    }
}

static void pump_stdin(short revents_in, short revents_out)
{
    if (revents_in && J.in_len == 0) {
        ssize_t r = read(0, J.inbuf, sizeof J.inbuf);
        if (r > 0) {
            J.in_len = (size_t)r;
            J.in_off = 0;
        } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
            J.stdin_open = 0;
        }
    }
    if (revents_out && J.in_len) {
        ssize_t w = write(J.stdin_pipe, J.inbuf + J.in_off, J.in_len - J.in_off);
        if (w > 0) {
            J.in_off += (size_t)w;
            if (J.in_off == J.in_len) J.in_len = J.in_off = 0;
        } else if (w < 0 && errno != EINTR && errno != EAGAIN) {
            /* Rank 0 closed its stdin: stop reading ours. */
            J.in_len = 0;
            J.stdin_open = 0;
        }
    }
    if (!J.stdin_open && J.in_len == 0 && J.stdin_pipe >= 0) {
        close(J.stdin_pipe); /* rank 0 sees end of file */
        J.stdin_pipe = -1;
    }
}

/* Across hosts rank 0's stdin travels as STDIN frames, one chunk in flight
 * at a time (J.in_len is its size until the agent acknowledges it), so a
 * rank that does not read cannot make anyone buffer without bound. */
static void pump_stdin_remote(void)
{
    lm_child_agent *c = lm_subtree_toward(&J.agents, -1, 0, J.desc.fanout);
    ssize_t r = read(0, J.inbuf, sizeof J.inbuf);
    if (r > 0) {
        J.in_len = (size_t)r;
        if (c) lm_link_send(&c->link, LM_FRAME_STDIN, 0, -1, 0, J.inbuf, (size_t)r);
    } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        J.stdin_open = 0;
        if (c) lm_link_send(&c->link, LM_FRAME_STDIN, 0, -1, 0, NULL, 0);
    }
}

static void agent_failed(const char *why)
{
    if (J.cause == CAUSE_NONE) snprintf(J.agent_message, sizeof J.agent_message, "%s", why);
    set_cause(CAUSE_AGENT, -1, 0, 1);
    begin_teardown(SIGTERM);
}

static void from_agent(lm_child_agent *c, const lm_frame *f, const char *p)
{
    int r = f->rank;
    int rank_ok = r >= 0 && r < J.n;
    switch (f->type) {
    case LM_FRAME_OUT:
        if (rank_ok && (f->value == 1 || f->value == 2))
            lm_out_feed(f->value == 1 ? &J.ranks[r].out : &J.ranks[r].err, p, f->len);
        break;
    case LM_FRAME_EXIT:
        if (rank_ok && J.ranks[r].pid != 0 && f->len == sizeof(lm_exit_wire)) {
            lm_exit_wire x;
            memcpy(&x, p, sizeof x);
            x.abort_message[sizeof x.abort_message - 1] = '\0';
            J.ranks[r].pid = x.pid;
            rank_ended(r, &x);
            rank_gone(r);
        }
        break;
    case LM_FRAME_STDIN_ACK: J.in_len = 0; break;
    case LM_FRAME_FAIL: agent_failed(f->len && p[f->len - 1] == '\0' ? p : "a launch agent failed"); break;
    case LM_FRAME_DONE:
        if (f->node == c->node) c->done = 1;
        break;
    case LM_FRAME_KVS_GET: /* between hosts in different subtrees: pass it down again */
    case LM_FRAME_KVS_VALUE: {
        lm_child_agent *to = lm_subtree_toward(&J.agents, -1, f->node, J.desc.fanout);
        if (to) lm_link_send(&to->link, f->type, f->node, f->rank, f->value, p, f->len);
        break;
    }
    default: break;
    }
}

static int lm_min_int(int a, int b) { return a < b ? a : b; }

static void report(void)
{
    char pidbuf[320] = "";
    if (J.cause_pid > 0 && J.multi && J.cause_rank >= 0 && J.desc.ranks_per_node > 0)
        snprintf(pidbuf, sizeof pidbuf, " (pid %d on host %s)", (int)J.cause_pid,
                 J.desc.host_names[lm_min_int(J.cause_rank / J.desc.ranks_per_node, J.desc.nhosts - 1)]);
    else if (J.cause_pid > 0) snprintf(pidbuf, sizeof pidbuf, " (pid %d)", (int)J.cause_pid);
    switch (J.cause) {
    case CAUSE_NONE:
    case CAUSE_LAUNCH: break;
    case CAUSE_AGENT: fprintf(stderr, "%s: %s\n", g_prog, J.agent_message); break;
    case CAUSE_ABORT: {
        const char *msg = J.abort_message;
        fprintf(stderr, "%s: rank %d called MPI_Abort with error code %d%s%s\n", g_prog, J.cause_rank, J.cause_value,
                msg[0] ? ": " : "", msg);
        break;
    }
    case CAUSE_SIGNAL:
        fprintf(stderr, "%s: rank %d%s was killed by signal %d (%s: %s)\n", g_prog, J.cause_rank, pidbuf, J.cause_value,
                lm_signal_abbrev(J.cause_value), strsignal(J.cause_value));
        break;
    case CAUSE_EXIT:
        fprintf(stderr, "%s: rank %d%s exited with status %d\n", g_prog, J.cause_rank, pidbuf, J.cause_value);
        break;
    case CAUSE_NO_FINALIZE:
        fprintf(stderr,
                "%s: rank %d%s exited with status 0 after MPI_Init without calling "
                "MPI_Finalize\n",
                g_prog, J.cause_rank, pidbuf);
        break;
    case CAUSE_TIMEOUT:
        fprintf(stderr, "%s: the job ran longer than --timeout %g seconds; it was ended\n", g_prog, J.timeout_s);
        break;
    case CAUSE_INTERRUPT:
        fprintf(stderr, "%s: received %s; the job was ended\n", g_prog, lm_signal_abbrev(J.cause_value));
        break;
    }
    if (J.cause != CAUSE_NONE && J.cause != CAUSE_INTERRUPT && J.n > 1 && J.cause != CAUSE_LAUNCH)
        fprintf(stderr, "%s: the other ranks were ended\n", g_prog);
}

/* MPI_UNIVERSE_SIZE: what --universe-size says, else the slots this node
 * offers (the CPUs mpirun may run on, as Open MPI counts them), and never
 * less than MPI_COMM_WORLD. */
static int node_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

static int universe_size(const lm_options *o)
{
    if (o->universe_size) return o->universe_size;
    int slots = node_cpus();
    if (slots < 1) slots = 1;
    return slots > o->reported_world_size ? slots : o->reported_world_size;
}

static void raise_fd_limit(int n)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)(2 * n + 64)) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int nonblocking_pipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC) != 0) return -1;
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    return 0;
}

/* Forward our stdin only if we have one, and not from a terminal we are in
 * the background of: reading it would stop us (SIGTTIN) and with us the
 * whole job. */
static int have_stdin(void) { return fcntl(0, F_GETFD) >= 0 && !(isatty(0) && tcgetpgrp(0) != getpgrp()); }

/* Start every rank. On failure the ranks already started are ended. */
static int launch(const lm_options *o, const char *path, const char *job_id)
{
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int in_pipe[2] = {-1, -1};
    if (have_stdin() && pipe2(in_pipe, O_CLOEXEC) == 0) {
        fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
        J.stdin_pipe = in_pipe[1];
        J.stdin_open = 1;
    }
    lm_spawn_job sj = {.path = path,
                       .argv = o->argv,
                       .env = o->env,
                       .nenv = o->nenv,
                       .segment_fd = J.seg_fd,
                       .job_id = job_id,
                       .world_size = o->nranks,
                       .local_size = o->nranks,
                       .pgid = 0};
    int rc = 0;
    for (int r = 0; r < J.n; r++) {
        int out[2], err[2];
        if (nonblocking_pipe(out) != 0) {
            fprintf(stderr, "%s: cannot create pipes for rank %d: %s\n", g_prog, r, strerror(errno));
            rc = -1;
            break;
        }
        if (nonblocking_pipe(err) != 0) {
            fprintf(stderr, "%s: cannot create pipes for rank %d: %s\n", g_prog, r, strerror(errno));
            close(out[0]);
            close(out[1]);
            rc = -1;
            break;
        }
        int in = (r == 0 && in_pipe[0] >= 0) ? in_pipe[0] : devnull;
        pid_t pid = lm_spawn_rank(&sj, r, r, in, out[1], err[1], -1);
        int saved = errno;
        close(out[1]);
        close(err[1]);
        lm_out_init(&J.ranks[r].out, out[0], 1, r);
        lm_out_init(&J.ranks[r].err, err[0], 2, r);
        if (pid < 0) {
            fprintf(stderr, "%s: cannot start rank %d: %s\n", g_prog, r, strerror(saved));
            rc = -1;
            break;
        }
        J.ranks[r].pid = pid;
        J.alive++;
        J.pgid = sj.pgid;
    }
    if (in_pipe[0] >= 0) close(in_pipe[0]);
    if (devnull >= 0) close(devnull);
    if (rc != 0) {
        set_cause(CAUSE_LAUNCH, -1, 0, 1);
        begin_teardown(SIGKILL);
    }
    return rc;
}

/* Across hosts: start the agents of the top of the tree and give them the
 * job; they start the rest. */
static void launch_agents(const lm_options *o, const char *path, const char *job_id)
{
    static char cwd[PATH_MAX], exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0 || !getcwd(cwd, sizeof cwd)) {
        agent_failed("cannot find mpirun's own path or the working directory");
        return;
    }
    exe[len] = '\0';
    const lm_hostlist *hl = &o->hosts;
    lm_job_desc *d = &J.desc;
    *d = (lm_job_desc){.job_id = job_id,
                       .cwd = cwd,
                       .path = path,
                       .agent_exe = exe,
                       .launch_agent = o->launch_agent ? o->launch_agent : LM_DEFAULT_LAUNCH_AGENT,
                       .fanout = o->fanout ? o->fanout : LM_DEFAULT_FANOUT,
                       .world_size = o->nranks,
                       .reported_world_size = o->reported_world_size,
                       .ranks_per_node = hl->h[0].nranks,
                       .nhosts = hl->n};
    int slots = lm_hosts_total_slots(hl);
    d->universe_size = o->universe_size ? o->universe_size
                                        : (slots > o->reported_world_size ? slots : o->reported_world_size);
    d->host_names = calloc((size_t)hl->n, sizeof *d->host_names);
    d->host_nranks = calloc((size_t)hl->n, sizeof *d->host_nranks);
    for (d->argc = 0; o->argv[d->argc]; d->argc++) continue;
    d->argv = (const char **)o->argv;
    d->nenv = o->nenv;
    d->env = (const char **)o->env;
    if (!d->host_names || !d->host_nranks) {
        agent_failed("out of memory");
        return;
    }
    for (int i = 0; i < hl->n; i++) {
        d->host_names[i] = hl->h[i].name;
        d->host_nranks[i] = hl->h[i].nranks;
    }
    for (int r = 0; r < J.n; r++) {
        J.ranks[r].pid = -1;
        lm_out_init(&J.ranks[r].out, -1, 1, r);
        lm_out_init(&J.ranks[r].err, -1, 2, r);
    }
    J.alive = J.n;
    J.stdin_open = have_stdin();
    lm_wbuf job = {0};
    lm_job_encode(d, &job);
    char why[512];
    if (job.failed) agent_failed("out of memory");
    else if (lm_subtree_start(&J.agents, d, job.p, job.len, -1, why, sizeof why) != 0) agent_failed(why);
    free(job.p);
}

static int poll_timeout_ms(void)
{
    double next = -1, t = now_s();
    if (J.tearing_down) next = J.killed ? J.give_up_at : J.kill_at;
    else if (J.timeout_s > 0) next = J.deadline;
    if (next < 0) return -1;
    double ms = (next - t) * 1000.0;
    return ms <= 0 ? 0 : (int)(ms + 1);
}

static int job_running(void) { return J.multi ? !lm_subtree_done(&J.agents) : J.alive > 0; }

static void run(const lm_options *o, int sfd)
{
    int nfds_max = 3 + 2 * J.n + 2 * J.agents.n + 1;
    struct pollfd *pfd = calloc((size_t)nfds_max, sizeof *pfd);
    void **who = calloc((size_t)nfds_max, sizeof *who);
    if (!pfd || !who) {
        fprintf(stderr, "%s: out of memory\n", g_prog);
        set_cause(CAUSE_LAUNCH, -1, 0, 1);
        begin_teardown(SIGKILL);
        kill_now();
    }
    J.timeout_s = o->timeout_s;
    if (J.timeout_s > 0) J.deadline = now_s() + J.timeout_s;

    while (job_running() && pfd) {
        int n = 0, in_idx = -1, pipe_idx = -1;
        pfd[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
        if (J.stdin_open && J.in_len == 0) {
            in_idx = n;
            pfd[n++] = (struct pollfd){.fd = 0, .events = POLLIN};
        }
        if (J.stdin_pipe >= 0 && J.in_len) {
            pipe_idx = n;
            pfd[n++] = (struct pollfd){.fd = J.stdin_pipe, .events = POLLOUT};
        }
        int first_out = n;
        for (int r = 0; r < J.n; r++) {
            lm_outstream *s[2] = {&J.ranks[r].out, &J.ranks[r].err};
            for (int k = 0; k < 2; k++)
                if (s[k]->fd >= 0) {
                    who[n] = s[k];
                    pfd[n++] = (struct pollfd){.fd = s[k]->fd, .events = POLLIN};
                }
        }
        int first_agent = n;
        for (int k = 0; k < J.agents.n; k++) { /* two pipes: read end, then write end if queued */
            lm_child_agent *c = &J.agents.kids[k];
            if (c->link.rfd >= 0) {
                who[n] = c;
                pfd[n++] = (struct pollfd){.fd = c->link.rfd, .events = POLLIN};
            }
            if (c->link.wfd >= 0 && lm_link_queued(&c->link)) {
                who[n] = c;
                pfd[n++] = (struct pollfd){.fd = c->link.wfd, .events = POLLOUT};
            }
        }
        int rc = poll(pfd, (nfds_t)n, poll_timeout_ms());
        if (rc < 0 && errno != EINTR) break;
        if (rc > 0) {
            for (int i = first_out; i < first_agent; i++)
                if (pfd[i].revents) lm_out_pump(who[i]);
            for (int i = first_agent; i < n; i++) {
                lm_child_agent *c = who[i];
                if (!pfd[i].revents) continue;
                if (pfd[i].fd == c->link.wfd) {
                    lm_link_flush(&c->link); /* a failed write shows as the read end's end */
                    continue;
                }
                char why[512];
                if (lm_subtree_read(c, &J.desc, from_agent, why, sizeof why)) agent_failed(why);
            }
            if (J.multi && in_idx >= 0 && pfd[in_idx].revents) pump_stdin_remote();
            else if ((in_idx >= 0 && pfd[in_idx].revents) || (pipe_idx >= 0 && pfd[pipe_idx].revents))
                pump_stdin(in_idx >= 0 ? pfd[in_idx].revents : 0, pipe_idx >= 0 ? pfd[pipe_idx].revents : 0);
            if (pfd[0].revents & POLLIN) {
                struct signalfd_siginfo si;
                while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) on_signal((int)si.ssi_signo);
            }
        }
        double t = now_s();
        if (!J.tearing_down && J.timeout_s > 0 && t >= J.deadline) {
            set_cause(CAUSE_TIMEOUT, -1, 0, 124);
            begin_teardown(SIGTERM);
        }
        if (J.tearing_down && !J.killed && t >= J.kill_at) {
            kill_now();
        } else if (J.killed && t >= J.give_up_at) {
            fprintf(stderr, "%s: %d rank(s) did not end after SIGKILL; giving up on them\n", g_prog, J.alive);
            break;
        }
    }
    free(pfd);
    free(who);
}

/* Everything the ranks wrote before exiting is in the pipes already: read
 * it without waiting for writers that might have outlived the ranks. */
static void drain_output(void)
{
    if (J.multi) { /* the agents drained the pipes; end what a lost agent left unfinished */
        for (int r = 0; r < J.n; r++) {
            lm_out_feed(&J.ranks[r].out, NULL, 0);
            lm_out_feed(&J.ranks[r].err, NULL, 0);
        }
        return;
    }
    for (int r = 0; r < J.n; r++) {
        lm_outstream *s[2] = {&J.ranks[r].out, &J.ranks[r].err};
        for (int k = 0; k < 2; k++)
            while (lm_out_pump(s[k])) {
                struct pollfd p = {.fd = s[k]->fd, .events = POLLIN};
                if (poll(&p, 1, 0) <= 0) break;
            }
        for (int k = 0; k < 2; k++)
            if (s[k]->fd >= 0) { /* still held open by a leftover process */
                lm_out_pump(s[k]);
                close(s[k]->fd);
                s[k]->fd = -1;
            }
    }
}

/* The agents' launch commands end after their DONE (or were lost): give
 * them a moment, then end whatever of them is left. */
static void end_agents(void)
{
    /* Agents stay, serving their hosts' keys, until their channel ends. */
    for (int k = 0; k < J.agents.n; k++) lm_link_close(&J.agents.kids[k].link);
    for (int i = 0; i < 1000; i++) {
        reap();
        int left = 0;
        for (int k = 0; k < J.agents.n; k++) left += J.agents.kids[k].pid > 0;
        if (!left) return;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    lm_subtree_kill(&J.agents);
    for (int k = 0; k < J.agents.n; k++)
        if (J.agents.kids[k].pid > 0) waitpid(J.agents.kids[k].pid, NULL, 0);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--lm-agent") == 0) return lm_agent_main();
    g_prog = base_name(argv[0]);
    lm_options o;
    int prc = lm_options_parse(g_prog, argc, argv, &o);
    if (prc == LM_OPTS_EXIT_OK) return 0;
    if (prc == LM_OPTS_ERROR) return 2;

    char path[PATH_MAX];
    int frc = lm_find_program(g_prog, o.argv[0], path, sizeof path);
    if (frc != 0) return frc;

    raise_fd_limit(o.nranks);
    J.n = o.nranks;
    J.stdin_pipe = -1;
    J.ranks = calloc((size_t)J.n, sizeof *J.ranks);
    if (!J.ranks) {
        fprintf(stderr, "%s: out of memory for %d ranks\n", g_prog, J.n);
        return 1;
    }
    lm_out_set_tagging(o.tag_output);

    /* Signals become events of the poll loop. Blocked before any rank
     * exists, so no SIGCHLD can be missed. */
    sigset_t mask;
    sigemptyset(&mask);
    int handled[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++) sigaddset(&mask, handled[i]);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN); /* a closed stdout or rank stdin is an error code, not death */
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        fprintf(stderr, "%s: signalfd: %s\n", g_prog, strerror(errno));
        return 1;
    }

    char job_id[32];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(job_id, sizeof job_id, "%lx-%d", (unsigned long)ts.tv_sec, (int)getpid());
    if (o.hosts.n) {
        J.multi = 1;
        launch_agents(&o, path, job_id);
        run(&o, sfd);
        end_agents();
        drain_output();
    } else {
        lm_layout layout = {.world_size = o.nranks,
                            .reported_world_size = o.reported_world_size,
                            .node_count = 1,
                            .node_id = 0,
                            .local_size = o.nranks,
                            .kind = LM_LAYOUT_BLOCK,
                            .ranks_per_node = o.nranks,
                            .appnum = 0,
                            .universe_size = universe_size(&o),
                            .node_cpus = node_cpus()};
        lm_node_segment_set_transport_area(lm_shm_area_size, lm_shm_area_format);
        J.seg_fd = lm_node_segment_create(job_id, &layout, &J.seg);
        if (J.seg_fd < 0) {
            fprintf(stderr, "%s: cannot create the node segment: %s\n", g_prog, strerror(errno));
            return 1;
        }
        launch(&o, path, job_id);
        run(&o, sfd);
        drain_output();
        /* Processes the ranks left behind in the job's group go with the job. */
        if (J.pgid > 0 && kill(-J.pgid, 0) == 0) kill(-J.pgid, SIGKILL);
    }
    report();
    if (J.seg) {
        lm_node_segment_detach(J.seg);
        close(J.seg_fd);
    }
    lm_subtree_free(&J.agents);
    free(J.desc.host_names);
    free(J.desc.host_nranks);
    lm_options_free(&o);
    free(J.ranks);
    return J.cause == CAUSE_NONE ? 0 : J.exit_status;
}
