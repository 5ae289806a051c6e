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
 * exits with a status derived from it (see --help).
 *
 * In a job on one node mpirun also serves its ranks' requests (each rank
 * has a socket to it, LEANMPI_AGENT_FD; boot/kvs_wire.h): it starts the
 * jobs MPI_Comm_spawn asks for, keeps ports and names (broker.h), and
 * reads the keys of every job's processes from their segments. A spawned
 * job is one more set of ranks of the same universe, under the same rules:
 * the first failure of any rank of any job ends them all, and mpirun
 * returns once every job has ended. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, memrchr */
#endif
#include "boot/node_segment.h"
#include "transport/shm_layout.h"
#include "agent.h"
#include "agent_tree.h"
#include "cpu_binding.h"
#include "boot/kvs.h"
#include "boot/kvs_wire.h"
#include "broker.h"
#include "find_program.h"
#include "options.h"
#include "output_forward.h"
#include "program_image.h"
#include "rank_exit.h"
#include "signal_names.h"
#include "spawn.h"
#include "spawn_request.h"

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
#include <sys/socket.h>
#include <sys/stat.h>
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
    int ctl;       /* mpirun's end of the rank's request socket (one node), or -1 */
    int job, rank; /* the rank's job (0: the first) and world rank there */
} rank_proc;

/* A job that MPI_Comm_spawn started (job number >= 1). */
typedef struct spawned_job {
    int n;
    rank_proc *procs;
    lm_node_segment *seg; /* on this node; across hosts the agents of its hosts hold theirs */
    int seg_fd;
    /* across hosts: rank r runs on node hosts[r / per_node] (host = hosts[0]);
     * on one node host is -1 */
    int host;
    int *hosts, nodes, per_node;
    int answers;                /* across hosts: SPAWNED frames received from its hosts */
    char *why;                  /* the first host's reason for failing to start its part */
    int failed;                 /* its start failed: the exits of what did start are no failure */
    char *port;                 /* the port its parent waits on until it has started */
    int32_t req_node, req_code; /* across hosts: who asked for it, until every host answered */
} spawned_job;

/* The node rank r of a spawned job runs on (across hosts). */
static int spawned_host_of(const spawned_job *sj, int r) { return sj->hosts[r / sj->per_node]; }

#define SPAWN_DEFAULT_LIMIT 1024 /* processes of all jobs at once, without --universe-size */

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
    int cause_job, cause_rank, cause_value, exit_status;
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
    /* dynamic processes (one node) */
    int singleton; /* job 0 is a singleton that started this mpirun as its broker */
    const lm_options *opts;
    const char *job_id;
    spawned_job **spawned; /* job k is spawned[k - 1] */
    int nspawned;
    lm_broker broker;
} J;

static int job_size(int job) { return job == 0 ? J.n : J.spawned[job - 1]->n; }
static rank_proc *proc_of(int job, int r) { return job == 0 ? &J.ranks[r] : &J.spawned[job - 1]->procs[r]; }
static lm_node_segment *seg_of(int job) { return job == 0 ? J.seg : J.spawned[job - 1]->seg; }
static int total_procs(void)
{
    int n = J.n;
    for (int k = 0; k < J.nspawned; k++) n += J.spawned[k]->n;
    return n;
}

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
    /* an adopted singleton is in a group of its own: it goes as job 0 would */
    if (J.singleton && J.ranks[0].pid > 0) kill(J.ranks[0].pid, sig);
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
    J.cause_pid = (rank >= 0 && rank < job_size(J.cause_job)) ? proc_of(J.cause_job, rank)->pid : 0;
    J.cause_value = value;
    J.exit_status = status;
}

static int abort_status(int errorcode)
{
    if (errorcode <= 0) return 1;
    return errorcode > 255 ? 255 : errorcode;
}

/* Process r of spawned job `job` ended before MPI_Init: the job cannot
 * start. Its other processes end, and the parent waiting for it gets
 * MPI_ERR_SPAWN with the reason (through the port it waits on); the rest
 * of the universe goes on. */
static void spawn_died(int job, int r, const lm_exit_wire *x)
{
    spawned_job *sj = J.spawned[job - 1];
    char why[400], where[280] = "";
    int status = x->wait_status;
    /* across hosts the reason names the host, as a failed start does */
    if (sj->host >= 0) snprintf(where, sizeof where, " on host %s", J.desc.host_names[spawned_host_of(sj, r)]);
    if (WIFSIGNALED(status))
        snprintf(why, sizeof why, "process %d of the spawned job%s was killed by signal %d (%s) before MPI_Init", r,
                 where, WTERMSIG(status), lm_signal_abbrev(WTERMSIG(status)));
    else
        snprintf(why, sizeof why, "process %d of the spawned job%s exited with status %d before MPI_Init", r, where,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    sj->failed = 1; /* from now on its exits are no failure */
    if (!sj->why) sj->why = strdup(why);
    fprintf(stderr, "%s: spawned job %d: %s; the others of that job were ended\n", g_prog, job, why);
    if (sj->host < 0) {
        for (int q = 0; q < sj->n; q++)
            if (sj->procs[q].pid > 0) kill(sj->procs[q].pid, SIGKILL);
    } else {
        for (int i = 0; i < sj->nodes; i++) {
            lm_child_agent *c = lm_subtree_toward(&J.agents, -1, sj->hosts[i], J.desc.fanout);
            if (c) lm_link_send(&c->link, LM_FRAME_UNSPAWN, sj->hosts[i], -1, job, NULL, 0);
        }
    }
    if (sj->port) lm_broker_port_fail(&J.broker, sj->port, why);
}

/* Rank r ended as x says: the first abnormal end decides the job's fate. */
static void rank_ended(int job, int r, const lm_exit_wire *x)
{
    if (J.tearing_down) return; /* what happens to ranks now is our doing */
    if (job > 0 && J.spawned[job - 1]->failed) return;
    if (job > 0 && x->state == LM_RANK_NOT_STARTED && !x->abort_claimed) {
        spawn_died(job, r, x);
        return;
    }
    if (J.cause == CAUSE_NONE) J.cause_job = job;
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

static void rank_gone(int job, int r)
{
    rank_proc *p = proc_of(job, r);
    p->pid = 0;
    J.alive--;
    if (p->ctl >= 0) close(p->ctl);
    p->ctl = -1;
    lm_broker_forget(&J.broker, job, r);
    if (job != 0) return;
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
        for (int job = 0, found = 0; job <= J.nspawned && !found; job++)
            for (int r = 0; r < job_size(job) && !found; r++) {
                if (proc_of(job, r)->pid != pid) continue;
                lm_exit_wire x;
                lm_rank_exit_read(seg_of(job), r, pid, status, &x);
                rank_ended(job, r, &x);
                rank_gone(job, r);
                found = 1;
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

static void serve_remote(const lm_frame *f, const char *p);
static void spawned_on_host(const lm_frame *f, const char *p);
static void route_kvs_to_job(const lm_frame *f, const char *p);

static void from_agent(lm_child_agent *c, const lm_frame *f, const char *p)
{
    /* a process: a world rank of the first job, or another job's (lm_proc_code) */
    int job = f->rank >= 0 ? lm_proc_code_job(f->rank) : -1, r = job > 0 ? lm_proc_code_rank(f->rank) : f->rank;
    int rank_ok = job >= 0 && job <= J.nspawned && r >= 0 && r < job_size(job);
    rank_proc *rp = rank_ok ? proc_of(job, r) : NULL;
    switch (f->type) {
    case LM_FRAME_OUT:
        if (rp && (f->value == 1 || f->value == 2)) lm_out_feed(f->value == 1 ? &rp->out : &rp->err, p, f->len);
        break;
    case LM_FRAME_EXIT:
        if (rp && rp->pid != 0 && f->len == sizeof(lm_exit_wire)) {
            lm_exit_wire x;
            memcpy(&x, p, sizeof x);
            x.abort_message[sizeof x.abort_message - 1] = '\0';
            rp->pid = x.pid;
            rank_ended(job, r, &x);
            rank_gone(job, r);
        }
        break;
    case LM_FRAME_CTL: serve_remote(f, p); break;
    case LM_FRAME_SPAWNED: spawned_on_host(f, p); break;
    case LM_FRAME_STDIN_ACK: J.in_len = 0; break;
    case LM_FRAME_FAIL: agent_failed(f->len && p[f->len - 1] == '\0' ? p : "a launch agent failed"); break;
    case LM_FRAME_DONE:
        if (f->node == c->node) c->done = 1;
        break;
    case LM_FRAME_KVS_GET: /* between hosts in different subtrees: pass it down again */
        if (f->node < 0) { /* another job's key: to its host */
            route_kvs_to_job(f, p);
            break;
        }
        /* fall through */
    case LM_FRAME_KVS_VALUE: {
        lm_child_agent *to = lm_subtree_toward(&J.agents, -1, f->node, J.desc.fanout);
        if (to) lm_link_send(&to->link, f->type, f->node, f->rank, f->value, p, f->len);
        break;
    }
    default: break;
    }
}

static int lm_min_int(int a, int b) { return a < b ? a : b; }

/* The host of a rank of the first job: the rankfile's, else ranks fill
 * the hosts in order. */
static int host_of_rank(int rank)
{
    if (J.desc.rank_host) return rank >= 0 && rank < J.desc.world_size ? J.desc.rank_host[rank] : -1;
    for (int h = 0; h < J.desc.nhosts; h++) {
        if (rank < J.desc.host_nranks[h]) return h;
        rank -= J.desc.host_nranks[h];
    }
    return -1;
}

static void report(void)
{
    char pidbuf[360] = "", jobbuf[40] = "";
    if (J.cause_job > 0) snprintf(jobbuf, sizeof jobbuf, " of spawned job %d", J.cause_job);
    int host = J.cause_job > 0
                   ? (J.multi && J.cause_rank >= 0 ? spawned_host_of(J.spawned[J.cause_job - 1], J.cause_rank) : -1)
               : J.multi && J.cause_rank >= 0 ? host_of_rank(J.cause_rank)
                                              : -1;
    if (J.cause_pid > 0 && J.multi && host >= 0)
        snprintf(pidbuf, sizeof pidbuf, "%s (pid %d on host %s)", jobbuf, (int)J.cause_pid, J.desc.host_names[host]);
    else if (J.cause_pid > 0) snprintf(pidbuf, sizeof pidbuf, "%s (pid %d)", jobbuf, (int)J.cause_pid);
    else snprintf(pidbuf, sizeof pidbuf, "%s", jobbuf);
    switch (J.cause) {
    case CAUSE_NONE:
    case CAUSE_LAUNCH: break;
    case CAUSE_AGENT: fprintf(stderr, "%s: %s\n", g_prog, J.agent_message); break;
    case CAUSE_ABORT: {
        const char *msg = J.abort_message;
        fprintf(stderr, "%s: rank %d%s called MPI_Abort with error code %d%s%s\n", g_prog, J.cause_rank, jobbuf,
                J.cause_value, msg[0] ? ": " : "", msg);
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

/* A rank's output pipes and its request socket (one end for mpirun, the
 * other inherited as LEANMPI_AGENT_FD; -1 where none could be made). */
typedef struct rank_fds {
    int out[2], err[2], ctl[2];
} rank_fds;

static int open_rank_fds(rank_fds *f, int r, char *why, size_t whycap)
{
    if (nonblocking_pipe(f->out) != 0) {
        snprintf(why, whycap, "cannot create pipes for rank %d: %s", r, strerror(errno));
        return -1;
    }
    if (nonblocking_pipe(f->err) != 0) {
        snprintf(why, whycap, "cannot create pipes for rank %d: %s", r, strerror(errno));
        close(f->out[0]);
        close(f->out[1]);
        return -1;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->ctl) != 0) f->ctl[0] = f->ctl[1] = -1;
    else fcntl(f->ctl[0], F_SETFL, O_NONBLOCK);
    return 0;
}

/* The rank has its ends (or failed to start): mpirun keeps its own. */
static void adopt_rank_fds(rank_proc *p, rank_fds *f, int r)
{
    close(f->out[1]);
    close(f->err[1]);
    if (f->ctl[1] >= 0) close(f->ctl[1]);
    lm_out_init(&p->out, f->out[0], 1, r);
    lm_out_init(&p->err, f->err[0], 2, r);
    p->ctl = f->ctl[0];
}

/* Start rank r of job sj as p. 0, or -1 with why. */
static int start_proc(lm_spawn_job *sj, rank_proc *p, int r, int in, char *why, size_t whycap)
{
    rank_fds f;
    if (open_rank_fds(&f, r, why, whycap)) return -1;
    pid_t pid = lm_spawn_rank(sj, r, r, in, f.out[1], f.err[1], f.ctl[1]);
    int saved = errno;
    adopt_rank_fds(p, &f, r);
    if (pid < 0) {
        snprintf(why, whycap, "cannot start rank %d: %s", r, strerror(saved));
        return -1;
    }
    p->pid = pid;
    J.alive++;
    J.pgid = sj->pgid;
    return 0;
}

/* leanmpi-host beside this mpirun. */
static int host_path(char *path, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", path, cap - 1);
    if (n <= 0) return -1;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash || (size_t)(slash - path) + sizeof "/leanmpi-host" > cap) return -1;
    strcpy(slash, "/leanmpi-host");
    return access(path, X_OK);
}

/* --address-space=shared: ranks first .. first + count - 1 as tasks of one
 * leanmpi-host; their pids come back on a pipe ("rank pid" lines, or
 * "error MESSAGE" when the program cannot be loaded that way). 0, or -1
 * with why. */
static int start_group(lm_spawn_job *sj, int first, int count, int stdin_fd, int devnull, char *why, size_t whycap)
{
    char host[4096];
    if (host_path(host, sizeof host) != 0) {
        snprintf(why, whycap, "--address-space=shared: leanmpi-host is not beside mpirun");
        return -1;
    }
    rank_fds f[LM_SPACE_RANKS_MAX];
    int ranks[LM_SPACE_RANKS_MAX], fds[LM_SPACE_RANKS_MAX][4], opened = 0, rc = 0;
    for (; opened < count && rc == 0; opened++) {
        int r = first + opened;
        rc = open_rank_fds(&f[opened], r, why, whycap);
        if (rc) break;
        ranks[opened] = r;
        int in = r == 0 && stdin_fd >= 0 ? stdin_fd : devnull;
        int mine[4] = {in, f[opened].out[1], f[opened].err[1], f[opened].ctl[1]};
        memcpy(fds[opened], mine, sizeof mine);
    }
    int report[2] = {-1, -1};
    if (rc == 0 && pipe2(report, O_CLOEXEC) != 0) {
        snprintf(why, whycap, "cannot create a pipe: %s", strerror(errno));
        rc = -1;
    }
    pid_t pid = rc == 0 ? lm_spawn_host(sj, host, count, ranks, ranks, (const int(*)[4])fds, report[1]) : -1;
    if (rc == 0 && pid < 0) snprintf(why, whycap, "cannot start leanmpi-host: %s", strerror(errno));
    for (int k = 0; k < opened; k++) adopt_rank_fds(&J.ranks[first + k], &f[k], first + k);
    if (report[1] >= 0) close(report[1]);
    if (pid < 0) {
        if (report[0] >= 0) close(report[0]);
        return -1;
    }
    J.pgid = sj->pgid;
    /* every rank's pid, or why the host gave up (it then ends) */
    FILE *in = fdopen(report[0], "r");
    char line[600];
    int got = 0;
    while (in && got < count && fgets(line, sizeof line, in)) {
        int r, p;
        if (!strncmp(line, "error ", 6)) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(why, whycap, "--address-space=shared: %s", line + 6);
            break;
        }
        if (sscanf(line, "%d %d", &r, &p) == 2 && r >= first && r < first + count) {
            J.ranks[r].pid = p;
            J.alive++;
            got++;
        }
    }
    if (in) fclose(in);
    else close(report[0]);
    if (got < count && !strstr(why, "address-space"))
        snprintf(why, whycap, "--address-space=shared: leanmpi-host started %d of %d ranks", got, count);
    return got == count ? 0 : -1;
}

/* --address-space: whether the ranks share one address space. A program
 * that cannot be loaded once per rank fails an explicit request with the
 * reason; the automatic choice then runs separate processes and says so. */
static int share_space(const lm_options *o, const char *path)
{
    if (o->shared_space == LM_SPACE_SEPARATE) return 0;
    lm_program_image im;
    char why[700];
    if (lm_program_image_read(path, &im, why, sizeof why) == 0) {
        lm_program_image_free(&im);
        return 1;
    }
    if (o->shared_space == LM_SPACE_SHARED) {
        fprintf(stderr, "%s: --address-space=shared: %s\n", g_prog, why);
        return -1;
    }
    fprintf(stderr, "%s: --address-space=auto: %s; the ranks run as separate processes\n", g_prog, why);
    return 0;
}

/* Every rankfile slot of this node names CPUs it has; 0, or -1 with the
 * reason on stderr. */
static int check_bindings(const lm_options *o)
{
    for (int r = 0; r < o->rankfile.n; r++) {
        cpu_set_t set;
        char why[200];
        if (o->rankfile.cpus[r] && lm_cpus_from_slots(o->rankfile.cpus[r], &set, why, sizeof why) != 0) {
            fprintf(stderr, "%s: rank %d of the rankfile: %s\n", g_prog, r, why);
            return -1;
        }
    }
    return 0;
}

/* Start every rank. On failure the ranks already started are ended. */
static int launch(const lm_options *o, const char *path, const char *job_id)
{
    int shared = share_space(o, path);
    if (shared < 0) {
        set_cause(CAUSE_LAUNCH, -1, 0, 1);
        begin_teardown(SIGKILL);
        return -1;
    }
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
                       .pgid = 0,
                       .rank_cpus = o->rankfile.n ? o->rankfile.cpus : NULL};
    int rc = 0;
    for (int r = 0; r < J.n && rc == 0;) {
        char why[700] = "";
        if (shared) {
            /* the ranks left in as few groups as fit, of equal sizes as
             * far as the count allows */
            int left = J.n - r, groups = (left + o->space_ranks - 1) / o->space_ranks;
            int count = (left + groups - 1) / groups;
            rc = start_group(&sj, r, count, in_pipe[0], devnull, why, sizeof why);
            r += count;
        } else {
            int in = (r == 0 && in_pipe[0] >= 0) ? in_pipe[0] : devnull;
            rc = start_proc(&sj, &J.ranks[r], r, in, why, sizeof why);
            r++;
        }
        if (rc) fprintf(stderr, "%s: %s\n", g_prog, why);
    }
    if (in_pipe[0] >= 0) close(in_pipe[0]);
    if (devnull >= 0) close(devnull);
    if (rc != 0) {
        set_cause(CAUSE_LAUNCH, -1, 0, 1);
        begin_teardown(SIGKILL);
    }
    return rc;
}

/* ---- requests of the ranks (one node) --------------------------------- */

static int is_this_host(const char *h)
{
    char me[256];
    if (!*h || strcmp(h, "localhost") == 0) return 1;
    return gethostname(me, sizeof me) == 0 && strcmp(h, me) == 0;
}

/* Decode the commands and check them on this node; 0, or -1 with why. */
static int decode_spawn(const char *p, const char *end, lm_spawn_cmd **cmds, int *count, int *total, char *why,
                        size_t whycap)
{
    if (lm_spawn_cmds_decode(p, end, cmds, count, total, why, whycap) != 0 ||
        lm_spawn_cmds_resolve(*cmds, *count, NULL, why, whycap) != 0)
        return -1;
    for (int i = 0; i < *count; i++)
        if (!is_this_host((*cmds)[i].host))
            return snprintf(why, whycap,
                            "host '%s' (info key host) is not this node (mpirun --host gives a job several hosts)",
                            (*cmds)[i].host),
                   -1;
    return 0;
}

/* The universe's limit on processes at once: --universe-size when given. */
static int spawn_limit(void) { return J.opts->universe_size ? J.opts->universe_size : SPAWN_DEFAULT_LIMIT; }

/* Start the job a rank asks for; its number, or -1 with why (nothing of it
 * is left then). */
static int spawn_job(const lm_ctl_request *req, const char *p, const char *end, char *why, size_t whycap)
{
    lm_spawn_cmd *cmds;
    int count, total;
    if (decode_spawn(p, end, &cmds, &count, &total, why, whycap) != 0) {
        lm_spawn_cmds_free(cmds, count);
        return -1;
    }
    int alive_now = J.alive, k = J.nspawned + 1, rc = -1;
    spawned_job *sj = NULL, **grown = NULL;
    if (total < 1) snprintf(why, whycap, "no process to start");
    else if (alive_now + total > spawn_limit())
        snprintf(why, whycap, "%d more processes would exceed the universe's %d (mpirun --universe-size)", total,
                 spawn_limit());
    else if (k >= LM_JOB_MAX) snprintf(why, whycap, "a universe holds at most %d jobs", LM_JOB_MAX);
    else if (!(grown = realloc(J.spawned, (size_t)k * sizeof *grown)) || !(sj = calloc(1, sizeof *sj)) ||
             !(sj->procs = calloc((size_t)total, sizeof *sj->procs)))
        snprintf(why, whycap, "mpirun is out of memory");
    else rc = 0;
    if (grown) J.spawned = grown;
    if (rc) {
        if (sj) free(sj->procs);
        free(sj);
        lm_spawn_cmds_free(cmds, count);
        return -1;
    }
    char job_id[64];
    snprintf(job_id, sizeof job_id, "%s.%d", J.job_id, k);
    lm_layout layout = {.world_size = total,
                        .reported_world_size = total,
                        .node_count = 1,
                        .node_id = 0,
                        .local_size = total,
                        .kind = LM_LAYOUT_BLOCK,
                        .ranks_per_node = total,
                        .universe_size = universe_size(J.opts) > total ? universe_size(J.opts) : total,
                        .node_cpus = node_cpus()};
    sj->seg_fd = lm_node_segment_create(job_id, &layout, &sj->seg);
    if (sj->seg_fd < 0) {
        snprintf(why, whycap, "cannot create the node segment: %s", strerror(errno));
        free(sj->procs);
        free(sj);
        lm_spawn_cmds_free(cmds, count);
        return -1;
    }
    sj->host = -1;
    sj->port = strdup(req->port);
    J.spawned[k - 1] = sj;
    J.nspawned = k;
    for (int r = 0; r < total; r++) {
        rank_proc *q = &sj->procs[r];
        lm_out_init(&q->out, -1, 1, r);
        lm_out_init(&q->err, -1, 2, r);
        q->ctl = -1;
        q->job = k;
        q->rank = r;
    }
    sj->n = total;
    lm_spawn_env se;
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC), r = 0;
    rc = lm_spawn_env_init(&se, J.opts->env, J.opts->nenv, k, req->port);
    if (rc) snprintf(why, whycap, "mpirun is out of memory");
    for (int i = 0; i < count && rc == 0; i++) {
        lm_spawn_job spec = {
            .segment_fd = sj->seg_fd, .job_id = job_id, .world_size = total, .local_size = total, .pgid = J.pgid};
        lm_spawn_env_command(&se, &cmds[i], i, &spec);
        for (int m = 0; m < cmds[i].maxprocs && rc == 0; m++, r++)
            rc = start_proc(&spec, &sj->procs[r], r, devnull, why, whycap);
    }
    if (devnull >= 0) close(devnull);
    lm_spawn_env_free(&se);
    lm_spawn_cmds_free(cmds, count);
    if (rc) { /* end what started; the job stays listed, its processes reaped as they go */
        for (int i = 0; i < total; i++)
            if (sj->procs[i].pid > 0) kill(sj->procs[i].pid, SIGKILL);
        sj->n = r + (r < total && sj->procs[r].pid > 0);
        return -1;
    }
    return k;
}

/* A key of a process of any job, read from its segment. */
static void serve_kvs(rank_proc *p, const lm_kvs_request *req)
{
    lm_kvs_reply rep = {.result = -ENOENT};
    if (req->job >= 0 && req->job <= J.nspawned && req->rank >= 0 && req->rank < job_size(req->job)) {
        lm_node_segment *seg = seg_of(req->job);
        char key[LM_KVS_KEY_MAX];
        snprintf(key, sizeof key, "%s", req->key);
        long n = lm_kvs_get(lm_kvs_from(lm_node_segment_at(seg, seg->kvs_offset)), key, rep.value, sizeof rep.value);
        /* not there yet: its rank publishes such keys on demand */
        if (n == -ENOENT) atomic_store(&lm_node_segment_rank(seg, req->rank)->key_wanted, 1);
        rep.result = (int32_t)n;
    }
    send(p->ctl, &rep, sizeof rep, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static int spawn_on_host(const lm_ctl_request *req, size_t len, int32_t node, int32_t code, char *why, size_t whycap);

/* A request of process (job, rank): 1 with *rep to send back, or 0 when
 * the answer comes later (a spawn across hosts: the agent's SPAWNED frame).
 * node and code say where the process is (across hosts). */
static int serve_ctl(int job, int rank, int32_t node, int32_t code, lm_ctl_request *req, size_t len, lm_ctl_reply *rep)
{
    *rep = (lm_ctl_reply){0};
    req->name[sizeof req->name - 1] = req->port[sizeof req->port - 1] = '\0';
    int rc = 0;
    struct {
        int job, rank;
    } who = {job, rank}, *p = &who;
    switch (req->type) {
    case LM_REQ_SPAWN:
        if (J.multi) {
            if (spawn_on_host(req, len, node, code, rep->text, sizeof rep->text) == 0) return 0;
            rc = -EINVAL;
            break;
        }
        rc = spawn_job(req, (const char *)(req + 1), (const char *)req + len, rep->text, sizeof rep->text);
        if (rc > 0) rep->a = rc, rc = 0;
        else rc = -EINVAL;
        break;
    case LM_REQ_PORT_OPEN:
        rc = lm_broker_port_open(&J.broker, req->port, p->job, p->rank);
        if (rc == -EEXIST) snprintf(rep->text, sizeof rep->text, "port '%.900s' is open already", req->port);
        break;
    case LM_REQ_PORT_CLOSE:
        rc = lm_broker_port_close(&J.broker, req->port);
        if (rc) snprintf(rep->text, sizeof rep->text, "port '%.900s' is not open", req->port);
        break;
    case LM_REQ_ACCEPT:
    case LM_REQ_CONNECT:
        rc = lm_broker_queue(&J.broker, req->port, req->type == LM_REQ_ACCEPT, p->job, p->rank);
        if (rc > 0) rep->a = rc, rc = 0;
        else if (rc == -ENOENT) snprintf(rep->text, sizeof rep->text, "port '%.900s' is not open", req->port);
        break;
    case LM_REQ_POLL:
        rc = lm_broker_poll(&J.broker, req->value, &rep->a, &rep->b, &rep->c, rep->text, sizeof rep->text);
        if (rc == -ENOENT) snprintf(rep->text, sizeof rep->text, "the port was closed while waiting on it");
        break;
    case LM_REQ_CANCEL: lm_broker_cancel(&J.broker, req->value); break;
    case LM_REQ_PUBLISH:
        rc = lm_broker_publish(&J.broker, req->name, req->port);
        if (rc == -EEXIST) snprintf(rep->text, sizeof rep->text, "service '%.900s' is published already", req->name);
        break;
    case LM_REQ_LOOKUP:
        rc = lm_broker_lookup(&J.broker, req->name, rep->text, sizeof rep->text);
        if (rc) snprintf(rep->text, sizeof rep->text, "service '%.900s' is not published", req->name);
        break;
    case LM_REQ_UNPUBLISH:
        rc = lm_broker_unpublish(&J.broker, req->name, req->port[0] ? req->port : NULL);
        if (rc) snprintf(rep->text, sizeof rep->text, "service '%.900s' is not published under that port", req->name);
        break;
    default: rc = -EINVAL; snprintf(rep->text, sizeof rep->text, "unknown request %d", req->type);
    }
    if (rc == -ENOMEM) snprintf(rep->text, sizeof rep->text, "mpirun is out of memory");
    rep->result = rc;
    return 1;
}

/* Processes running on node h now: the first job's and the spawned jobs'
 * that have not ended. */
static int host_load(int h)
{
    int load = J.desc.host_nranks[h];
    for (int k = 0; k < J.nspawned; k++) {
        const spawned_job *sj = J.spawned[k];
        if (sj->host < 0 || sj->failed) continue;
        for (int r = 0; r < sj->n; r++) load += sj->procs[r].pid != 0 && spawned_host_of(sj, r) == h;
    }
    return load;
}

/* Where a spawned job runs across hosts: in blocks of *per_node ranks on
 * hosts[0 .. *nodes - 1]. On the hosts the info key `host` of the first
 * command that has one names (a name, or several separated by commas),
 * else on the first host whose free slots (--host/--hostfile slots, less
 * what runs there) hold all of it, else over every host in order. 0, or -1
 * with why. */
static int place_spawn(const char *named, int total, int *hosts, int *nodes, int *per_node, char *why, size_t whycap)
{
    int nh = J.desc.nhosts, m = 0;
    if (named) {
        char list[LM_CTL_TEXT_MAX], *save = NULL;
        snprintf(list, sizeof list, "%s", named);
        for (char *t = strtok_r(list, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
            int h = -1;
            for (int i = 0; i < nh && h < 0; i++)
                if (!strcmp(J.desc.host_names[i], t)) h = i;
            if (h < 0) return snprintf(why, whycap, "host '%.200s' (info key host) is not a host of this job", t), -1;
            for (int j = 0; j < m; j++)
                if (hosts[j] == h)
                    return snprintf(why, whycap, "host '%.200s' is named twice in the info key host", t), -1;
            hosts[m++] = h;
        }
        if (!m) return snprintf(why, whycap, "the info key host names no host"), -1;
    } else {
        for (int i = 0; i < nh && !m; i++)
            if (J.opts->hosts.h[i].slots - host_load(i) >= total) hosts[m++] = i;
        if (!m)
            for (int i = 0; i < nh; i++) hosts[m++] = i;
    }
    if (m > total) m = total;
    *per_node = (total + m - 1) / m;
    *nodes = (total + *per_node - 1) / *per_node;
    return 0;
}

/* Across hosts a spawned job runs on the hosts place_spawn chooses. Each
 * host's agent resolves the commands and starts its part (LM_FRAME_SPAWN,
 * with lm_spawn_part) and answers LM_FRAME_SPAWNED; the last answer
 * completes the request. 0, or -1 with why. */
static int spawn_on_host(const lm_ctl_request *req, size_t len, int32_t node, int32_t code, char *why, size_t whycap)
{
    const char *cmds = (const char *)(req + 1), *end = (const char *)req + len, *host = NULL;
    lm_spawn_cmd *dec;
    int n, total;
    if (lm_spawn_cmds_decode(cmds, end, &dec, &n, &total, why, whycap) != 0) {
        lm_spawn_cmds_free(dec, n);
        return -1;
    }
    for (int i = 0; i < n && !host; i++)
        if (*dec[i].host) host = dec[i].host;
    if (total < 1) {
        lm_spawn_cmds_free(dec, n);
        return snprintf(why, whycap, "no process to start"), -1;
    }
    int *hosts = calloc((size_t)J.desc.nhosts, sizeof *hosts), nodes = 0, per_node = 0;
    int placed = hosts ? place_spawn(host, total, hosts, &nodes, &per_node, why, whycap)
                       : (snprintf(why, whycap, "mpirun is out of memory"), -1);
    lm_spawn_cmds_free(dec, n); /* host pointed into it */
    if (placed) {
        free(hosts);
        return -1;
    }
    if (J.alive + total > spawn_limit()) {
        free(hosts);
        return snprintf(why, whycap, "%d more processes would exceed the universe's %d (mpirun --universe-size)", total,
                        spawn_limit()),
               -1;
    }
    if (J.nspawned + 1 >= LM_JOB_MAX) {
        free(hosts);
        return snprintf(why, whycap, "a universe holds at most %d jobs", LM_JOB_MAX), -1;
    }
    spawned_job **grown = realloc(J.spawned, (size_t)(J.nspawned + 1) * sizeof *grown);
    if (grown) J.spawned = grown;
    spawned_job *sj = grown ? calloc(1, sizeof *sj) : NULL;
    size_t plen = sizeof(lm_spawn_part) + strlen(req->port) + 1 + (size_t)(end - cmds);
    char *payload = sj ? malloc(plen) : NULL;
    if (!sj || !payload || !(sj->procs = calloc((size_t)total, sizeof *sj->procs))) {
        free(payload);
        if (sj) free(sj->procs);
        free(sj);
        free(hosts);
        return snprintf(why, whycap, "mpirun is out of memory"), -1;
    }
    int k = ++J.nspawned;
    J.spawned[k - 1] = sj;
    *sj = (spawned_job){.n = total,
                        .procs = sj->procs,
                        .seg_fd = -1,
                        .port = strdup(req->port),
                        .host = hosts[0],
                        .hosts = hosts,
                        .nodes = nodes,
                        .per_node = per_node,
                        .req_node = node,
                        .req_code = code};
    for (int r = 0; r < total; r++) {
        rank_proc *q = &sj->procs[r];
        q->pid = -1; /* running there; its exit says its pid */
        lm_out_init(&q->out, -1, 1, r);
        lm_out_init(&q->err, -1, 2, r);
        q->ctl = -1;
        q->job = k;
        q->rank = r;
    }
    J.alive += total;
    char *at = payload + sizeof(lm_spawn_part);
    memcpy(at, req->port, strlen(req->port) + 1);
    memcpy(at + strlen(req->port) + 1, cmds, (size_t)(end - cmds));
    for (int i = 0; i < nodes; i++) {
        int first = i * per_node, count = lm_min_int(per_node, total - first);
        lm_spawn_part part = {.first = first, .count = count, .node = i, .nodes = nodes, .per_node = per_node};
        memcpy(payload, &part, sizeof part);
        lm_child_agent *c = lm_subtree_toward(&J.agents, -1, hosts[i], J.desc.fanout);
        if (c) lm_link_send(&c->link, LM_FRAME_SPAWN, hosts[i], total, k, payload, plen);
    }
    free(payload);
    return 0;
}

/* A host's answer to LM_FRAME_SPAWN. The last one answers the process
 * that asked: the job number, or the first failure, after which the hosts
 * that did start their part end it (LM_FRAME_UNSPAWN). */
static void spawned_on_host(const lm_frame *f, const char *p)
{
    int k = f->value;
    if (k < 1 || k > J.nspawned || J.spawned[k - 1]->host < 0) return;
    spawned_job *sj = J.spawned[k - 1];
    if (f->len && !sj->why) {
        sj->why = strndup(p, f->len);
        sj->failed = 1; /* from now on its exits are no failure */
    }
    if (++sj->answers < sj->nodes) return;
    lm_ctl_reply rep = {.result = 0, .a = k};
    if (sj->failed) {
        rep.result = -EINVAL;
        snprintf(rep.text, sizeof rep.text, "%s", sj->why ? sj->why : "a host could not start its part");
        for (int i = 0; i < sj->nodes; i++) {
            lm_child_agent *c = lm_subtree_toward(&J.agents, -1, sj->hosts[i], J.desc.fanout);
            if (c) lm_link_send(&c->link, LM_FRAME_UNSPAWN, sj->hosts[i], -1, k, NULL, 0);
        }
    }
    lm_child_agent *c = lm_subtree_toward(&J.agents, -1, sj->req_node, J.desc.fanout);
    if (c) lm_link_send(&c->link, LM_FRAME_CTL, sj->req_node, sj->req_code, 0, &rep, sizeof rep);
}

/* A request of a process on another host, through its agent. */
static void serve_remote(const lm_frame *f, const char *p)
{
    _Alignas(8) static char req[sizeof(lm_ctl_request) + LM_SPAWN_WIRE_MAX];
    int job = lm_proc_code_job(f->rank), rank = job ? lm_proc_code_rank(f->rank) : f->rank;
    lm_ctl_reply rep = {.result = -EINVAL};
    int answer = 1;
    if (f->len >= sizeof(lm_ctl_request) && f->len <= sizeof req && job <= J.nspawned) {
        memcpy(req, p, f->len);
        answer = serve_ctl(job, rank, f->node, f->rank, (lm_ctl_request *)req, f->len, &rep);
    }
    lm_child_agent *c = lm_subtree_toward(&J.agents, -1, f->node, J.desc.fanout);
    if (answer && c) lm_link_send(&c->link, LM_FRAME_CTL, f->node, f->rank, 0, &rep, sizeof rep);
}

/* A key of another job's process: its host is known here only. */
static void route_kvs_to_job(const lm_frame *f, const char *p)
{
    lm_kvs_request req;
    int host = -1;
    if (f->len == sizeof req) {
        memcpy(&req, p, sizeof req);
        if (req.job > 0 && req.job <= J.nspawned && !J.spawned[req.job - 1]->failed && req.rank >= 0 &&
            req.rank < J.spawned[req.job - 1]->n)
            host = spawned_host_of(J.spawned[req.job - 1], req.rank);
    }
    if (host >= 0) {
        lm_child_agent *c = lm_subtree_toward(&J.agents, -1, host, J.desc.fanout);
        if (c) lm_link_send(&c->link, LM_FRAME_KVS_GET, host, f->rank, f->value, p, f->len);
        return;
    }
    lm_child_agent *c = lm_subtree_toward(&J.agents, -1, f->value, J.desc.fanout);
    if (c) lm_link_send(&c->link, LM_FRAME_KVS_VALUE, f->value, f->rank, -ENOENT, NULL, 0);
}

/* One request from rank p (one at a time per rank: its socket has room
 * for the answer). */
static void serve(rank_proc *p)
{
    _Alignas(8) static char aligned[sizeof(lm_ctl_request) + LM_SPAWN_WIRE_MAX];
    ssize_t got = recv(p->ctl, aligned, sizeof aligned, MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (got <= 0) { /* the rank is gone, or closed its end */
        close(p->ctl);
        p->ctl = -1;
        /* an adopted singleton is not our child: its socket is all we see of it */
        if (J.singleton && p->job == 0) rank_gone(0, p->rank);
        return;
    }
    int32_t type = 0;
    if (got >= (ssize_t)sizeof type) memcpy(&type, aligned, sizeof type);
    if (type == LM_REQ_KVS_GET && got == (ssize_t)sizeof(lm_kvs_request)) {
        serve_kvs(p, (const lm_kvs_request *)aligned);
    } else if (got >= (ssize_t)sizeof(lm_ctl_request)) {
        lm_ctl_reply rep;
        if (serve_ctl(p->job, p->rank, -1, -1, (lm_ctl_request *)aligned, (size_t)got, &rep))
            send(p->ctl, &rep, sizeof rep, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else {
        lm_ctl_reply rep = {.result = -EINVAL};
        send(p->ctl, &rep, sizeof rep, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
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
    if (o->rankfile.n) {
        d->rank_host = o->rankfile.host;
        d->rank_cpus = o->rankfile.cpus;
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
    int nfds_max = 0;
    struct pollfd *pfd = NULL;
    void **who = NULL;
    J.timeout_s = o->timeout_s;
    if (J.timeout_s > 0) J.deadline = now_s() + J.timeout_s;

    while (job_running()) {
        /* spawned jobs add processes: room for 3 descriptors each */
        int need = 3 + 3 * total_procs() + 2 * J.agents.n + 1;
        if (need > nfds_max) {
            struct pollfd *p2 = realloc(pfd, (size_t)need * sizeof *pfd);
            if (p2) pfd = p2;
            void **w2 = realloc(who, (size_t)need * sizeof *who);
            if (w2) who = w2;
            if (!p2 || !w2) {
                fprintf(stderr, "%s: out of memory\n", g_prog);
                set_cause(CAUSE_LAUNCH, -1, 0, 1);
                begin_teardown(SIGKILL);
                kill_now();
                break;
            }
            nfds_max = need;
        }
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
        for (int job = 0; job <= J.nspawned; job++)
            for (int r = 0; r < job_size(job); r++) {
                rank_proc *p = proc_of(job, r);
                lm_outstream *s[2] = {&p->out, &p->err};
                for (int k = 0; k < 2; k++)
                    if (s[k]->fd >= 0) {
                        who[n] = s[k];
                        pfd[n++] = (struct pollfd){.fd = s[k]->fd, .events = POLLIN};
                    }
            }
        int first_ctl = n;
        for (int job = 0; job <= J.nspawned; job++)
            for (int r = 0; r < job_size(job); r++) {
                rank_proc *p = proc_of(job, r);
                if (p->ctl < 0) continue;
                who[n] = p;
                pfd[n++] = (struct pollfd){.fd = p->ctl, .events = POLLIN};
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
            for (int i = first_out; i < first_ctl; i++)
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
            /* last: a spawn adds processes, and the arrays above change */
            for (int i = first_ctl; i < first_agent; i++) {
                rank_proc *p = who[i];
                if (pfd[i].revents && p->ctl == pfd[i].fd) serve(p);
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
    for (int job = 0; job <= J.nspawned; job++)
        for (int r = 0; r < job_size(job); r++) {
            rank_proc *rp = proc_of(job, r);
            lm_outstream *s[2] = {&rp->out, &rp->err};
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

/* `mpirun --lm-singleton CTL SEG PID` (boot/singleton_broker.c): the broker
 * of a process started without a launcher. That process is job 0, rank 0,
 * though not our child: CTL is its request socket, SEG its node segment
 * (its keys, for the jobs it spawns), PID the process. Everything else is
 * the one-node case: spawned jobs, ports, names; mpirun ends once the
 * singleton has closed its socket and every spawned process has ended. */
static int adopt_singleton(char **argv)
{
    char *end1, *end2, *end3;
    long ctl = strtol(argv[2], &end1, 10), seg = strtol(argv[3], &end2, 10), pid = strtol(argv[4], &end3, 10);
    if (*end1 || *end2 || *end3 || ctl < 0 || seg < 0 || pid <= 0) {
        fprintf(stderr, "%s: --lm-singleton needs CTL SEG PID\n", g_prog);
        return -1;
    }
    fcntl((int)ctl, F_SETFD, FD_CLOEXEC);
    fcntl((int)seg, F_SETFD, FD_CLOEXEC);
    fcntl((int)ctl, F_SETFL, O_NONBLOCK);
    if (lm_node_segment_attach((int)seg, &J.seg) != 0) {
        fprintf(stderr, "%s: cannot map the singleton's segment: %s\n", g_prog, strerror(errno));
        return -1;
    }
    J.seg_fd = (int)seg;
    J.singleton = 1;
    /* the segments of the jobs it spawns hold the shm transport's area */
    lm_node_segment_set_transport_area(lm_shm_area_size, lm_shm_area_format);
    rank_proc *p = &J.ranks[0];
    lm_out_init(&p->out, -1, 1, 0);
    lm_out_init(&p->err, -1, 2, 0);
    p->ctl = (int)ctl;
    p->pid = (pid_t)pid;
    J.alive = 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--lm-agent") == 0) return lm_agent_main();
    int singleton = argc == 5 && strcmp(argv[1], "--lm-singleton") == 0;
    g_prog = base_name(argv[0]);
    lm_options o = {.nranks = 1};
    char path[PATH_MAX] = "";
    if (!singleton) {
        int prc = lm_options_parse(g_prog, argc, argv, &o);
        if (prc == LM_OPTS_EXIT_OK) return 0;
        if (prc == LM_OPTS_ERROR) return 2;
        int frc = lm_find_program(g_prog, o.argv[0], path, sizeof path);
        if (frc != 0) return frc;
    }

    raise_fd_limit(o.nranks);
    J.n = o.nranks;
    J.stdin_pipe = -1;
    J.ranks = calloc((size_t)J.n, sizeof *J.ranks);
    if (!J.ranks) {
        fprintf(stderr, "%s: out of memory for %d ranks\n", g_prog, J.n);
        return 1;
    }
    lm_out_set_tagging(o.tag_output);
    for (int r = 0; r < J.n; r++) {
        J.ranks[r].ctl = -1;
        J.ranks[r].rank = r;
    }
    J.opts = &o;

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
    J.job_id = job_id;
    if (singleton) {
        if (adopt_singleton(argv) != 0) return 1;
        run(&o, sfd);
        drain_output();
    } else if (o.hosts.n) {
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
        if (check_bindings(&o) != 0) return 2;
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
    for (int r = 0; r < J.n; r++)
        if (J.ranks[r].ctl >= 0) close(J.ranks[r].ctl);
    for (int k = 0; k < J.nspawned; k++) {
        spawned_job *sj = J.spawned[k];
        for (int r = 0; r < sj->n; r++)
            if (sj->procs[r].ctl >= 0) close(sj->procs[r].ctl);
        lm_node_segment_detach(sj->seg);
        close(sj->seg_fd);
        free(sj->procs);
        free(sj->hosts);
        free(sj->why);
        free(sj->port);
        free(sj);
    }
    free(J.spawned);
    lm_broker_free(&J.broker);
    lm_subtree_free(&J.agents);
    free(J.desc.host_names);
    free(J.desc.host_nranks);
    lm_options_free(&o);
    free(J.ranks);
    return J.cause == CAUSE_NONE ? 0 : J.exit_status;
}
