/* Network backend on TCP sockets (see tcp.h). Every frame starts with a
 * head of TCP_HEAD bytes:
 *
 *   [0, 16)   prefix: the sender's world rank and job, the frame's kind,
 *             the AM header's length, the bytes that follow the head
 *   [16, 80)  an AM's header (hdr_len used), or a read request's or read
 *             answer's arguments
 *   [80, ..)  an AM's payload, or the bytes a read asked for
 *
 * The head has the layout of an ofi message (ofi.c), so the payload of an
 * AM read whole into a buffer sits at a 16-byte aligned offset and
 * handlers may read structures from it in place; the unused header bytes
 * cost at most 64 bytes a message on the wire.
 *
 * Receiving: each incoming connection has a staging buffer of TCP_STAGE
 * bytes. One recv fills it with whatever has arrived, often several small
 * frames, which are delivered from there; a frame that does not fit is
 * read from the socket straight into its destination (an AM's buffer, or
 * the program's buffer for a read's answer).
 *
 * Sending: one sendmsg of the head and the payload's pieces, without a
 * copy. What the socket does not take at once stays queued on the
 * connection (the rest of a message copied, an answer to a read by
 * reference to the exposed buffer, which lives until the reader says it
 * has everything), and later sends to that peer wait (LM_EAGAIN) until the
 * queue is written, so the stream keeps the order of the sends.
 *
 * Polling: a single connection is read with one recv per progress call,
 * and new connections are looked for every TCP_LISTEN_EVERY calls; with
 * more connections one epoll_wait tells which have data. A recv per
 * connection costs a spinning rank more than one epoll_wait once there
 * are two: with 8 ranks on 2 cores over 4 virtual hosts an 8-byte
 * allreduce took 4.3-6.0 ms reading up to 4 connections directly, 0.7-1.0
 * ms with epoll from 2 on (libfabric's tcp;ofi_rxm: 3.2-4.7 ms). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif
#include "tcp.h"
#include "am_dispatch.h"
#include "util/lm_error.h"
#include "util/lm_hashmap.h"
#include "util/lm_mem.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define TCP_PREFIX 16u
#define TCP_HEAD (TCP_PREFIX + LM_AM_HDR_MAX)
#define TCP_MAX_PAYLOAD (64u * 1024u)
#define TCP_STAGE 4096u /* an incoming connection's staging buffer */
#define TCP_ADDR_KEY "tcp"
#define TCP_ADDR_MAX 64
#define TCP_MISS_RETRY_NS 200000 /* ask the store again for a missing address after 0.2 ms */
#define TCP_DIRECT_POLL_MAX 1    /* connections read directly at each progress call */
#define TCP_LISTEN_EVERY 64      /* progress calls between looks for new connections */

enum tcp_kind { K_AM = 1, K_READ_REQ, K_READ_DATA, K_WRITE, K_WRITE_ACK };

typedef struct tcp_prefix {
    int32_t src; /* world rank in its job */
    uint16_t job;
    uint8_t kind, hdr_len;
    uint32_t len; /* bytes after the head */
    uint32_t reserved;
} tcp_prefix;
_Static_assert(sizeof(tcp_prefix) == TCP_PREFIX, "prefix size");

/* In the header area of K_READ_REQ, K_READ_DATA, K_WRITE and K_WRITE_ACK
 * heads. */
typedef struct tcp_read_args {
    uint64_t id; /* the reader's (writer's) number for the read (write) */
    uint64_t addr, rkey, len;
} tcp_read_args;

/* Bytes waiting to be written on a connection. */
typedef struct tcp_out {
    struct tcp_out *next;
    const unsigned char *p;
    size_t len, off;
    unsigned char *owned; /* p is this allocation (freed once written), or NULL: an exposed buffer */
} tcp_out;

struct tcp_conn;

/* What this rank keeps per peer it talked to (R1). */
typedef struct tcp_peer {
    int rank;
    struct tcp_conn *conn; /* the connection it sends to the peer on */
} tcp_peer;

/* A buffer exposed for a peer's reads, and writes where writable (window
 * memory). */
typedef struct tcp_exposed {
    struct tcp_exposed *prev, *next;
    const unsigned char *buf;
    size_t len;
    uint64_t key;
    int writable;
} tcp_exposed;

/* A read this rank asked a peer for, or a write it sent (answered by an
 * acknowledgement once the bytes are in the peer's memory); one list, ids
 * from one counter. */
typedef struct tcp_read {
    struct tcp_read *next;
    uint64_t id;
    int src;
    unsigned char *local;
    size_t len;
    lm_rget_done done;
    void *arg;
} tcp_read;

/* A connection to a peer, opened by either side, the frame being read
 * from it and the bytes waiting to be written to it. */
typedef struct tcp_conn {
    struct tcp_conn *prev, *next;
    int fd;
    int src; /* the peer; for one it opened, known from its first frame (-1 before) */
    tcp_out *outq, **outq_tail;
    struct tcp_conn *next_busy; /* in the list of connections with queued bytes */
    int busy;
    unsigned char *stage;
    size_t stage_len, stage_off;
    /* a frame larger than the stage, read straight into body */
    int in_frame;
    tcp_prefix pre;
    _Alignas(16) unsigned char hdr[LM_AM_HDR_MAX];
    unsigned char *body;
    size_t body_len, body_got;
    tcp_read *rd;       /* K_READ_DATA: the read it answers */
    uint64_t write_id;  /* K_WRITE: the writer's number, for the acknowledgement */
    unsigned char *big; /* K_AM: the buffer body points into (aligned; TCP_HEAD + payload) */
} tcp_conn;

static struct {
    int on;
    lm_tcp_config cfg;
    int listen_fd, ep;
    lm_hashmap peers; /* world rank -> tcp_peer */
    tcp_conn *busy;
    tcp_conn *conns;
    int nconns;
    tcp_exposed *exposed;
    tcp_read *reads;
    uint64_t next_key, next_read;
    unsigned calls;
    int reading;    /* inside a progress call's reading: a handler's progress only writes */
    int finalizing; /* a peer that is gone takes nothing more: its bytes are dropped */
    int miss_rank;
    struct timespec miss_at;
    char error[256];
    lm_transport_counters cnt;
} N = {.listen_fd = -1, .ep = -1, .miss_rank = -1};

const char *lm_tcp_error(void) { return N.error; }
size_t lm_tcp_max_payload(void) { return TCP_MAX_PAYLOAD; }

static int set_error(const char *what)
{
    snprintf(N.error, sizeof N.error, "%s: %s", what, strerror(errno));
    return LM_EIO;
}

/* The address other hosts reach this one at: the first IPv4 address of an
 * interface that is up and not the loopback, else the loopback (ranks
 * whose hosts are names on one machine). */
static int reachable_address(struct in_addr *out)
{
    struct ifaddrs *list, *i;
    out->s_addr = htonl(INADDR_LOOPBACK);
    if (getifaddrs(&list) != 0) return 0;
    for (i = list; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK)) {
            *out = ((const struct sockaddr_in *)i->ifa_addr)->sin_addr;
            break;
        }
    freeifaddrs(list);
    return 0;
}

static void close_all(void);

int lm_tcp_init(const lm_tcp_config *cfg)
{
    N.cfg = *cfg;
    N.error[0] = '\0';
    N.miss_rank = -1;
    memset(&N.cnt, 0, sizeof N.cnt);
    lm_hashmap_init(&N.peers, LM_MEM_PEER_TABLE);
    N.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t alen = sizeof a;
    int rc = LM_OK;
    if (N.listen_fd < 0) rc = set_error("socket");
    else if (bind(N.listen_fd, (struct sockaddr *)&a, sizeof a) != 0) rc = set_error("bind");
    else if (listen(N.listen_fd, 128) != 0) rc = set_error("listen");
    else if (getsockname(N.listen_fd, (struct sockaddr *)&a, &alen) != 0) rc = set_error("getsockname");
    else if ((N.ep = epoll_create1(EPOLL_CLOEXEC)) < 0) rc = set_error("epoll_create1");
    if (rc == LM_OK) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL}; /* NULL: the listening socket */
        if (epoll_ctl(N.ep, EPOLL_CTL_ADD, N.listen_fd, &ev) != 0) rc = set_error("epoll_ctl");
    }
    if (rc == LM_OK) {
        struct in_addr ip;
        reachable_address(&ip);
        char addr[TCP_ADDR_MAX], ipbuf[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &ip, ipbuf, sizeof ipbuf);
        int n = snprintf(addr, sizeof addr, "%s:%u", ipbuf, (unsigned)ntohs(a.sin_port));
        if (!N.cfg.put || N.cfg.put(TCP_ADDR_KEY, addr, (size_t)n + 1) != 0) {
            snprintf(N.error, sizeof N.error, "cannot publish the listening address");
            rc = LM_EIO;
        }
    }
    if (rc != LM_OK) {
        close_all();
        return rc;
    }
    N.on = 1;
    return LM_OK;
}

static int64_t ns_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - t->tv_sec) * 1000000000 + (now.tv_nsec - t->tv_nsec);
}

static tcp_peer *peer_of(int rank)
{
    tcp_peer *p = lm_hashmap_get(&N.peers, rank);
    if (p) return p;
    p = lm_calloc(LM_MEM_PEER_TABLE, 1, sizeof *p);
    if (!p) return NULL;
    p->rank = rank;
    if (lm_hashmap_put(&N.peers, rank, p) != 0) {
        lm_free(LM_MEM_PEER_TABLE, p);
        return NULL;
    }
    return p;
}

/* A connection to read from and write to, on the list and in the epoll
 * set; NULL when out of resources. */
static tcp_conn *new_conn(int fd, int src)
{
    tcp_conn *c = lm_calloc(LM_MEM_TRANSPORT, 1, sizeof *c);
    unsigned char *stage = c ? lm_malloc(LM_MEM_TRANSPORT, TCP_STAGE) : NULL;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (!c || !stage || epoll_ctl(N.ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
        lm_free(LM_MEM_TRANSPORT, stage);
        lm_free(LM_MEM_TRANSPORT, c);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
    c->src = src;
    c->stage = stage;
    c->outq_tail = &c->outq;
    c->next = N.conns;
    if (N.conns) N.conns->prev = c;
    N.conns = c;
    N.nconns++;
    return c;
}

/* The peer, connected on first contact unless it connected first (its
 * connection then serves both ways). LM_EAGAIN while it has not published
 * its address (it is still starting). */
static int peer_to(int dst, tcp_peer **out)
{
    tcp_peer *p = peer_of(dst);
    if (!p) return LM_EAGAIN;
    *out = p;
    if (p->conn) return LM_OK;
    if (dst == N.miss_rank && ns_since(&N.miss_at) < TCP_MISS_RETRY_NS) return LM_EAGAIN;
    char addr[TCP_ADDR_MAX];
    long n = N.cfg.get ? N.cfg.get(dst, TCP_ADDR_KEY, addr, sizeof addr - 1) : -ENOENT;
    if (n == -ENOENT) {
        N.miss_rank = dst;
        clock_gettime(CLOCK_MONOTONIC, &N.miss_at);
        return LM_EAGAIN;
    }
    if (n <= 0 || n >= (long)sizeof addr) return LM_EPEER;
    addr[n] = '\0';
    char *colon = strrchr(addr, ':');
    struct sockaddr_in a = {.sin_family = AF_INET};
    if (!colon) return LM_EPEER;
    *colon = '\0';
    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) return LM_EPEER;
    a.sin_port = htons((uint16_t)atoi(colon + 1));
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return set_error("socket");
    /* the peer listens before it publishes: the kernel completes the
     * connection whether or not the peer is in the library now */
    int rc;
    do rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        snprintf(N.error, sizeof N.error, "cannot connect to rank %d at %s:%s: %s", dst, addr, colon + 1,
                 strerror(errno));
        close(fd);
        return LM_EIO;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (!(p->conn = new_conn(fd, dst))) {
        close(fd);
        snprintf(N.error, sizeof N.error, "out of resources for a connection to rank %d", dst);
        return LM_EIO;
    }
    if (N.miss_rank == dst) N.miss_rank = -1;
    return LM_OK;
}

static void make_head(unsigned char *h, int kind, const void *hdr, size_t hdr_len, size_t len)
{
    tcp_prefix pre = {.src = N.cfg.world_rank,
                      .job = (uint16_t)N.cfg.job,
                      .kind = (uint8_t)kind,
                      .hdr_len = (uint8_t)hdr_len,
                      .len = (uint32_t)len};
    memcpy(h, &pre, sizeof pre);
    memcpy(h + TCP_PREFIX, hdr, hdr_len);
    if (hdr_len < LM_AM_HDR_MAX) memset(h + TCP_PREFIX + hdr_len, 0, LM_AM_HDR_MAX - hdr_len);
}

static void mark_busy(tcp_conn *c)
{
    if (c->busy) return;
    c->busy = 1;
    c->next_busy = N.busy;
    N.busy = c;
}

static int queue_out(tcp_conn *c, const unsigned char *data, size_t len, unsigned char *owned)
{
    tcp_out *o = lm_malloc(LM_MEM_TRANSPORT, sizeof *o);
    if (!o) return LM_ENOMEM;
    *o = (tcp_out){.p = data, .len = len, .owned = owned};
    *c->outq_tail = o;
    c->outq_tail = &o->next;
    mark_busy(c);
    return LM_OK;
}

/* Queue a copy of the bytes of iov[0..n) from byte `from` on. */
static int queue_rest(tcp_conn *c, const struct iovec *iov, int n, size_t from)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) total += iov[i].iov_len;
    unsigned char *copy = lm_malloc(LM_MEM_TRANSPORT, total - from);
    if (!copy) return LM_ENOMEM;
    size_t at = 0, skip = from;
    for (int i = 0; i < n; i++) {
        size_t l = iov[i].iov_len;
        if (skip >= l) {
            skip -= l;
            continue;
        }
        memcpy(copy + at, (const unsigned char *)iov[i].iov_base + skip, l - skip);
        at += l - skip;
        skip = 0;
    }
    int rc = queue_out(c, copy, total - from, copy);
    if (rc != LM_OK) lm_free(LM_MEM_TRANSPORT, copy);
    return rc;
}

static void drop_out(tcp_conn *c)
{
    while (c->outq) {
        tcp_out *o = c->outq;
        c->outq = o->next;
        lm_free(LM_MEM_TRANSPORT, o->owned);
        lm_free(LM_MEM_TRANSPORT, o);
    }
    c->outq_tail = &c->outq;
}

/* Write what is queued on c, as far as the socket takes it. */
static void flush_out(tcp_conn *c)
{
    while (c->outq) {
        tcp_out *o = c->outq;
        ssize_t n = send(c->fd, o->p + o->off, o->len - o->off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            if (!N.finalizing)
                lm_fatal("the network transport (tcp) failed writing to rank %d: %s", c->src, strerror(errno));
            drop_out(c); /* a peer that is gone takes nothing more */
            return;
        }
        o->off += (size_t)n;
        if (o->off < o->len) return;
        c->outq = o->next;
        if (!c->outq) c->outq_tail = &c->outq;
        lm_free(LM_MEM_TRANSPORT, o->owned);
        lm_free(LM_MEM_TRANSPORT, o);
    }
}

static int flush_busy(void)
{
    int n = 0;
    for (tcp_conn **at = &N.busy; *at;) {
        tcp_conn *c = *at;
        flush_out(c);
        if (c->outq) {
            at = &c->next_busy;
            continue;
        }
        *at = c->next_busy;
        c->busy = 0;
        n++;
    }
    return n;
}

/* Send a head and up to two pieces now, queueing what the socket does not
 * take once some of it went. may_refuse: LM_EAGAIN when nothing could go
 * (else all of it is queued). */
static int send_frame(tcp_conn *c, const unsigned char *head, const void *p0, size_t l0, const void *p1, size_t l1,
                      int may_refuse)
{
    struct iovec iov[3] = {{(void *)head, TCP_HEAD}, {(void *)p0, l0}, {(void *)p1, l1}};
    int niov = l1 ? 3 : l0 ? 2 : 1;
    size_t total = TCP_HEAD + l0 + l1;
    if (c->outq) {
        flush_out(c);
        if (c->outq) return may_refuse ? LM_EAGAIN : queue_rest(c, iov, niov, 0);
    }
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
    ssize_t n;
    do n = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return may_refuse ? LM_EAGAIN : queue_rest(c, iov, niov, 0);
    if (n < 0) {
        snprintf(N.error, sizeof N.error, "writing to rank %d: %s", c->src, strerror(errno));
        return LM_EIO;
    }
    if ((size_t)n == total) return LM_OK;
    return queue_rest(c, iov, niov, (size_t)n);
}

int lm_tcp_send(int dst, const void *hdr, size_t hdr_len, const void *p0, size_t l0, const void *p1, size_t l1)
{
    if (!N.on) return LM_EPEER;
    if (hdr_len == 0 || hdr_len > LM_AM_HDR_MAX || l0 + l1 > TCP_MAX_PAYLOAD) return LM_EINVAL;
    tcp_peer *p;
    int rc = peer_to(dst, &p);
    if (rc != LM_OK) return rc;
    _Alignas(16) unsigned char head[TCP_HEAD];
    make_head(head, K_AM, hdr, hdr_len, l0 + l1);
    rc = send_frame(p->conn, head, p0, l0, p1, l1, 1);
    if (rc == LM_EAGAIN) {
        N.cnt.send_eagain++;
        return rc;
    }
    if (rc != LM_OK) return rc;
    N.cnt.am_sent++;
    N.cnt.am_bytes_sent += l0 + l1;
    return LM_OK;
}

/* ---- rendezvous --------------------------------------------------------- */

static int expose(const void *buf, size_t len, int writable, uint64_t *addr, uint64_t *rkey, void **handle)
{
    if (!N.on || len == 0) return LM_ENOTSUP;
    tcp_exposed *e = lm_malloc(LM_MEM_TRANSPORT, sizeof *e);
    if (!e) return LM_ENOTSUP;
    *e = (tcp_exposed){.buf = buf, .len = len, .key = ++N.next_key, .writable = writable, .next = N.exposed};
    if (N.exposed) N.exposed->prev = e;
    N.exposed = e;
    *addr = (uint64_t)(uintptr_t)buf;
    *rkey = e->key;
    *handle = e;
    return LM_OK;
}

int lm_tcp_expose(const void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle)
{
    return expose(buf, len, 0, addr, rkey, handle);
}

int lm_tcp_expose_rma(void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle)
{
    return expose(buf, len, 1, addr, rkey, handle);
}

void lm_tcp_unexpose(void *handle)
{
    tcp_exposed *e = handle;
    if (!N.on || !e) return;
    if (e->prev) e->prev->next = e->next;
    else N.exposed = e->next;
    if (e->next) e->next->prev = e->prev;
    lm_free(LM_MEM_TRANSPORT, e);
}

/* A read or write this rank starts: its numbered record and room for its
 * frame's head; NULL for want of memory. */
static tcp_read *pending_new(int peer, void *local, size_t len, lm_rget_done done, void *arg, unsigned char **head)
{
    tcp_read *rd = lm_malloc(LM_MEM_TRANSPORT, sizeof *rd);
    *head = lm_malloc(LM_MEM_TRANSPORT, TCP_HEAD);
    if (!rd || !*head) {
        lm_free(LM_MEM_TRANSPORT, rd);
        lm_free(LM_MEM_TRANSPORT, *head);
        return NULL;
    }
    *rd = (tcp_read){.id = ++N.next_read, .src = peer, .local = local, .len = len, .done = done, .arg = arg};
    return rd;
}

/* Started: a later frame answers it (the data, or the acknowledgement). */
static void pending_add(tcp_read *rd, uint64_t *ops, uint64_t *bytes)
{
    rd->next = N.reads;
    N.reads = rd;
    (*ops)++;
    *bytes += rd->len;
}

int lm_tcp_rget_async(int src, void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done, void *arg)
{
    if (!N.on || len == 0 || len > UINT32_MAX) return LM_ENOTSUP;
    tcp_peer *p;
    if (peer_to(src, &p) != LM_OK) return LM_ENOTSUP; /* it wrote to us, so this is rare */
    unsigned char *head;
    tcp_read *rd = pending_new(src, local, len, done, arg, &head);
    if (!rd) return LM_ENOMEM;
    tcp_read_args a = {.id = rd->id, .addr = addr, .rkey = rkey, .len = len};
    make_head(head, K_READ_REQ, &a, sizeof a, 0);
    /* the request goes now or after what is queued, never refused */
    int rc = send_frame(p->conn, head, NULL, 0, NULL, 0, 0);
    lm_free(LM_MEM_TRANSPORT, head);
    if (rc != LM_OK) {
        lm_free(LM_MEM_TRANSPORT, rd);
        return rc == LM_EIO ? LM_EIO : LM_ENOTSUP;
    }
    pending_add(rd, &N.cnt.rget_ops, &N.cnt.rget_bytes);
    return LM_OK;
}

/* Writes up to a stage's worth go as one frame (copied where the socket
 * does not take them at once); larger ones from the program's buffer by
 * reference, which stays untouched until the acknowledgement. */
int lm_tcp_rput_async(int dst, const void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done,
                      void *arg)
{
    if (!N.on || len == 0 || len > UINT32_MAX) return LM_ENOTSUP;
    tcp_peer *p;
    int prc = peer_to(dst, &p);
    if (prc != LM_OK) return prc == LM_EAGAIN ? LM_EAGAIN : LM_ENOTSUP;
    unsigned char *head;
    tcp_read *wr = pending_new(dst, NULL, len, done, arg, &head);
    if (!wr) return LM_ENOMEM;
    tcp_read_args a = {.id = wr->id, .addr = addr, .rkey = rkey, .len = len};
    make_head(head, K_WRITE, &a, sizeof a, len);
    int rc;
    if (len <= TCP_STAGE) {
        rc = send_frame(p->conn, head, local, len, NULL, 0, 0);
        lm_free(LM_MEM_TRANSPORT, head);
    } else {
        rc = queue_out(p->conn, head, TCP_HEAD, head);
        if (rc == LM_OK) rc = queue_out(p->conn, local, len, NULL);
        else lm_free(LM_MEM_TRANSPORT, head);
        if (rc == LM_OK) flush_out(p->conn);
    }
    if (rc != LM_OK) {
        lm_free(LM_MEM_TRANSPORT, wr);
        return rc == LM_EIO ? LM_EIO : LM_ENOMEM;
    }
    pending_add(wr, &N.cnt.rput_ops, &N.cnt.rput_bytes);
    return LM_OK;
}

/* The exposure a peer's read or write names, with the range checked. */
static unsigned char *exposed_range(int src, const tcp_read_args *a, int write)
{
    tcp_exposed *e = N.exposed;
    while (e && e->key != a->rkey) e = e->next;
    uintptr_t lo = (uintptr_t)a->addr;
    if (!e || (write && !e->writable) || lo < (uintptr_t)e->buf || a->len > e->len ||
        lo - (uintptr_t)e->buf > e->len - a->len)
        lm_fatal("the network transport (tcp): rank %d %s bytes that are not exposed%s", src,
                 write ? "wrote to" : "asked for", write ? " for writing" : "");
    return (unsigned char *)lo;
}

/* A write is in: the writer hears it. */
static void acknowledge_write(int src, uint64_t id)
{
    tcp_peer *p;
    if (peer_to(src, &p) != LM_OK) lm_fatal("the network transport (tcp): cannot answer rank %d: %s", src, N.error);
    unsigned char head[TCP_HEAD];
    tcp_read_args back = {.id = id};
    make_head(head, K_WRITE_ACK, &back, sizeof back, 0);
    if (send_frame(p->conn, head, NULL, 0, NULL, 0, 0) != LM_OK)
        lm_fatal("the network transport (tcp): cannot answer rank %d", src);
}

/* A peer asks for bytes this rank exposed: they go from the program's
 * buffer, after a head that names the read. */
static void serve_read(int src, const tcp_read_args *a)
{
    uintptr_t lo = (uintptr_t)exposed_range(src, a, 0);
    tcp_peer *p;
    if (peer_to(src, &p) != LM_OK) lm_fatal("the network transport (tcp): cannot answer rank %d: %s", src, N.error);
    if (a->len <= TCP_STAGE) {
        /* a small read (one-sided Get): one frame, one system call */
        unsigned char head[TCP_HEAD];
        tcp_read_args back = {.id = a->id, .len = a->len};
        make_head(head, K_READ_DATA, &back, sizeof back, a->len);
        if (send_frame(p->conn, head, (const void *)lo, a->len, NULL, 0, 0) != LM_OK)
            lm_fatal("the network transport (tcp): cannot answer rank %d", src);
        return;
    }
    unsigned char *head = lm_malloc(LM_MEM_TRANSPORT, TCP_HEAD);
    if (!head) lm_fatal("the network transport (tcp): out of memory answering rank %d", src);
    tcp_read_args back = {.id = a->id, .len = a->len};
    make_head(head, K_READ_DATA, &back, sizeof back, a->len);
    /* queued whole, the data by reference: it stays exposed until the
     * reader has all of it */
    if (queue_out(p->conn, head, TCP_HEAD, head) != LM_OK ||
        queue_out(p->conn, (const unsigned char *)lo, a->len, NULL) != LM_OK)
        lm_fatal("the network transport (tcp): out of memory answering rank %d", src);
    flush_out(p->conn);
}

static tcp_read *take_read(uint64_t id)
{
    for (tcp_read **at = &N.reads; *at; at = &(*at)->next)
        if ((*at)->id == id) {
            tcp_read *rd = *at;
            *at = rd->next;
            return rd;
        }
    return NULL;
}

/* ---- receiving ---------------------------------------------------------- */

static int sender_of(const tcp_prefix *pre)
{
    /* a sender of another job is named by the id this process gives it */
    if (pre->job == N.cfg.job) return pre->src;
    return N.cfg.proc_id ? N.cfg.proc_id(pre->job, pre->src) : -1;
}

static void deliver_am(const tcp_prefix *pre, const unsigned char *hdr, const unsigned char *payload)
{
    int src = sender_of(pre);
    if (src < 0) lm_fatal("the network transport (tcp): no memory for rank %d of job %d", (int)pre->src, pre->job);
    N.cnt.am_received++;
    N.cnt.am_bytes_received += pre->len;
    lm_am_deliver(src, hdr, pre->hdr_len, payload, pre->len);
}

static void read_finished(tcp_read *rd)
{
    lm_rget_done done = rd->done;
    void *arg = rd->arg;
    lm_free(LM_MEM_TRANSPORT, rd);
    done(arg);
}

/* The first frame on a connection a peer opened names the peer; unless
 * this rank has a connection to it already (both connected at once), it
 * sends on this one too. Each side keeps sending on the first connection
 * it had, so each direction stays one ordered stream. */
static void learn_peer(tcp_conn *c, const tcp_prefix *pre)
{
    c->src = sender_of(pre);
    tcp_peer *p = c->src >= 0 ? peer_of(c->src) : NULL;
    if (!p) lm_fatal("the network transport (tcp): no memory for rank %d of job %d", (int)pre->src, pre->job);
    if (!p->conn) p->conn = c;
}

static void check_prefix(const tcp_conn *c, const tcp_prefix *pre)
{
    int ok = (pre->kind == K_AM && pre->hdr_len > 0 && pre->hdr_len <= LM_AM_HDR_MAX && pre->len <= TCP_MAX_PAYLOAD) ||
             ((pre->kind == K_READ_REQ || pre->kind == K_WRITE_ACK) && pre->len == 0) || pre->kind == K_READ_DATA ||
             pre->kind == K_WRITE;
    if (!ok) lm_fatal("the network transport (tcp): a malformed message from rank %d", c->src);
}

/* A whole frame in the stage: handled from there. */
static void handle_staged(const tcp_prefix *pre, const unsigned char *f)
{
    if (pre->kind == K_AM) {
        /* handlers read structures from the header and the payload in
         * place; frames lie in the stage at any offset */
        static _Alignas(16) unsigned char aligned[TCP_STAGE];
        _Alignas(16) unsigned char hdr[LM_AM_HDR_MAX];
        memcpy(hdr, f + TCP_PREFIX, pre->hdr_len);
        const unsigned char *payload = f + TCP_HEAD;
        if (pre->len && ((uintptr_t)payload & 15)) {
            memcpy(aligned, payload, pre->len);
            payload = aligned;
        }
        deliver_am(pre, hdr, payload);
        return;
    }
    tcp_read_args a;
    memcpy(&a, f + TCP_PREFIX, sizeof a);
    if (pre->kind == K_READ_REQ) {
        serve_read(sender_of(pre), &a);
        return;
    }
    if (pre->kind == K_WRITE) {
        int src = sender_of(pre);
        memcpy(exposed_range(src, &a, 1), f + TCP_HEAD, pre->len);
        acknowledge_write(src, a.id);
        return;
    }
    tcp_read *rd = take_read(a.id);
    if (pre->kind == K_WRITE_ACK) {
        if (!rd) lm_fatal("the network transport (tcp): an acknowledgement of no write from rank %d", pre->src);
        read_finished(rd);
        return;
    }
    if (!rd || rd->len != pre->len)
        lm_fatal("the network transport (tcp): an answer to no read from rank %d", pre->src);
    memcpy(rd->local, f + TCP_HEAD, pre->len);
    read_finished(rd);
}

/* A frame larger than the stage: its body is read into its destination;
 * the staged bytes of it (avail, head included) are its start. */
static void start_large(tcp_conn *c, const tcp_prefix *pre, const unsigned char *f, size_t avail)
{
    c->pre = *pre;
    memcpy(c->hdr, f + TCP_PREFIX, LM_AM_HDR_MAX);
    c->body_len = pre->len;
    if (pre->kind == K_AM) {
        c->big = lm_malloc(LM_MEM_TRANSPORT, pre->len);
        if (!c->big) lm_fatal("the network transport (tcp): no memory for a message of %u bytes", pre->len);
        c->body = c->big;
    } else if (pre->kind == K_WRITE) {
        tcp_read_args a;
        memcpy(&a, f + TCP_PREFIX, sizeof a);
        c->body = exposed_range(sender_of(pre), &a, 1);
        c->write_id = a.id;
    } else { /* K_READ_DATA */
        tcp_read_args a;
        memcpy(&a, f + TCP_PREFIX, sizeof a);
        c->rd = take_read(a.id);
        if (!c->rd || c->rd->len != pre->len)
            lm_fatal("the network transport (tcp): an answer to no read from rank %d", pre->src);
        c->body = c->rd->local;
    }
    c->body_got = avail - TCP_HEAD;
    memcpy(c->body, f + TCP_HEAD, c->body_got);
    c->in_frame = 1;
}

static void finish_large(tcp_conn *c)
{
    c->in_frame = 0;
    if (c->pre.kind == K_AM) {
        unsigned char *big = c->big;
        c->big = NULL;
        deliver_am(&c->pre, c->hdr, big);
        lm_free(LM_MEM_TRANSPORT, big);
    } else if (c->pre.kind == K_WRITE) {
        acknowledge_write(sender_of(&c->pre), c->write_id);
    } else {
        tcp_read *rd = c->rd;
        c->rd = NULL;
        read_finished(rd);
    }
}

static void conn_close(tcp_conn *c)
{
    if (c->in_frame || c->stage_len > c->stage_off)
        lm_fatal("the network transport (tcp): the connection from rank %d ended in the middle of a message", c->src);
    epoll_ctl(N.ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    tcp_peer *p = c->src >= 0 ? lm_hashmap_get(&N.peers, c->src) : NULL;
    if (p && p->conn == c) p->conn = NULL;
    if (c->busy)
        for (tcp_conn **at = &N.busy; *at; at = &(*at)->next_busy)
            if (*at == c) {
                *at = c->next_busy;
                break;
            }
    drop_out(c);
    if (c->prev) c->prev->next = c->next;
    else N.conns = c->next;
    if (c->next) c->next->prev = c->prev;
    N.nconns--;
    lm_free(LM_MEM_TRANSPORT, c->stage);
    lm_free(LM_MEM_TRANSPORT, c);
}

/* Read and handle what has arrived on c; the frames handled. c may be
 * closed (freed) on return when the peer closed its end. */
static int read_conn(tcp_conn *c)
{
    /* drained: a recv into the stage took less than it asked for, so the
     * socket is empty for now; asking again would only cost a call that
     * finds nothing (the second system call of every small message). A
     * large body is read until the socket says EAGAIN: more of it arrives
     * while it is read. */
    int frames = 0, drained = 0;
    for (;;) {
        ssize_t n;
        if (c->in_frame) {
            size_t want = c->body_len - c->body_got;
            n = recv(c->fd, c->body + c->body_got, want, MSG_DONTWAIT);
            if (n > 0) {
                drained = (size_t)n < want;
                c->body_got += (size_t)n;
                if (c->body_got == c->body_len) {
                    finish_large(c);
                    frames++;
                }
                continue;
            }
        } else {
            size_t avail = c->stage_len - c->stage_off;
            if (avail >= TCP_HEAD) {
                const unsigned char *f = c->stage + c->stage_off;
                tcp_prefix pre;
                memcpy(&pre, f, sizeof pre);
                check_prefix(c, &pre);
                if (c->src < 0) learn_peer(c, &pre);
                if (TCP_HEAD + (size_t)pre.len <= avail) {
                    /* taken before the handler runs: it may send, and a
                     * send may progress (which then only writes) */
                    c->stage_off += TCP_HEAD + pre.len;
                    handle_staged(&pre, f);
                    frames++;
                    continue;
                }
                if (TCP_HEAD + (size_t)pre.len > TCP_STAGE) {
                    start_large(c, &pre, f, avail);
                    c->stage_off = c->stage_len = 0;
                    if (c->body_got == c->body_len) {
                        finish_large(c);
                        frames++;
                    }
                    continue;
                }
            }
            /* more bytes needed: what is left of the stage moves to its start */
            if (c->stage_off) {
                memmove(c->stage, c->stage + c->stage_off, avail);
                c->stage_len = avail;
                c->stage_off = 0;
            }
            if (drained) return frames;
            size_t want = TCP_STAGE - c->stage_len;
            n = recv(c->fd, c->stage + c->stage_len, want, MSG_DONTWAIT);
            if (n > 0) {
                drained = (size_t)n < want;
                c->stage_len += (size_t)n;
                continue;
            }
        }
        if (n == 0) {
            conn_close(c);
            return frames;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return frames;
        lm_fatal("the network transport (tcp) failed reading from rank %d: %s", c->src, strerror(errno));
    }
}

static void accept_new(void)
{
    for (;;) {
        int fd = accept4(N.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return;
        }
        if (!new_conn(fd, -1)) lm_fatal("the network transport (tcp): cannot take a connection: out of resources");
    }
}

int lm_tcp_progress(void)
{
    if (!N.on) return 0;
    int n = N.busy ? flush_busy() : 0;
    if (N.reading) return n;
    N.reading = 1;
    if (N.nconns <= TCP_DIRECT_POLL_MAX) {
        for (tcp_conn *c = N.conns, *next; c; c = next) {
            next = c->next;
            n += read_conn(c);
        }
        if (++N.calls % TCP_LISTEN_EVERY == 0) accept_new();
    } else {
        struct epoll_event ev[32];
        int k = epoll_wait(N.ep, ev, 32, 0);
        for (int i = 0; i < k; i++) {
            if (!ev[i].data.ptr) accept_new();
            else n += read_conn(ev[i].data.ptr);
        }
    }
    N.reading = 0;
    return n;
}

/* ---- the end ------------------------------------------------------------ */

static void close_all(void)
{
    while (N.conns) {
        tcp_conn *c = N.conns;
        N.conns = c->next;
        close(c->fd);
        drop_out(c);
        lm_free(LM_MEM_TRANSPORT, c->big);
        lm_free(LM_MEM_TRANSPORT, c->stage);
        lm_free(LM_MEM_TRANSPORT, c);
    }
    N.nconns = 0;
    for (size_t i = 0; i < N.peers.capacity; i++) {
        if (N.peers.slots[i].key == LM_HASHMAP_EMPTY) continue;
        lm_free(LM_MEM_PEER_TABLE, N.peers.slots[i].value);
    }
    lm_hashmap_destroy(&N.peers);
    N.busy = NULL;
    while (N.exposed) {
        tcp_exposed *e = N.exposed;
        N.exposed = e->next;
        lm_free(LM_MEM_TRANSPORT, e);
    }
    while (N.reads) {
        tcp_read *rd = N.reads;
        N.reads = rd->next;
        lm_free(LM_MEM_TRANSPORT, rd);
    }
    if (N.ep >= 0) close(N.ep);
    if (N.listen_fd >= 0) close(N.listen_fd);
    N.ep = N.listen_fd = -1;
    N.on = N.finalizing = 0;
}

void lm_tcp_finalize(void)
{
    if (!N.on) return;
    /* what is queued still goes, boundedly (a peer that is gone cannot
     * take it) */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    N.finalizing = 1;
    while (N.busy && ns_since(&t0) < 2000000000LL) {
        flush_busy();
        if (N.busy) {
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
        }
    }
    close_all();
}

void lm_tcp_counters(lm_transport_counters *out) { *out = N.cnt; }
