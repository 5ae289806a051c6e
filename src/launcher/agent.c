/* The launch agent: mpirun started on a host of a job across nodes
 * (`mpirun --lm-agent`, by the launch template), with its control channel on
 * stdin/stdout. It reads the job, starts the agents of its subtree, creates
 * its node's segment (layout, rank blocks, key-value store, shm area),
 * starts its local ranks, and then only relays: rank output and exits up,
 * signals and stdin down, its children's frames both ways.
 *
 * It owns nothing that outlives it: the ranks die with it (parent-death
 * signal), the segment is a memfd, and when its parent goes away (mpirun
 * ended, or a link of the tree broke) it kills its ranks and exits, which
 * its own children see as the end of their channel in turn. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include "agent.h"
#include "cpu_binding.h"
#include "agent_link.h"
#include "agent_tree.h"
#include "boot/kvs.h"
#include "boot/kvs_wire.h"
#include "boot/node_segment.h"
#include "link_watch.h"
#include "rank_exit.h"
#include "spawn.h"
#include "spawn_request.h"
#include "transport/shm_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OUT_CHUNK (64 * 1024)
#define UP_QUEUE_MAX (1u << 20) /* stop reading rank output while this much waits to go up */
#define FLUSH_WAIT_MS 5000      /* at exit: how long the last frames may take to leave */
#define LINK_CHECK_MS 250       /* how often the host's network links are looked at */

typedef struct local_rank {
    pid_t pid;            /* 0 once reaped */
    int world_rank;       /* in its job */
    int job;              /* 0: the job mpirun started; k: a job spawned here */
    lm_node_segment *seg; /* its job's segment on this host */
    int local;            /* its index there */
    int fd[3];            /* [1] stdout, [2] stderr read ends; -1 once closed */
    int kvs_fd;           /* its requests for keys of other hosts (kvs_wire.h); -1 once closed */
} local_rank;

static struct agent {
    int node;
    lm_job_desc d;
    char *job;
    size_t job_len;
    lm_link up;
    lm_node_segment *seg;
    int seg_fd;
    int nlocal, alive;
    local_rank *ranks;
    pid_t pgid;
    lm_subtree kids;
    int stdin_fd; /* towards local rank 0 (world rank 0), or -1 */
    char *in_buf;
    size_t in_len, in_off;
    int in_eof;          /* STDIN end of file received: close once the buffer is written */
    lm_link_watch links; /* this host's network links when the job started */
    int link_reported;   /* one of them went down, and mpirun was told */
    /* jobs spawned on this host (MPI_Comm_spawn): their segments, and the
     * SPAWN frames not acted on yet (started where the poll arrays are
     * rebuilt, since starting one grows A.ranks) */
    struct spawned_here {
        int job, first, n; /* its ranks first .. first + n - 1 run here */
        lm_node_segment *seg;
        int seg_fd;
    } * spawned;
    int nspawned;
    struct pending_spawn {
        struct pending_spawn *next;
        int job, n;
        size_t len;
        char payload[];
    } * pending;
} A = {.seg_fd = -1, .stdin_fd = -1};

static const char *my_host(void) { return A.d.host_names ? A.d.host_names[A.node] : "?"; }

static void fail_up(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lm_link_send(&A.up, LM_FRAME_FAIL, A.node, -1, 0, msg, strlen(msg) + 1);
}

/* Give queued frames to the parent, waiting up to FLUSH_WAIT_MS. */
static void flush_up(void)
{
    for (int waited = 0; lm_link_queued(&A.up) && A.up.wfd >= 0 && waited < FLUSH_WAIT_MS; waited += 10) {
        if (lm_link_flush(&A.up) != 0) break;
        struct pollfd p = {.fd = A.up.wfd, .events = POLLOUT};
        poll(&p, 1, 10);
    }
}

/* Everything below us dies now (the ranks also by their parent-death
 * signal, the subtrees when their channel ends). */
static void kill_all(void)
{
    if (A.pgid > 0) kill(-A.pgid, SIGKILL);
    lm_subtree_kill(&A.kids);
}

static void signal_all(int sig)
{
    if (A.pgid > 0) kill(-A.pgid, sig);
    lm_subtree_signal(&A.kids, sig);
}

static void stdin_write(void)
{
    while (A.stdin_fd >= 0 && A.in_off < A.in_len) {
        ssize_t w = write(A.stdin_fd, A.in_buf + A.in_off, A.in_len - A.in_off);
        if (w > 0) {
            A.in_off += (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            return;
        } else { /* rank 0 closed its stdin: drop the rest */
            close(A.stdin_fd);
            A.stdin_fd = -1;
        }
    }
    if (A.in_len) { /* all of it written (or dropped): ask for more */
        A.in_len = A.in_off = 0;
        lm_link_send(&A.up, LM_FRAME_STDIN_ACK, A.node, -1, 0, NULL, 0);
    }
    if (A.in_eof && A.stdin_fd >= 0) {
        close(A.stdin_fd);
        A.stdin_fd = -1;
    }
}

/* ---- direct modex: keys of ranks on other hosts ---------------------- */

static void on_this_host(const lm_frame *f, const char *payload);

/* Pass a frame on toward node f->node: down the subtree that holds it, else
 * up (mpirun passes it down again; node -1 is mpirun itself). */
static void route(const lm_frame *f, const void *payload)
{
    if (f->node == A.node) {
        on_this_host(f, payload);
        return;
    }
    lm_child_agent *c = f->node >= 0 ? lm_subtree_toward(&A.kids, A.node, f->node, A.d.fanout) : NULL;
    lm_link_send(c ? &c->link : &A.up, f->type, f->node, f->rank, f->value, payload, f->len);
}

/* The local process a frame names (lm_proc_code), or NULL. */
static local_rank *local_proc(int32_t code)
{
    int job = lm_proc_code_job(code), rank = job ? lm_proc_code_rank(code) : code;
    for (int i = 0; i < A.nlocal; i++)
        if (A.ranks[i].job == job && A.ranks[i].world_rank == rank) return &A.ranks[i];
    return NULL;
}

/* A job's segment on this host, and the local index of its rank. */
static lm_node_segment *segment_of(int job, int rank, int *local)
{
    if (job == 0) {
        const lm_layout *l = &A.seg->layout;
        if (rank < 0 || rank >= l->world_size || lm_layout_node_of(l, rank) != A.node) return NULL;
        *local = lm_layout_local_rank_of(l, rank);
        return A.seg;
    }
    for (int k = 0; k < A.nspawned; k++)
        if (A.spawned[k].job == job && rank >= A.spawned[k].first && rank < A.spawned[k].first + A.spawned[k].n) {
            *local = rank - A.spawned[k].first;
            return A.spawned[k].seg;
        }
    return NULL;
}

static void start_spawned(struct pending_spawn *ps);

static void on_this_host(const lm_frame *f, const char *payload)
{
    if (f->type == LM_FRAME_KVS_GET && f->len == sizeof(lm_kvs_request)) {
        lm_kvs_request req;
        memcpy(&req, payload, sizeof req);
        req.key[sizeof req.key - 1] = '\0';
        char v[LM_KVS_VALUE_MAX];
        int local;
        lm_node_segment *seg = segment_of(req.job, req.rank, &local);
        long n = seg ? lm_kvs_get(lm_kvs_from(lm_node_segment_at(seg, seg->kvs_offset)), req.key, v, sizeof v)
                     : -ENOENT;
        /* Not there yet: tell its rank that someone waits for it (keys such
         * as the network address are published on demand). */
        if (n == -ENOENT && seg) atomic_store(&lm_node_segment_rank(seg, local)->key_wanted, 1);
        lm_frame back = {.type = LM_FRAME_KVS_VALUE,
                         .node = f->value,
                         .rank = f->rank,
                         .value = (int32_t)n,
                         .len = n > 0 ? (uint32_t)n : 0};
        route(&back, v);
    } else if (f->type == LM_FRAME_KVS_VALUE) {
        local_rank *r = local_proc(f->rank);
        lm_kvs_reply rep = {.result = f->value};
        memcpy(rep.value, payload, f->len < sizeof rep.value ? f->len : sizeof rep.value);
        /* One request in flight per rank, so its socket has room. */
        if (r && r->kvs_fd >= 0) send(r->kvs_fd, &rep, sizeof rep, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else if (f->type == LM_FRAME_CTL) { /* mpirun's answer */
        local_rank *r = local_proc(f->rank);
        if (r && r->kvs_fd >= 0) send(r->kvs_fd, payload, f->len, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else if (f->type == LM_FRAME_SPAWN) {
        struct pending_spawn *ps = malloc(sizeof *ps + f->len);
        if (!ps) {
            lm_link_send(&A.up, LM_FRAME_SPAWNED, A.node, -1, f->value, "the agent is out of memory", 27);
            return;
        }
        ps->job = f->value;
        ps->n = f->rank;
        ps->len = f->len;
        memcpy(ps->payload, payload, f->len);
        struct pending_spawn **at = &A.pending;
        while (*at) at = &(*at)->next;
        ps->next = NULL;
        *at = ps;
    } else if (f->type == LM_FRAME_UNSPAWN) {
        /* another host could not start its part: ours goes (mpirun takes
         * these exits for no failure) */
        for (int i = 0; i < A.nlocal; i++)
            if (A.ranks[i].job == f->value && A.ranks[i].pid > 0) kill(A.ranks[i].pid, SIGKILL);
    }
}

/* A local process asks: a key of a rank on another host or of another job
 * (routed through the tree; another job's host only mpirun knows), or
 * anything else of mpirun (dynamic processes). */
static void kvs_request(local_rank *r)
{
    static _Alignas(8) char buf[sizeof(lm_ctl_request) + LM_SPAWN_WIRE_MAX];
    ssize_t got = recv(r->kvs_fd, buf, sizeof buf, MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (got <= 0) { /* the rank is gone, or closed its end */
        close(r->kvs_fd);
        r->kvs_fd = -1;
        return;
    }
    int32_t code = lm_proc_code(r->job, r->world_rank), type = 0;
    if (got >= (ssize_t)sizeof type) memcpy(&type, buf, sizeof type);
    if (type != LM_REQ_KVS_GET) {
        lm_link_send(&A.up, LM_FRAME_CTL, A.node, code, 0, buf, (size_t)got);
        return;
    }
    lm_kvs_request req;
    const lm_layout *l = &A.seg->layout;
    if (got != (ssize_t)sizeof req) {
        lm_kvs_reply rep = {.result = -ENOENT};
        send(r->kvs_fd, &rep, sizeof rep, MSG_DONTWAIT | MSG_NOSIGNAL);
        return;
    }
    memcpy(&req, buf, sizeof req);
    int node = -1; /* another job: mpirun knows its host */
    if (req.job == 0) {
        if (req.rank < 0 || req.rank >= l->world_size) {
            lm_kvs_reply rep = {.result = -ENOENT};
            send(r->kvs_fd, &rep, sizeof rep, MSG_DONTWAIT | MSG_NOSIGNAL);
            return;
        }
        node = lm_layout_node_of(l, req.rank);
    }
    lm_frame f = {.type = LM_FRAME_KVS_GET, .node = node, .rank = code, .value = A.node, .len = sizeof req};
    route(&f, &req);
}

/* Frames addressed to one node: the direct modex and dynamic processes. */
static int is_routed_frame(int type)
{
    return type == LM_FRAME_KVS_GET || type == LM_FRAME_KVS_VALUE || type == LM_FRAME_CTL || type == LM_FRAME_SPAWN ||
           type == LM_FRAME_UNSPAWN;
}

static void from_parent(const lm_frame *f, const char *payload)
{
    if (is_routed_frame(f->type)) {
        route(f, payload);
        return;
    }
    if (f->type == LM_FRAME_SIGNAL) {
        signal_all(f->value);
    } else if (f->type == LM_FRAME_STDIN && f->node != A.node) {
        lm_child_agent *c = lm_subtree_toward(&A.kids, A.node, f->node, A.d.fanout);
        if (c) lm_link_send(&c->link, f->type, f->node, f->rank, f->value, payload, f->len);
    } else if (f->type == LM_FRAME_STDIN) {
        if (f->len == 0) {
            A.in_eof = 1;
        } else {
            char *b = realloc(A.in_buf, f->len);
            if (!b) return;
            A.in_buf = b;
            memcpy(b, payload, f->len);
            A.in_len = f->len;
            A.in_off = 0;
        }
        stdin_write();
    }
}

static void from_child(lm_child_agent *c, const lm_frame *f, const char *payload)
{
    if (f->type == LM_FRAME_DONE && f->node == c->node) {
        c->done = 1;
        return;
    }
    if (f->type == LM_FRAME_KVS_GET || f->type == LM_FRAME_KVS_VALUE) {
        route(f, payload);
        return;
    }
    lm_link_send(&A.up, f->type, f->node, f->rank, f->value, payload, f->len);
}

static void reap(void)
{
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0) return;
        for (int i = 0; i < A.nlocal; i++)
            if (A.ranks[i].pid == pid) {
                local_rank *r = &A.ranks[i];
                lm_exit_wire x;
                lm_rank_exit_read(r->seg, r->local, pid, st, &x);
                lm_link_send(&A.up, LM_FRAME_EXIT, A.node, lm_proc_code(r->job, r->world_rank), 0, &x, sizeof x);
                A.ranks[i].pid = 0;
                A.alive--;
                if (A.ranks[i].kvs_fd >= 0) close(A.ranks[i].kvs_fd);
                A.ranks[i].kvs_fd = -1;
                if (A.ranks[i].job == 0 && A.ranks[i].world_rank == 0 && A.stdin_fd >= 0) {
                    close(A.stdin_fd);
                    A.stdin_fd = -1;
                }
            }
        lm_subtree_reaped(&A.kids, pid, st);
    }
}

/* Forward what one rank stream holds now; an empty OUT frame is its end. */
static void pump_output(local_rank *r, int stream)
{
    static char chunk[OUT_CHUNK];
    for (int round = 0; round < 4 && r->fd[stream] >= 0; round++) {
        ssize_t n = read(r->fd[stream], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n <= 0) {
            close(r->fd[stream]);
            r->fd[stream] = -1;
            n = 0;
        }
        lm_link_send(&A.up, LM_FRAME_OUT, A.node, lm_proc_code(r->job, r->world_rank), stream, chunk, (size_t)n);
    }
}

static int nonblocking_pipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC) != 0) return -1;
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    return 0;
}

static int node_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

/* Start one process here as r: rank `rank` of job sj, `local` in its
 * segment, with its output pipes and its request socket; in is its stdin.
 * 0, or -1 with errno. */
static int start_local(lm_spawn_job *sj, local_rank *r, int rank, int local, int in)
{
    int out[2], err[2], kv[2], saved;
    if (nonblocking_pipe(out) != 0) return -1;
    if (nonblocking_pipe(err) != 0) goto close_out;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, kv) != 0) goto close_err;
    fcntl(kv[0], F_SETFL, O_NONBLOCK);
    pid_t pid = lm_spawn_rank(sj, rank, local, in, out[1], err[1], kv[1]);
    saved = errno;
    close(out[1]);
    close(err[1]);
    close(kv[1]);
    r->fd[1] = out[0];
    r->fd[2] = err[0];
    r->kvs_fd = kv[0];
    if (pid < 0) {
        errno = saved;
        return -1;
    }
    r->pid = pid;
    A.alive++;
    A.pgid = sj->pgid;
    return 0;
close_err:
    close(err[0]);
    close(err[1]);
close_out:
    saved = errno;
    close(out[0]);
    close(out[1]);
    errno = saved;
    return -1;
}

/* A rankfile's ranks in host order, as the counts alone would place them. */
static int placed_in_order(const lm_job_desc *d)
{
    for (int r = 1; r < d->world_size; r++)
        if (d->rank_host[r] < d->rank_host[r - 1]) return 0;
    return 1;
}

/* The slots of this host's ranks name CPUs it has: checked before any
 * starts, so that a bad rankfile ends the job with the reason. */
static int check_bindings(void)
{
    for (int r = 0; A.d.rank_cpus && r < A.d.world_size; r++) {
        cpu_set_t set;
        char why[200];
        if (A.d.rank_host[r] == A.node && A.d.rank_cpus[r] &&
            lm_cpus_from_slots(A.d.rank_cpus[r], &set, why, sizeof why) != 0) {
            fail_up("host %s: rank %d of the rankfile: %s", my_host(), r, why);
            return -1;
        }
    }
    return 0;
}

static int start_ranks(void)
{
    lm_layout layout = {.world_size = A.d.world_size,
                        .reported_world_size = A.d.reported_world_size,
                        .node_count = A.d.nhosts,
                        .node_id = A.node,
                        .local_size = A.d.host_nranks[A.node],
                        .appnum = 0,
                        .universe_size = A.d.universe_size,
                        .node_cpus = node_cpus()};
    if (check_bindings() != 0) return -1;
    /* a rankfile that places ranks out of host order, or in more runs than
     * blocks describe, needs the placement tables */
    if ((A.d.rank_host && !placed_in_order(&A.d)) || lm_layout_from_counts(&layout, A.d.host_nranks, A.d.nhosts) != 0) {
        if (!A.d.rank_host) {
            fail_up("host %s: the job's placement has more runs of hosts with equal counts than a layout holds",
                    my_host());
            return -1;
        }
        layout.kind = LM_LAYOUT_TABLE;
        layout.nblocks = 0;
    }
    lm_node_segment_set_transport_area(lm_shm_area_size, lm_shm_area_format);
    A.seg_fd = lm_node_segment_create_placed(A.d.job_id, &layout, A.d.rank_host, &A.seg);
    if (A.seg_fd < 0) {
        fail_up("host %s: cannot create the node segment: %s", my_host(), strerror(errno));
        return -1;
    }
    A.nlocal = layout.local_size;
    A.ranks = calloc((size_t)A.nlocal, sizeof *A.ranks);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (!A.ranks || devnull < 0) {
        fail_up("host %s: out of resources starting %d ranks", my_host(), A.nlocal);
        return -1;
    }
    for (int i = 0; i < A.nlocal; i++) /* also those never reached if a start fails */
        A.ranks[i].fd[1] = A.ranks[i].fd[2] = A.ranks[i].kvs_fd = -1;
    lm_spawn_job sj = {.path = A.d.path,
                       .argv = (char **)A.d.argv,
                       .env = (char **)A.d.env,
                       .nenv = A.d.nenv,
                       .segment_fd = A.seg_fd,
                       .job_id = A.d.job_id,
                       .world_size = A.d.world_size,
                       .local_size = A.nlocal,
                       .pgid = 0,
                       .rank_cpus = A.d.rank_cpus};
    int rc = 0;
    for (int i = 0; i < A.nlocal && rc == 0; i++) {
        local_rank *r = &A.ranks[i];
        r->world_rank = lm_layout_world_rank_of(&A.seg->layout, A.node, i);
        r->seg = A.seg;
        r->local = i;
        r->fd[1] = r->fd[2] = r->kvs_fd = -1;
        int in[2] = {-1, -1};
        if (r->world_rank == 0 && pipe2(in, O_CLOEXEC) == 0) {
            fcntl(in[1], F_SETFL, O_NONBLOCK);
            A.stdin_fd = in[1];
        }
        rc = start_local(&sj, r, r->world_rank, i, in[0] >= 0 ? in[0] : devnull);
        if (in[0] >= 0) close(in[0]);
    }
    close(devnull);
    if (rc != 0) fail_up("host %s: cannot start its ranks: %s", my_host(), strerror(errno));
    return rc;
}

/* ---- jobs spawned on this host ------------------------------------------ */

static void spawn_failed(int job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void spawn_failed(int job, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lm_link_send(&A.up, LM_FRAME_SPAWNED, A.node, -1, job, msg, strlen(msg) + 1);
}

/* Start this host's part of job ps->job: a segment of its own for the
 * part (node part.node of the job's part.nodes), its ranks with the
 * environment of a spawned job, tracked like this host's ranks. */
static void start_spawned(struct pending_spawn *ps)
{
    lm_spawn_part part;
    const char *end = ps->payload + ps->len, *port = ps->payload + sizeof part;
    const char *p = ps->len > sizeof part ? memchr(port, '\0', (size_t)(end - port)) : NULL;
    char why[600] = "malformed spawn request";
    lm_spawn_cmd *cmds = NULL;
    int count = 0, total = 0;
    if (p) memcpy(&part, ps->payload, sizeof part);
    if (!p || lm_spawn_cmds_decode(p + 1, end, &cmds, &count, &total, why, sizeof why) != 0 || total != ps->n ||
        part.count < 1 || part.first < 0 || part.first + part.count > total || part.node < 0 ||
        part.node >= part.nodes || part.per_node < part.count ||
        lm_spawn_cmds_resolve(cmds, count, my_host(), why, sizeof why) != 0) {
        lm_spawn_cmds_free(cmds, count);
        spawn_failed(ps->job, "%s", why);
        return;
    }
    struct spawned_here *grown = realloc(A.spawned, (size_t)(A.nspawned + 1) * sizeof *grown);
    local_rank *ranks = realloc(A.ranks, (size_t)(A.nlocal + part.count) * sizeof *ranks);
    if (grown) A.spawned = grown;
    if (ranks) A.ranks = ranks;
    if (!grown || !ranks) {
        lm_spawn_cmds_free(cmds, count);
        spawn_failed(ps->job, "host %s: the agent is out of memory", my_host());
        return;
    }
    char job_id[80];
    snprintf(job_id, sizeof job_id, "%s.%d", A.d.job_id, ps->job);
    lm_layout layout = {.world_size = total,
                        .reported_world_size = total,
                        .node_count = part.nodes,
                        .node_id = part.node,
                        .local_size = part.count,
                        .kind = LM_LAYOUT_BLOCK,
                        .ranks_per_node = part.per_node,
                        .universe_size = A.d.universe_size > total ? A.d.universe_size : total,
                        .node_cpus = node_cpus()};
    struct spawned_here *sh = &A.spawned[A.nspawned];
    sh->job = ps->job;
    sh->first = part.first;
    sh->n = part.count;
    sh->seg_fd = lm_node_segment_create(job_id, &layout, &sh->seg);
    if (sh->seg_fd < 0) {
        lm_spawn_cmds_free(cmds, count);
        spawn_failed(ps->job, "host %s: cannot create the node segment: %s", my_host(), strerror(errno));
        return;
    }
    A.nspawned++;
    lm_spawn_env se;
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC), first = A.nlocal, r = 0;
    int rc = lm_spawn_env_init(&se, (char *const *)A.d.env, A.d.nenv, ps->job, port);
    /* the commands' ranks follow each other: those of this part start here */
    for (int i = 0; i < count && rc == 0; i++) {
        lm_spawn_job sj = {
            .segment_fd = sh->seg_fd, .job_id = job_id, .world_size = total, .local_size = part.count, .pgid = A.pgid};
        lm_spawn_env_command(&se, &cmds[i], i, &sj);
        for (int m = 0; m < cmds[i].maxprocs && rc == 0; m++, r++) {
            if (r < part.first || r >= part.first + part.count) continue;
            int local = r - part.first;
            local_rank *lr = &A.ranks[first + local];
            *lr = (local_rank){.world_rank = r, .job = ps->job, .seg = sh->seg, .local = local};
            lr->fd[1] = lr->fd[2] = lr->kvs_fd = -1;
            A.nlocal++;
            rc = start_local(&sj, lr, r, local, devnull);
        }
    }
    if (devnull >= 0) close(devnull);
    lm_spawn_env_free(&se);
    lm_spawn_cmds_free(cmds, count);
    if (rc) { /* what started goes; the exits tell mpirun the rest */
        for (int i = first; i < A.nlocal; i++)
            if (A.ranks[i].pid > 0) kill(A.ranks[i].pid, SIGKILL);
        spawn_failed(ps->job, "host %s: cannot start the spawned processes: %s", my_host(), strerror(errno));
        return;
    }
    lm_link_send(&A.up, LM_FRAME_SPAWNED, A.node, -1, ps->job, NULL, 0);
}

static int start_children(void)
{
    char why[512];
    if (lm_subtree_start(&A.kids, &A.d, A.job, A.job_len, A.node, why, sizeof why) == 0) return 0;
    fail_up("%s", why);
    return -1;
}

/* The first frame from the parent is the job; nothing else may come first. */
static int read_job(void)
{
    for (;;) {
        lm_frame f;
        const char *payload;
        if (lm_link_next(&A.up, &f, &payload)) {
            if (f.type != LM_FRAME_JOB) return -1;
            A.node = f.node;
            A.job = malloc(f.len ? f.len : 1);
            if (!A.job) return -1;
            memcpy(A.job, payload, f.len);
            A.job_len = f.len;
            if (lm_job_decode(A.job, A.job_len, &A.d) != 0) return -1;
            return A.node >= 0 && A.node < A.d.nhosts ? 0 : -1;
        }
        struct pollfd p = {.fd = A.up.rfd, .events = POLLIN};
        if (poll(&p, 1, -1) < 0 && errno != EINTR) return -1;
        if (lm_link_read(&A.up) != 0) return -1;
    }
}

static int everything_ended(void)
{
    if (A.alive) return 0;
    for (int i = 0; i < A.nlocal; i++)
        if (A.ranks[i].fd[1] >= 0 || A.ranks[i].fd[2] >= 0) return 0;
    return lm_subtree_done(&A.kids);
}

/* Ranks are gone; what they wrote is in the pipes. Read it without waiting
 * for writers that outlived them (their own children). */
static void drain_output(void)
{
    for (int i = 0; i < A.nlocal; i++)
        for (int s = 1; s <= 2; s++) {
            local_rank *r = &A.ranks[i];
            struct pollfd p = {.fd = r->fd[s], .events = POLLIN};
            while (r->fd[s] >= 0 && poll(&p, 1, 0) > 0) pump_output(r, s);
            if (r->fd[s] >= 0) {
                close(r->fd[s]);
                r->fd[s] = -1;
                lm_link_send(&A.up, LM_FRAME_OUT, A.node, lm_proc_code(r->job, r->world_rank), s, NULL, 0);
            }
        }
}

/* A link that went down cuts this host's ranks off: mpirun ends the job
 * everywhere, naming the host and the link. Looked at after each wake-up,
 * at most every LINK_CHECK_MS. */
static void check_links(void)
{
    static struct timespec last;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000;
    if (ms < LINK_CHECK_MS) return;
    last = now;
    const char *down = lm_link_watch_down(&A.links);
    if (!down) return;
    fail_up("host %s: network link %s went down", my_host(), down);
    A.link_reported = 1;
}

static void run(int sfd)
{
    int cap = 0;
    struct pollfd *pfd = NULL;
    void **who = NULL;
    int *kind = NULL;
    int done_sent = 0;
    enum { K_SIG, K_UP_IN, K_UP_OUT, K_KID_IN, K_KID_OUT, K_RANK_OUT, K_RANK_ERR, K_STDIN, K_RANK_KVS };
    for (;;) {
        /* Frames that arrived with the job (stdin, a signal) are already
         * buffered: no poll would report them. */
        lm_frame bf;
        const char *bp;
        while (lm_link_next(&A.up, &bf, &bp)) from_parent(&bf, bp);
        /* jobs to spawn here grow A.ranks: only now, with no pointer into it held */
        while (A.pending) {
            struct pending_spawn *ps = A.pending;
            A.pending = ps->next;
            start_spawned(ps);
            free(ps);
        }
        int need = 3 + 2 * A.kids.n + 3 * A.nlocal + 1;
        if (need > cap) {
            struct pollfd *p2 = realloc(pfd, (size_t)need * sizeof *pfd);
            if (p2) pfd = p2;
            void **w2 = realloc(who, (size_t)need * sizeof *who);
            if (w2) who = w2;
            int *k2 = realloc(kind, (size_t)need * sizeof *kind);
            if (k2) kind = k2;
            if (!p2 || !w2 || !k2) {
                fail_up("host %s: out of memory", my_host());
                kill_all();
                goto free_poll_arrays;
            }
            cap = need;
        }
        if (A.alive == 0) drain_output();
        /* Done, but still here: ranks on other hosts may yet ask for keys
         * of ours, until mpirun ends the job by closing the channel. */
        if (!done_sent && everything_ended()) {
            lm_link_send(&A.up, LM_FRAME_DONE, A.node, -1, 0, NULL, 0);
            done_sent = 1;
        }
        int n = 0;
        pfd[n] = (struct pollfd){.fd = sfd, .events = POLLIN};
        kind[n++] = K_SIG;
        pfd[n] = (struct pollfd){.fd = A.up.rfd, .events = POLLIN};
        kind[n++] = K_UP_IN;
        if (lm_link_queued(&A.up)) {
            pfd[n] = (struct pollfd){.fd = A.up.wfd, .events = POLLOUT};
            kind[n++] = K_UP_OUT;
        }
        for (int k = 0; k < A.kids.n; k++) {
            lm_child_agent *c = &A.kids.kids[k];
            if (c->link.rfd >= 0) {
                pfd[n] = (struct pollfd){.fd = c->link.rfd, .events = POLLIN};
                who[n] = c;
                kind[n++] = K_KID_IN;
            }
            if (lm_link_queued(&c->link)) {
                pfd[n] = (struct pollfd){.fd = c->link.wfd, .events = POLLOUT};
                who[n] = c;
                kind[n++] = K_KID_OUT;
            }
        }
        if (lm_link_queued(&A.up) < UP_QUEUE_MAX)
            for (int i = 0; i < A.nlocal; i++)
                for (int s = 1; s <= 2; s++)
                    if (A.ranks[i].fd[s] >= 0) {
                        pfd[n] = (struct pollfd){.fd = A.ranks[i].fd[s], .events = POLLIN};
                        who[n] = &A.ranks[i];
                        kind[n++] = s == 1 ? K_RANK_OUT : K_RANK_ERR;
                    }
        if (A.stdin_fd >= 0 && A.in_off < A.in_len) {
            pfd[n] = (struct pollfd){.fd = A.stdin_fd, .events = POLLOUT};
            kind[n++] = K_STDIN;
        }
        for (int i = 0; i < A.nlocal; i++)
            if (A.ranks[i].kvs_fd >= 0) {
                pfd[n] = (struct pollfd){.fd = A.ranks[i].kvs_fd, .events = POLLIN};
                who[n] = &A.ranks[i];
                kind[n++] = K_RANK_KVS;
            }
        /* while ranks run, the links are looked at every LINK_CHECK_MS */
        int watching = A.links.n && !A.link_reported && A.alive > 0;
        if (poll(pfd, (nfds_t)n, watching ? LINK_CHECK_MS : -1) < 0 && errno != EINTR) break;
        if (watching) check_links();
        for (int i = 0; i < n; i++) {
            if (!pfd[i].revents) continue;
            switch (kind[i]) {
            case K_SIG: {
                struct signalfd_siginfo si;
                while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                    if (si.ssi_signo == SIGCHLD) {
                        reap();
                    } else { /* told to stop by someone other than mpirun */
                        fail_up("host %s: the launch agent received %s", my_host(), strsignal((int)si.ssi_signo));
                        flush_up();
                        kill_all();
                        goto free_poll_arrays;
                    }
                }
                break;
            }
            case K_UP_IN: {
                int eof = lm_link_read(&A.up) != 0;
                lm_frame f;
                const char *p;
                while (lm_link_next(&A.up, &f, &p)) from_parent(&f, p);
                if (eof) { /* mpirun or our parent agent is gone: so is the job */
                    kill_all();
                    goto free_poll_arrays;
                }
                break;
            }
            case K_UP_OUT:
                if (lm_link_flush(&A.up) != 0) {
                    kill_all();
                    goto free_poll_arrays;
                }
                break;
            case K_KID_IN: {
                char why[512];
                if (lm_subtree_read(who[i], &A.d, from_child, why, sizeof why)) fail_up("%s", why);
                break;
            }
            case K_KID_OUT: lm_link_flush(&((lm_child_agent *)who[i])->link); break;
            case K_RANK_OUT:
            case K_RANK_ERR: pump_output(who[i], kind[i] == K_RANK_OUT ? 1 : 2); break;
            case K_STDIN: stdin_write(); break;
            case K_RANK_KVS: kvs_request(who[i]); break;
            }
        }
    }
free_poll_arrays:
    /* Processes the ranks left behind in the job's group go with the job. */
    if (A.pgid > 0 && kill(-A.pgid, 0) == 0) kill(-A.pgid, SIGKILL);
    free(pfd);
    free(who);
    free(kind);
}

int lm_agent_main(void)
{
    sigset_t mask;
    sigemptyset(&mask);
    int handled[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++) sigaddset(&mask, handled[i]);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    /* The channel: stdin and stdout. Nothing else may write to stdout. */
    int up_in = fcntl(0, F_DUPFD_CLOEXEC, 3), up_out = fcntl(1, F_DUPFD_CLOEXEC, 3);
    int devnull = open("/dev/null", O_RDWR);
    if (sfd < 0 || up_in < 0 || up_out < 0 || devnull < 0) {
        fprintf(stderr, "mpirun --lm-agent: cannot set up: %s\n", strerror(errno));
        return 1;
    }
    dup2(devnull, 0);
    dup2(devnull, 1);
    close(devnull);
    fcntl(up_in, F_SETFL, O_NONBLOCK);
    fcntl(up_out, F_SETFL, O_NONBLOCK);
    lm_link_init(&A.up, up_in, up_out);
    if (read_job() != 0) {
        fprintf(stderr, "mpirun --lm-agent: no valid job arrived on stdin (this mode is for mpirun itself)\n");
        return 1;
    }
    int rc = 0;
    if (chdir(A.d.cwd) != 0) {
        fail_up("host %s: cannot enter the working directory %s: %s", my_host(), A.d.cwd, strerror(errno));
        rc = 1;
    } else if (access(A.d.path, X_OK) != 0) {
        fail_up("host %s: cannot execute %s: %s", my_host(), A.d.path, strerror(errno));
        rc = 1;
    } else if (start_children() != 0 || start_ranks() != 0) {
        rc = 1;
    } else {
        lm_link_watch_init(&A.links);
        lm_link_send(&A.up, LM_FRAME_STARTED, A.node, -1, A.nlocal, NULL, 0);
    }
    /* Also after a failure, which is reported: mpirun then ends the job,
     * and what did start here ends through its signals or this channel's end. */
    run(sfd);
    lm_subtree_free(&A.kids);
    lm_job_desc_free(&A.d);
    return rc;
}
