/* The point-to-point engine: matching (posted and unexpected queues), the
 * eager and rendezvous protocols over transport active messages, and the
 * queue of packets waiting for send resources.
 *
 * Protocols, by message size (bytes = count * type size):
 *   - eager (<= EAGER_LIMIT and fits one AM): header + data in one AM; the
 *     send completes when the AM is handed to the transport (synchronous
 *     mode: when the receiver's SYNC_ACK arrives);
 *   - rendezvous: RTS carries the sender's buffer address; the receiver, once
 *     matched, copies the data once (cma) and sends FIN, or, where single copy
 *     is not possible, sends CTS and the sender streams DATA chunks; data
 *     with gaps between ranks of one address space is unpacked from the
 *     sender's buffer, or packed into the receiver's, in one copy
 *     (receive_in_place).
 * Flow control: eager data that arrives unmatched is copied out of the cell
 * so the sender's cells come back; the bytes held that way are published in
 * the receiver's rank block, and senders switch to rendezvous (header only)
 * while the receiver holds more than UNEXPECTED_LIMIT; a receiver on another
 * host tells its senders instead (remote_flow.c). */
#include "pt2pt/pt2pt.h"
#include "pt2pt/protocol.h"
#include "pt2pt/coop_copy.h"
#include "pt2pt/copy_choice.h"
#include "pt2pt/pipe_copy.h"
#include "pt2pt/bsend.h"
#include "pt2pt/partitioned.h"
#include "pt2pt/engine_internal.h"
#include "pt2pt/remote_flow.h"
#include "transport/transport.h"
#include "boot/boot.h"
#include "util/lm_copy.h"
#include "util/lm_cvar.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "util/lm_cs.h"
#include "util/lm_state.h"
#include "datatype/datatype.h"
#include <sched.h>
#include <string.h>

/* Eager payloads up to this size are copied into the unexpected record
 * itself, and records are reused: a peer that runs ahead with small
 * messages (back-to-back broadcasts) costs the receiver no allocation. */
#define UNEXPECTED_SMALL 64
#define UNEXPECTED_RECORDS_KEPT 64

typedef struct lm_unexpected {
    /* arrival order over all sources, and within its source bucket */
    struct lm_unexpected *next, *prev, *bnext, *bprev;
    int context, src_rank, src_world, tag;
    uint8_t type; /* LM_PKT_EAGER or LM_PKT_RTS */
    uint16_t flags;
    uint64_t size, sreq, addr, rkey;
    void *data; /* eager payload copy: `small`, or the heap when larger */
    char small[UNEXPECTED_SMALL];
} lm_unexpected;

typedef struct pending_packet {
    struct pending_packet *next;
    int dst;
    lm_pkt hdr;
    size_t hdr_len;
    const void *payload;
    size_t len;
    lm_request *complete_on_send; /* eager standard send finishing when handed over */
    lm_request *stream;           /* CTS answered: stream this send's data */
    size_t stream_offset;
} pending_packet;

static struct {
    lm_request *head, *tail;
} posted;
/* Unexpected messages in arrival order, and the same messages again in
 * buckets by (context, source): a receive from one source scans only its
 * bucket, so a peer that runs ahead and queues many messages does not slow
 * down receives from the others. MPI_ANY_SOURCE scans the arrival list.
 * The bucket count is fixed: it does not grow with the job. */
typedef struct {
    lm_unexpected *head, *tail;
} unexpected_list;
#define UNEXPECTED_BUCKETS 256
static unexpected_list unexpected;
static unexpected_list unexpected_by_source[UNEXPECTED_BUCKETS];

static unexpected_list *bucket_of(int context, int src)
{
    uint32_t h = (uint32_t)context * 2654435761u ^ (uint32_t)src * 40503u;
    return &unexpected_by_source[(h ^ (h >> 16)) & (UNEXPECTED_BUCKETS - 1)];
}
static struct {
    pending_packet *head, *tail;
} pending;
static pending_packet *pending_free;
static size_t eager_limit;
static size_t unexpected_limit;
static lm_unexpected *records_kept; /* reusable unexpected records (linked by next) */
static int nrecords_kept;
static size_t chunk_limit;
static int rndv_outstanding;
static _Atomic uint64_t *my_unexpected_bytes;
static uint64_t unexpected_private; /* singleton without a rank block */
/* The bytes held unexpected, counted here; the rank block shows them only
 * while they are above the limit (0 otherwise). Every sender reads that
 * word before each eager send: written only when the verdict changes, its
 * cache line stays shared instead of moving between receiver and senders
 * twice per message. */
static uint64_t unexpected_held;
static int unexpected_over;

static void unexpected_account(uint64_t add, uint64_t sub)
{
    unexpected_held = unexpected_held + add - sub;
    int over = unexpected_held > unexpected_limit;
    if (over || over != unexpected_over)
        atomic_store_explicit(my_unexpected_bytes, over ? unexpected_held : 0, memory_order_relaxed);
    unexpected_over = over;
    /* senders on other hosts were told: back to half the limit, tell them */
    if (sub && unexpected_held <= unexpected_limit / 2 && lm_remote_flow_told_any()) lm_remote_flow_relieved();
}

static lm_unexpected *record_new(void)
{
    lm_unexpected *u = records_kept;
    if (u) {
        records_kept = u->next;
        nrecords_kept--;
        return u;
    }
    u = lm_malloc(LM_MEM_PT2PT, sizeof *u);
    if (!u) lm_fatal("out of memory for an unexpected message");
    return u;
}

static void record_free(lm_unexpected *u)
{
    if (u->data != u->small) lm_free(LM_MEM_PT2PT, u->data);
    if (nrecords_kept < UNEXPECTED_RECORDS_KEPT) {
        u->next = records_kept;
        records_kept = u;
        nrecords_kept++;
    } else {
        lm_free(LM_MEM_PT2PT, u);
    }
}

static void handle_packet(int src_world, const void *hdr, size_t hdr_len, const void *payload, size_t len);

int lm_pt2pt_init(void)
{
    eager_limit = (size_t)lm_cvar(LM_CVAR_EAGER_LIMIT);
    unexpected_limit = (size_t)lm_cvar(LM_CVAR_UNEXPECTED_LIMIT);
    chunk_limit = (size_t)lm_cvar(LM_CVAR_PIPELINE_CHUNK);
    const lm_boot_info *b = lm_boot();
    my_unexpected_bytes = b->segment ? &lm_node_segment_rank(b->segment, b->local_rank)->unexpected_bytes
                                     : (_Atomic uint64_t *)&unexpected_private;
    lm_coop_copy_init();
    lm_pipe_copy_init();
    lm_transport_register_am(LM_AM_PT2PT, handle_packet);
    int rc = lm_bsend_init();
    if (rc == MPI_SUCCESS) rc = lm_partitioned_init();
    return rc;
}

void lm_pt2pt_finalize(void)
{
    while (unexpected.head) {
        lm_unexpected *u = unexpected.head;
        unexpected.head = u->next;
        if (u->data != u->small) lm_free(LM_MEM_PT2PT, u->data);
        lm_free(LM_MEM_PT2PT, u);
    }
    unexpected.tail = NULL;
    while (records_kept) {
        lm_unexpected *u = records_kept;
        records_kept = u->next;
        lm_free(LM_MEM_PT2PT, u);
    }
    nrecords_kept = 0;
    unexpected_held = 0;
    unexpected_over = 0;
    lm_remote_flow_reset();
    memset(unexpected_by_source, 0, sizeof unexpected_by_source);
    while (pending_free) {
        pending_packet *p = pending_free;
        pending_free = p->next;
        lm_free(LM_MEM_PT2PT, p);
    }
}

int lm_pt2pt_busy(void)
{
    return pending.head != NULL || rndv_outstanding > 0 || lm_coop_copy_busy() || lm_pipe_copy_busy();
}

/* ---- sending packets ---------------------------------------------------- */

static pending_packet *pending_new(void)
{
    pending_packet *p = pending_free;
    if (p) pending_free = p->next;
    else p = lm_malloc(LM_MEM_PT2PT, sizeof *p);
    if (p) lm_zero(p, sizeof *p);
    return p;
}

static void pending_push(pending_packet *p)
{
    p->next = NULL;
    if (pending.tail) pending.tail->next = p;
    else pending.head = p;
    pending.tail = p;
}

/* The MPI error class of a transport failure (anything but LM_OK and
 * LM_EAGAIN, which are not errors). */
static int transport_error_class(int rc) { return rc == LM_ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER; }

/* How post_packet handed a packet over. */
enum post_outcome { POSTED_SENT, POSTED_QUEUED };

/* Hand a packet to the transport now if nothing is queued before it (order
 * between messages is kept by never letting a packet pass the queue), else
 * queue it. MPI_SUCCESS with *how saying which, or an MPI error class (the
 * transport failed, or no memory to queue): then nothing was sent. */
static int post_packet(int dst, const lm_pkt *h, size_t hdr_len, const void *payload, size_t len,
                       lm_request *complete_on_send, enum post_outcome *how)
{
    if (!pending.head) {
        int rc = lm_transport_am_send(dst, h, hdr_len, payload, len);
        if (rc == LM_OK) {
            *how = POSTED_SENT;
            return MPI_SUCCESS;
        }
        if (rc != LM_EAGAIN) return transport_error_class(rc);
    }
    pending_packet *p = pending_new();
    if (!p) return MPI_ERR_NO_MEM;
    p->dst = dst;
    memcpy(&p->hdr, h, hdr_len);
    p->hdr_len = hdr_len;
    p->payload = payload;
    p->len = len;
    p->complete_on_send = complete_on_send;
    pending_push(p);
    *how = POSTED_QUEUED;
    return MPI_SUCCESS;
}

static size_t stream_chunk(int dst)
{
    size_t m = lm_transport_max_payload(dst);
    return (chunk_limit && chunk_limit < m) ? chunk_limit : m;
}

static int receiver_congested(int dst_world);

/* An eager packet chose its protocol when its send started; while it waited
 * in the queue the receiver may have filled up with unexpected data (a flood
 * of nonblocking sends queues everything before the receiver copies any of
 * it out). Sending it eagerly now would push the receiver past
 * UNEXPECTED_LIMIT without bound, so it goes as an RTS instead, which is what
 * a send started now would do. Eager packets come only from lm_send_start:
 * the payload is the request's buffer, valid until the request completes,
 * which is now on FIN. */
static void eager_to_rts(pending_packet *p)
{
    lm_request *s = p->complete_on_send ? p->complete_on_send : (lm_request *)(uintptr_t)p->hdr.sreq;
    p->hdr.type = LM_PKT_RTS;
    /* a packed copy of data with gaps is not what a cooperative copy would
     * read from the sender's request: have it streamed instead */
    p->hdr.flags = s->dtype ? LM_PKT_FLAG_NONCONTIG : 0;
    p->hdr.sreq = (uint64_t)(uintptr_t)s;
    p->hdr.size = p->len;
    p->hdr.rreq = 0;
    p->hdr.addr = (uint64_t)(uintptr_t)p->payload;
    p->hdr_len = sizeof p->hdr;
    p->payload = NULL;
    p->len = 0;
    p->complete_on_send = NULL;
    rndv_outstanding++;
}

/* The staging area for one packed chunk of a streamed send (grown to the
 * largest chunk, kept for the next). */
static void *stream_stage(size_t len)
{
    static void *stage;
    static size_t stage_len;
    if (len > stage_len) {
        void *p = lm_realloc(LM_MEM_PT2PT, stage, len);
        if (!p) lm_fatal("out of memory streaming a message");
        stage = p;
        stage_len = len;
    }
    return stage;
}

/* A send whose buffer was exposed to the network's RMA read: the receiver
 * read it (FIN), took it as a stream instead, or the RTS could not go,
 * so the exposure ends. */
static void release_exposed(lm_request *s)
{
    if (s->rndv_mr) lm_transport_unexpose(s->rndv_mr);
    s->rndv_mr = NULL;
}

/* A queued packet the transport refused for good: the send it belongs to
 * completes with the error (its waiter gets the class back). A control
 * packet belongs to no send of this process, and the peer waiting for it
 * could never finish: the job ends. */
static void fail_queued(pending_packet *p, int cls)
{
    lm_request *s = NULL;
    if (p->complete_on_send) s = p->complete_on_send;
    else if (p->hdr.type == LM_PKT_EAGER || p->hdr.type == LM_PKT_RTS) s = (lm_request *)(uintptr_t)p->hdr.sreq;
    if (!s) lm_fatal("cannot send a protocol packet (type %d) to rank %d", p->hdr.type, p->dst);
    if (p->hdr.type == LM_PKT_RTS) {
        rndv_outstanding--;
        release_exposed(s);
    }
    s->error = cls;
    lm_request_complete(s);
}

/* Push queued packets until the transport pushes back. */
static int drain_pending(void)
{
    int n = 0;
    while (pending.head) {
        pending_packet *p = pending.head;
        if (p->stream) {
            lm_request *r = p->stream;
            size_t chunk = stream_chunk(p->dst);
            while (p->stream_offset < r->len) {
                size_t c = r->len - p->stream_offset;
                if (c > chunk) c = chunk;
                p->hdr.addr = p->stream_offset;
                const void *data = (char *)r->buf + p->stream_offset;
                if (r->dtype) {
                    /* data with gaps: pack just this chunk (the transport
                     * copies the payload before returning) */
                    data = stream_stage(c);
                    lm_typemap_pack(r->dtype, r->buf, r->count, (MPI_Count)p->stream_offset, (void *)data, c);
                }
                int rc = lm_transport_am_send(p->dst, &p->hdr, sizeof p->hdr, data, c);
                if (rc == LM_EAGAIN) return n;
                if (rc != LM_OK) {
                    /* the rest of the stream cannot follow: the send fails */
                    p->stream_offset = r->len;
                    r->error = transport_error_class(rc);
                    break;
                }
                p->stream_offset += c;
                n++;
            }
            /* every chunk is out: the sender's buffer may be reused */
            rndv_outstanding--;
            release_exposed(r);
            lm_request_complete(r);
        } else {
            if (p->hdr.type == LM_PKT_EAGER && p->len && receiver_congested(p->dst)) eager_to_rts(p);
            int rc = lm_transport_am_send(p->dst, &p->hdr, p->hdr_len, p->payload, p->len);
            if (rc == LM_EAGAIN) return n;
            if (rc != LM_OK) fail_queued(p, transport_error_class(rc));
            else if (p->complete_on_send) lm_request_complete(p->complete_on_send);
            n++;
        }
        pending.head = p->next;
        if (!pending.head) pending.tail = NULL;
        p->next = pending_free;
        pending_free = p;
    }
    return n;
}

void lm_pt2pt_post_control(int dst, const lm_pkt *h)
{
    /* the peer waits for this packet and no request of ours stands for it */
    enum post_outcome how;
    if (post_packet(dst, h, sizeof *h, NULL, 0, NULL, &how) != MPI_SUCCESS)
        lm_fatal("cannot send a protocol packet (type %d) to rank %d", h->type, dst);
}

static void send_control(int dst, uint8_t type, uint64_t sreq, uint64_t rreq)
{
    lm_pkt h = {.am_id = LM_AM_PT2PT, .type = type, .sreq = sreq, .rreq = rreq};
    lm_pt2pt_post_control(dst, &h);
}

void lm_pt2pt_send_fin(int dst, uint64_t sreq) { send_control(dst, LM_PKT_FIN, sreq, 0); }

void lm_pt2pt_send_done(lm_request *s)
{
    rndv_outstanding--;
    lm_request_complete(s);
}

/* The receiver's published unexpected-byte counter; the last destination's
 * is cached, since streams of sends mostly go to one peer. */
static _Atomic uint64_t *unexpected_counter_of(int dst_world)
{
    static int cached_dst = -1;
    static _Atomic uint64_t *cached;
    if (dst_world == cached_dst) return cached;
    const lm_boot_info *b = lm_boot();
    _Atomic uint64_t *c = NULL;
    if (b->segment && lm_boot_is_local(dst_world))
        c = &lm_node_segment_rank(b->segment, lm_boot_local_rank_of(dst_world))->unexpected_bytes;
    cached_dst = dst_world;
    cached = c;
    return c;
}

static int receiver_congested(int dst_world)
{
    _Atomic uint64_t *c = unexpected_counter_of(dst_world);
    if (!c) return lm_remote_flow_congested(dst_world);
    return atomic_load_explicit(c, memory_order_relaxed) > unexpected_limit;
}

int lm_send_start(lm_request *r)
{
    r->complete = 0;
    r->error = MPI_SUCCESS;
    r->rndv_mr = NULL;
    if (r->peer == MPI_PROC_NULL) {
        r->source = MPI_PROC_NULL;
        r->tag = MPI_ANY_TAG;
        r->bytes = 0;
        lm_request_complete(r);
        return MPI_SUCCESS;
    }
    lm_pkt h = {.am_id = LM_AM_PT2PT,
                .context = r->ctx,
                .src_rank = r->comm->rank,
                .tag = r->match_tag,
                .size = r->len,
                .sreq = (uint64_t)(uintptr_t)r};
    int dst = r->peer_world;
    size_t limit = eager_limit;
    size_t maxp = lm_transport_max_payload(dst);
    if (limit > maxp) limit = maxp;
    if (r->len <= limit && !receiver_congested(dst)) {
        h.type = LM_PKT_EAGER;
        int sync = r->mode == LM_MODE_SYNC;
        if (sync) h.flags = LM_PKT_FLAG_SYNC;
        const void *data = r->buf;
        if (r->dtype && r->len) {
            /* data with gaps goes packed; the copy lives until completion,
             * since a queued packet (or its RTS form) still points to it */
            r->pack_tmp = lm_malloc(LM_MEM_PT2PT, r->len);
            if (!r->pack_tmp) return MPI_ERR_NO_MEM;
            lm_typemap_pack(r->dtype, r->buf, r->count, 0, r->pack_tmp, r->len);
            data = r->pack_tmp;
        }
        enum post_outcome how;
        int rc = post_packet(dst, &h, sync ? LM_PKT_EAGER_SYNC_HDR : LM_PKT_EAGER_HDR, data, r->len, sync ? NULL : r,
                             &how);
        if (rc != MPI_SUCCESS) {
            lm_free(LM_MEM_PT2PT, r->pack_tmp);
            r->pack_tmp = NULL;
            return rc;
        }
        if (how == POSTED_SENT && !sync) lm_request_complete(r);
        return MPI_SUCCESS;
    }
    h.type = LM_PKT_RTS;
    h.addr = (uint64_t)(uintptr_t)r->buf;
    if (r->dtype) h.flags = LM_PKT_FLAG_NONCONTIG;
    else if (lm_transport_expose(dst, r->buf, r->len, &h.addr, &h.rkey, &r->rndv_mr) == LM_OK)
        h.flags |= LM_PKT_FLAG_RKEY; /* another host: the receiver reads it in place */
    enum post_outcome how;
    int rc = post_packet(dst, &h, sizeof h, NULL, 0, NULL, &how);
    if (rc == MPI_SUCCESS) rndv_outstanding++;
    else release_exposed(r);
    return rc;
}

/* A message a blocking caller waits for anyway needs no request when it can
 * be handed over at once: eager, nothing queued before it, the receiver not
 * congested, and the transport takes it now. */
int lm_send_bytes_now(const void *buf, size_t len, int dest, int tag, lm_comm *c, int ctx, int *sent)
{
    *sent = 0;
    if (pending.head) return MPI_SUCCESS;
    int dst = lm_comm_world_rank(c, dest);
    size_t maxp = lm_transport_max_payload(dst);
    if (len > eager_limit || len > maxp || receiver_congested(dst)) return MPI_SUCCESS;
    lm_pkt h = {.am_id = LM_AM_PT2PT, .type = LM_PKT_EAGER, .context = ctx, .src_rank = c->rank, .tag = tag};
    int rc = lm_transport_am_send(dst, &h, LM_PKT_EAGER_HDR, buf, len);
    if (rc == LM_OK) *sent = 1;
    else if (rc != LM_EAGAIN) return transport_error_class(rc);
    return MPI_SUCCESS;
}

/* ---- matching ----------------------------------------------------------- */

static inline int envelope_matches(int want_src, int want_tag, int src, int tag)
{
    return (want_src == src || want_src == MPI_ANY_SOURCE) && (want_tag == tag || want_tag == MPI_ANY_TAG);
}

static lm_request *take_posted(int context, int src, int tag)
{
    lm_request *prev = NULL;
    for (lm_request *r = posted.head; r; prev = r, r = r->next) {
        if (r->ctx != context || !envelope_matches(r->peer, r->match_tag, src, tag)) continue;
        if (prev) prev->next = r->next;
        else posted.head = r->next;
        if (posted.tail == r) posted.tail = prev;
        r->next = NULL;
        return r;
    }
    return NULL;
}

/* The earliest unexpected message matching (context, src, tag). */
static lm_unexpected *find_unexpected(int context, int src, int tag)
{
    if (src == MPI_ANY_SOURCE) {
        for (lm_unexpected *u = unexpected.head; u; u = u->next)
            if (u->context == context && envelope_matches(src, tag, u->src_rank, u->tag)) return u;
        return NULL;
    }
    for (lm_unexpected *u = bucket_of(context, src)->head; u; u = u->bnext)
        if (u->context == context && envelope_matches(src, tag, u->src_rank, u->tag)) return u;
    return NULL;
}

static void append_unexpected(lm_unexpected *u)
{
    unexpected_list *b = bucket_of(u->context, u->src_rank);
    u->next = NULL;
    u->prev = unexpected.tail;
    if (unexpected.tail) unexpected.tail->next = u;
    else unexpected.head = u;
    unexpected.tail = u;
    u->bnext = NULL;
    u->bprev = b->tail;
    if (b->tail) b->tail->bnext = u;
    else b->head = u;
    b->tail = u;
}

static void unlink_unexpected(lm_unexpected *u)
{
    unexpected_list *b = bucket_of(u->context, u->src_rank);
    if (u->prev) u->prev->next = u->next;
    else unexpected.head = u->next;
    if (u->next) u->next->prev = u->prev;
    else unexpected.tail = u->prev;
    if (u->bprev) u->bprev->bnext = u->bnext;
    else b->head = u->bnext;
    if (u->bnext) u->bnext->bprev = u->bprev;
    else b->tail = u->bprev;
    u->next = u->prev = u->bnext = u->bprev = NULL;
}

/* Deliver `size` bytes at `data` into receive r (truncating, never writing
 * past r->len). */
static void deliver_eager(lm_request *r, int src_rank, int tag, const void *data, size_t size)
{
    size_t n = size;
    if (n > r->len) {
        n = r->len;
        r->error = MPI_ERR_TRUNCATE;
    }
    if (n) {
        if (r->dtype) lm_typemap_unpack(r->dtype, r->buf, r->count, 0, data, n);
        else lm_copy(r->buf, data, n);
    }
    r->source = src_rank;
    r->tag = tag;
    r->bytes = (MPI_Count)n;
    lm_request_complete(r);
}

/* The network's RMA read of a rendezvous message is done: tell the sender. */
static void network_read_done(void *arg)
{
    lm_request *r = arg;
    send_control(r->rndv_src, LM_PKT_FIN, r->rndv_sreq, 0);
    lm_request_complete(r);
}

/* Data with gaps between ranks of one address space moves in one copy:
 * from a contiguous sender it is unpacked straight from the sender's
 * buffer; into a contiguous receive buffer the sender packs it straight
 * there (CTS with LM_PKT_FLAG_IN_PLACE). Gaps on both sides still go as
 * the packed stream. Returns 1 when it took the message. */
static int receive_in_place(lm_request *r, int src_world, size_t n, uint64_t size, uint64_t sreq, uint64_t addr,
                            uint16_t flags)
{
    if (!n || !lm_transport_same_space(src_world)) return 0;
    if (!(flags & LM_PKT_FLAG_NONCONTIG) && addr) {
        lm_typemap_unpack(r->dtype, r->buf, r->count, 0, (const void *)(uintptr_t)addr, n);
        r->bytes = (MPI_Count)n;
        send_control(src_world, LM_PKT_FIN, sreq, 0);
        lm_request_complete(r);
        return 1;
    }
    if (r->dtype) return 0;
    r->rndv_total = size;
    r->rndv_received = 0;
    r->bytes = (MPI_Count)n;
    lm_pkt h = {.am_id = LM_AM_PT2PT,
                .type = LM_PKT_CTS,
                .flags = LM_PKT_FLAG_IN_PLACE,
                .sreq = sreq,
                .rreq = (uint64_t)(uintptr_t)r,
                .size = n,
                .addr = (uint64_t)(uintptr_t)r->buf};
    lm_pt2pt_post_control(src_world, &h);
    return 1;
}

/* The sender's half of receive_in_place: pack into the receiver's buffer,
 * tell it, and the send is complete. */
static void send_in_place(int dst_world, const lm_pkt *cts)
{
    lm_request *s = (lm_request *)(uintptr_t)cts->sreq;
    void *to = (void *)(uintptr_t)cts->addr;
    if (s->dtype) lm_typemap_pack(s->dtype, s->buf, s->count, 0, to, cts->size);
    else memcpy(to, s->buf, cts->size);
    lm_pkt h = {
        .am_id = LM_AM_PT2PT, .type = LM_PKT_DATA, .flags = LM_PKT_FLAG_IN_PLACE, .rreq = cts->rreq, .size = cts->size};
    lm_pt2pt_post_control(dst_world, &h);
    rndv_outstanding--;
    release_exposed(s);
    lm_request_complete(s);
}

/* A matched RTS: fetch the data in one copy, or ask for it to be streamed. */
static void start_rendezvous_receive(lm_request *r, int src_world, int src_rank, int tag, uint64_t size, uint64_t sreq,
                                     uint64_t addr, uint64_t rkey, uint16_t flags)
{
    size_t n = size;
    r->source = src_rank;
    r->tag = tag;
    if (n > r->len) {
        n = r->len;
        r->error = MPI_ERR_TRUNCATE;
    }
    /* data with gaps on either side cannot be copied once: a pipe packs
     * and unpacks it piece by piece, else it moves as the packed stream
     * (CTS/DATA) */
    int packed = r->dtype || (flags & LM_PKT_FLAG_NONCONTIG);
    if (packed && receive_in_place(r, src_world, n, size, sreq, addr, flags)) return;
    int single = !packed && lm_transport_single_copy(src_world);
    uint64_t t0;
    if (lm_pipe_copy_start(r, src_world, sreq, n, single, rndv_outstanding > 0, &t0)) return;
    /* A rank with rendezvous sends of its own in flight is exchanging
     * (alltoall, allgather, ring steps): its senders are then mostly busy
     * copying what it sends them and would help late if at all, while a
     * copy that waits for a helper's half waits a whole time slice when
     * that helper shares a core. Such a rank copies alone: on 2 cores, 1 MiB
     * blocks, MPI_Alltoall and MPI_Allgather at 4 ranks took 670 and 630 us
     * instead of 800 and 1,430 (medians of the best blocks of 6 alternating
     * runs), at 2 ranks 101 and 100 us instead of 104 and 103; the ring
     * allreduce at 2 ranks lost 6 us (110 -> 116). */
    if (!packed && !rndv_outstanding && lm_coop_copy_start(r, src_world, sreq, addr, n, t0)) return;
    /* a sender on another host exposed its buffer: read it in place */
    if (!packed && (flags & LM_PKT_FLAG_RKEY) && n > 0) {
        r->bytes = (MPI_Count)n;
        r->rndv_src = src_world;
        r->rndv_sreq = sreq;
        if (lm_transport_rget_async(src_world, r->buf, addr, rkey, n, network_read_done, r) == LM_OK) return;
    }
    if (!packed && lm_transport_rget(src_world, r->buf, addr, n) == LM_OK) {
        if (t0)
            lm_copy_record(LM_COPY_SINGLE, rndv_outstanding ? LM_COPY_EXCHANGE : LM_COPY_ONE_WAY, n,
                           lm_copy_clock_ns() - t0);
        r->bytes = (MPI_Count)n;
        send_control(src_world, LM_PKT_FIN, sreq, 0);
        lm_request_complete(r);
        return;
    }
    r->rndv_total = size;
    r->rndv_received = 0;
    r->bytes = (MPI_Count)n;
    if (size == 0) {
        send_control(src_world, LM_PKT_FIN, sreq, 0);
        lm_request_complete(r);
        return;
    }
    send_control(src_world, LM_PKT_CTS, sreq, (uint64_t)(uintptr_t)r);
}

static void deliver_unexpected(lm_request *r, lm_unexpected *u)
{
    if (u->type == LM_PKT_EAGER) {
        unexpected_account(0, u->size);
        if (u->flags & LM_PKT_FLAG_SYNC) send_control(u->src_world, LM_PKT_SYNC_ACK, u->sreq, 0);
        deliver_eager(r, u->src_rank, u->tag, u->data, u->size);
    } else {
        start_rendezvous_receive(r, u->src_world, u->src_rank, u->tag, u->size, u->sreq, u->addr, u->rkey, u->flags);
    }
    record_free(u);
}

int lm_recv_start(lm_request *r)
{
    r->complete = 0;
    r->error = MPI_SUCCESS;
    r->cancelled = 0;
    if (r->peer == MPI_PROC_NULL) {
        r->source = MPI_PROC_NULL;
        r->tag = MPI_ANY_TAG;
        r->bytes = 0;
        lm_request_complete(r);
        return MPI_SUCCESS;
    }
    lm_unexpected *u = find_unexpected(r->ctx, r->peer, r->match_tag);
    if (u) {
        unlink_unexpected(u);
        deliver_unexpected(r, u);
        return MPI_SUCCESS;
    }
    r->next = NULL;
    if (posted.tail) posted.tail->next = r;
    else posted.head = r;
    posted.tail = r;
    return MPI_SUCCESS;
}

static int take_eager_now(void *buf, size_t len, int src, int tag, int ctx, int *err)
{
    lm_unexpected *u = find_unexpected(ctx, src, tag);
    if (!u || u->type != LM_PKT_EAGER) return 0;
    unlink_unexpected(u);
    unexpected_account(0, u->size);
    if (u->flags & LM_PKT_FLAG_SYNC) send_control(u->src_world, LM_PKT_SYNC_ACK, u->sreq, 0);
    size_t n = u->size;
    *err = MPI_SUCCESS;
    if (n > len) {
        n = len;
        *err = MPI_ERR_TRUNCATE;
    }
    if (n) memcpy(buf, u->data, n);
    record_free(u);
    return 1;
}

/* The receiving half: a message that has already arrived eagerly is copied
 * out of the unexpected queue (one progress call first, if it is not there
 * yet), exactly the message lm_recv_start would match. */
int lm_recv_bytes_now(void *buf, size_t len, int src, int tag, int ctx, int *received, int *err)
{
    *received = 0;
    if (src < 0) return MPI_SUCCESS;
    if (unexpected.head && take_eager_now(buf, len, src, tag, ctx, err)) {
        *received = 1;
        return MPI_SUCCESS;
    }
    lm_progress();
    *received = unexpected.head && take_eager_now(buf, len, src, tag, ctx, err);
    return MPI_SUCCESS;
}

int lm_recv_cancel(lm_request *r)
{
    lm_request *prev = NULL;
    for (lm_request *q = posted.head; q; prev = q, q = q->next) {
        if (q != r) continue;
        if (prev) prev->next = q->next;
        else posted.head = q->next;
        if (posted.tail == q) posted.tail = prev;
        r->cancelled = 1;
        r->bytes = 0;
        lm_request_complete(r);
        return 1;
    }
    return 0;
}

/* ---- incoming packets --------------------------------------------------- */

/* hdr_len: how much of h the packet carried (an eager packet carries the
 * envelope, and sreq when synchronous; its size is the payload's length) */
static void queue_unexpected(int src_world, const lm_pkt *h, size_t hdr_len, const void *payload, size_t len)
{
    lm_unexpected *u = record_new();
    int eager = h->type == LM_PKT_EAGER;
    u->context = h->context;
    u->src_rank = h->src_rank;
    u->src_world = src_world;
    u->tag = h->tag;
    u->type = h->type;
    u->flags = h->flags;
    u->size = eager ? len : h->size;
    u->sreq = !eager || hdr_len >= LM_PKT_EAGER_SYNC_HDR ? h->sreq : 0;
    u->addr = eager ? 0 : h->addr;
    u->rkey = eager || !(h->flags & LM_PKT_FLAG_RKEY) ? 0 : h->rkey;
    u->data = NULL;
    if (h->type == LM_PKT_EAGER && len) {
        u->data = len <= sizeof u->small ? u->small : lm_malloc(LM_MEM_PT2PT, len);
        if (!u->data) lm_fatal("out of memory for an unexpected message");
        memcpy(u->data, payload, len);
        unexpected_account(len, 0);
        if (unexpected_over && !lm_boot_is_local(src_world)) lm_remote_flow_over(src_world);
    }
    append_unexpected(u);
}

static void handle_packet(int src_world, const void *hdr, size_t hdr_len, const void *payload, size_t len)
{
    const lm_pkt *h = hdr;
    switch (h->type) {
    case LM_PKT_EAGER: {
        lm_request *r = take_posted(h->context, h->src_rank, h->tag);
        if (!r) {
            queue_unexpected(src_world, h, hdr_len, payload, len);
            return;
        }
        if (h->flags & LM_PKT_FLAG_SYNC) send_control(src_world, LM_PKT_SYNC_ACK, h->sreq, 0);
        deliver_eager(r, h->src_rank, h->tag, payload, len);
        return;
    }
    case LM_PKT_RTS: {
        lm_request *r = take_posted(h->context, h->src_rank, h->tag);
        if (!r) {
            queue_unexpected(src_world, h, hdr_len, NULL, 0);
            return;
        }
        start_rendezvous_receive(r, src_world, h->src_rank, h->tag, h->size, h->sreq, h->addr,
                                 (h->flags & LM_PKT_FLAG_RKEY) ? h->rkey : 0, h->flags);
        return;
    }
    case LM_PKT_CTS: {
        if (h->flags & LM_PKT_FLAG_IN_PLACE) {
            send_in_place(src_world, h);
            return;
        }
        lm_request *s = (lm_request *)(uintptr_t)h->sreq;
        pending_packet *p = pending_new();
        if (!p) lm_fatal("out of memory streaming a message");
        p->dst = src_world;
        p->hdr = (lm_pkt){.am_id = LM_AM_PT2PT, .type = LM_PKT_DATA, .rreq = h->rreq};
        p->hdr_len = sizeof p->hdr;
        p->stream = s;
        pending_push(p);
        return;
    }
    case LM_PKT_DATA: {
        lm_request *r = (lm_request *)(uintptr_t)h->rreq;
        if (h->flags & LM_PKT_FLAG_IN_PLACE) {
            lm_request_complete(r);
            return;
        }
        size_t off = (size_t)h->addr;
        if (off < r->len) {
            size_t n = len <= r->len - off ? len : r->len - off;
            if (r->dtype) lm_typemap_unpack(r->dtype, r->buf, r->count, (MPI_Count)off, payload, n);
            else memcpy((char *)r->buf + off, payload, n);
        }
        r->rndv_received += len;
        if (r->rndv_received >= r->rndv_total) lm_request_complete(r);
        return;
    }
    case LM_PKT_FIN: {
        lm_request *s = (lm_request *)(uintptr_t)h->sreq;
        rndv_outstanding--;
        release_exposed(s);
        lm_request_complete(s);
        return;
    }
    case LM_PKT_SYNC_ACK: lm_request_complete((lm_request *)(uintptr_t)h->sreq); return;
    case LM_PKT_COPY_HELP: lm_coop_copy_help(src_world, h); return;
    case LM_PKT_PIPE: lm_pipe_copy_feed(src_world, h); return;
    case LM_PKT_CONGESTED: lm_remote_flow_notice(src_world, h->size != 0); return;
    default: lm_fatal("unknown packet type %d from rank %d", h->type, src_world);
    }
}

/* ---- probe -------------------------------------------------------------- */

/* A probe's status: source, tag and size; MPI_ERROR is left as the caller
 * had it (MPI-4.1 section 3.2.5: single-completion calls do not set it). */
static void probed_status(MPI_Status *st, const lm_unexpected *u)
{
    if (st != MPI_STATUS_IGNORE) lm_status_set(st, u->src_rank, u->tag, st->MPI_ERROR, (MPI_Count)u->size, 0);
}

int lm_iprobe(int src, int tag, lm_comm *c, int ctx, int *flag, MPI_Status *st)
{
    (void)c;
    lm_unexpected *u = find_unexpected(ctx, src, tag);
    *flag = u != NULL;
    if (u) probed_status(st, u);
    return MPI_SUCCESS;
}

lm_unexpected *lm_mprobe_take(int src, int tag, lm_comm *c, int ctx, MPI_Status *st)
{
    (void)c;
    lm_unexpected *u = find_unexpected(ctx, src, tag);
    if (!u) return NULL;
    unlink_unexpected(u);
    probed_status(st, u);
    return u;
}

int lm_mrecv_start(lm_request *r, lm_unexpected *u)
{
    r->complete = 0;
    r->error = MPI_SUCCESS;
    deliver_unexpected(r, u);
    return MPI_SUCCESS;
}

/* ---- progress ----------------------------------------------------------- */

static lm_progress_hook hooks[LM_PROGRESS_HOOKS_MAX];
static int nhooks;
static unsigned active_hooks; /* bit i: hooks[i] has work */

int lm_progress_hook_register(lm_progress_hook fn)
{
    for (int i = 0; i < nhooks; i++)
        if (hooks[i] == fn) return i;
    if (nhooks == LM_PROGRESS_HOOKS_MAX) return -1;
    hooks[nhooks] = fn;
    return nhooks++;
}

void lm_progress_hook_set_active(int slot, int active)
{
    if (slot < 0) return;
    if (active) active_hooks |= 1u << slot;
    else active_hooks &= ~(1u << slot);
}

int lm_progress(void)
{
    int n = lm_transport_progress();
    if (pending.head) n += drain_pending();
    /* in registration order: a hook switched off by an earlier one is
     * skipped in the same pass */
    for (unsigned i = 0; active_hooks >> i; i++)
        if (active_hooks & (1u << i)) n += hooks[i]();
    return n;
}

int lm_progress_wait(unsigned *idle)
{
    int n = lm_progress();
    /* At MPI_THREAD_MULTIPLE, never wait holding the critical section while
     * another thread wants it: it may be the one to send what we wait for. */
    if (lm_cs_active()) lm_cs_handoff();
    if (n) {
        *idle = 0;
        return n;
    }
    /* Spinning is fastest while every rank has a core; once ranks share
     * cores, the peer we wait for needs ours. */
    const unsigned spin_before_yield = lm_oversubscribed() ? 1 : 1024;
    if (++*idle >= spin_before_yield) {
        sched_yield();
        *idle = 0;
    }
    return 0;
}

void lm_progress_until(volatile int *flag)
{
    unsigned idle = 0;
    while (!*flag) lm_progress_wait(&idle);
}

/* ---- internal convenience ----------------------------------------------- */

static lm_request *bytes_request(void *buf, size_t len, int peer, int tag, lm_comm *c, int ctx, int kind)
{
    lm_request *r = lm_request_new(kind);
    if (!r) return NULL;
    r->buf = buf;
    r->len = len;
    r->comm = c;
    r->ctx = ctx;
    r->peer = peer;
    r->peer_world = (peer >= 0) ? lm_comm_world_rank(c, peer) : -1;
    r->match_tag = tag;
    r->mode = LM_MODE_STANDARD;
    return r;
}

int lm_isend_bytes(const void *buf, size_t len, int dest, int tag, lm_comm *c, int ctx, lm_request **out)
{
    lm_request *r = bytes_request((void *)buf, len, dest, tag, c, ctx, LM_REQ_SEND);
    if (!r) return MPI_ERR_NO_MEM;
    *out = r;
    return lm_send_start(r);
}

int lm_irecv_bytes(void *buf, size_t len, int src, int tag, lm_comm *c, int ctx, lm_request **out)
{
    lm_request *r = bytes_request(buf, len, src, tag, c, ctx, LM_REQ_RECV);
    if (!r) return MPI_ERR_NO_MEM;
    *out = r;
    return lm_recv_start(r);
}

int lm_wait_release(lm_request *r, MPI_Status *st)
{
    lm_progress_until(&r->complete);
    int err = r->error;
    lm_request_status(r, st);
    lm_request_release(r);
    return err;
}
