/* MSG reach: one-sided operations that the target process carries out.
 *
 * Used where no other reach exists (a window over private memory when the
 * kernel refuses process_vm_writev, later peers on other nodes without
 * RDMA). An operation is one point-to-point message on the channel's
 * communicator (its own context id, so it never meets the program's
 * traffic): a header, an argument block and the data; the target answers
 * with one reply carrying an error class and the data asked for. Both go
 * through the point-to-point engine, so flow control, large payloads
 * (rendezvous) and ordering come from it: requests from one process to
 * one target are carried out in the order sent, replies matched in the
 * order posted.
 *
 * The target serves requests from a progress hook, so it must enter the
 * library (any blocking MPI call, a test, a fence, a flush) for them to
 * advance. The hook runs only while some channel serves or waits. */
#include "osc/osc_msg.h"
#include "pt2pt/pt2pt.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include <string.h>

enum { OP_PUT = 1, OP_GET, OP_CALL };
enum { TAG_REQUEST = 1, TAG_REPLY = 2 };

typedef struct msg_hdr {
    uint8_t op, kind;
    uint16_t pad;
    uint32_t arg_len;
    uint64_t addr; /* in the target's address space */
    uint64_t len, count;
    int64_t stride;
    uint64_t out_len; /* bytes of answer the issuer expects */
} msg_hdr;

typedef struct reply_hdr {
    int32_t err, pad;
} reply_hdr;

/* An operation issued and not yet answered: a request and its reply, or
 * (parts != 0 or sreq == NULL) network transfers tracked for the NET reach
 * (osc_net.c), finished when its last part is. */
typedef struct msg_op {
    struct msg_op *next;
    int rank;
    int parts;   /* tracked: parts in flight, plus one while still issuing */
    int net_err; /* tracked: the first error of a part */
    lm_request *sreq, *rreq;
    char *msg;   /* the request message */
    char *reply; /* reply_hdr + answer */
    void *dst;
    size_t out_len;
    lm_osc_done done;
    void *arg;
} msg_op;

/* A request received (or being received) and not yet carried out. */
typedef struct served {
    struct served *next;
    lm_request *r;
    char *buf;
} served;

/* A reply on its way back. */
typedef struct reply_out {
    struct reply_out *next;
    lm_request *sreq;
    char *buf;
} reply_out;

struct lm_osc_channel {
    lm_osc_channel_head head; /* serve, pending, err (osc.h) */
    lm_comm *comm;
    void *owner;
    msg_op *ops, **ops_tail;
    served *in, **in_tail;
    reply_out *out;
    lm_osc_channel *next; /* in the list the hook walks */
};

static lm_osc_channel *channels;
static int nbusy; /* channels that serve, plus operations and replies in flight */
static int progress_slot = -1;
static lm_osc_call_fn calls[LM_OSC_CALL_KINDS];

static void busy(int delta)
{
    nbusy += delta;
    if (progress_slot >= 0) lm_progress_hook_set_active(progress_slot, nbusy > 0);
}

void lm_osc_register_call(int kind, lm_osc_call_fn fn) { calls[kind] = fn; }

int lm_osc_channel_new(lm_comm *c, void *owner, int serve, lm_osc_channel **out)
{
    lm_osc_channel *ch = lm_calloc(LM_MEM_RMA, 1, sizeof *ch);
    if (!ch) return MPI_ERR_NO_MEM;
    ch->comm = c;
    ch->owner = owner;
    ch->head.serve = serve;
    ch->ops_tail = &ch->ops;
    ch->in_tail = &ch->in;
    ch->next = channels;
    channels = ch;
    if (serve) busy(1);
    *out = ch;
    return MPI_SUCCESS;
}

void lm_osc_channel_free(lm_osc_channel *ch)
{
    if (!ch) return;
    /* replies still leaving: they read buffers this channel owns */
    while (ch->out) {
        unsigned idle = 0;
        lm_progress_wait(&idle);
    }
    for (lm_osc_channel **p = &channels; *p; p = &(*p)->next)
        if (*p == ch) {
            *p = ch->next;
            break;
        }
    if (ch->head.serve) busy(-1);
    lm_free(LM_MEM_RMA, ch);
}

/* ---- issuing ---- */

static void track(lm_osc_channel *ch, msg_op *op)
{
    *ch->ops_tail = op;
    ch->ops_tail = &op->next;
    ch->head.pending++;
    busy(1);
}

static int issue(lm_osc_channel *ch, const lm_osc_target *t, const msg_hdr *h, const void *arg, const void *data,
                 size_t data_len, void *dst, lm_osc_done done, void *done_arg)
{
    size_t msg_len = sizeof *h + h->arg_len + data_len;
    msg_op *op = lm_calloc(LM_MEM_RMA, 1, sizeof *op);
    char *msg = lm_malloc(LM_MEM_RMA, msg_len);
    char *reply = lm_malloc(LM_MEM_RMA, sizeof(reply_hdr) + h->out_len);
    if (!op || !msg || !reply) {
        lm_free(LM_MEM_RMA, op);
        lm_free(LM_MEM_RMA, msg);
        lm_free(LM_MEM_RMA, reply);
        return MPI_ERR_NO_MEM;
    }
    memcpy(msg, h, sizeof *h);
    if (h->arg_len) memcpy(msg + sizeof *h, arg, h->arg_len);
    if (data_len) memcpy(msg + sizeof *h + h->arg_len, data, data_len);
    int ctx = ch->comm->context_id;
    /* the reply's receive first, so it is posted before any answer */
    int rc = lm_irecv_bytes(reply, sizeof(reply_hdr) + h->out_len, t->rank, TAG_REPLY, ch->comm, ctx, &op->rreq);
    if (rc == MPI_SUCCESS) rc = lm_isend_bytes(msg, msg_len, t->rank, TAG_REQUEST, ch->comm, ctx, &op->sreq);
    if (rc != MPI_SUCCESS) {
        if (op->rreq && !lm_recv_cancel(op->rreq)) lm_progress_until(&op->rreq->complete);
        if (op->rreq) lm_request_release(op->rreq);
        lm_free(LM_MEM_RMA, op);
        lm_free(LM_MEM_RMA, msg);
        lm_free(LM_MEM_RMA, reply);
        return rc;
    }
    op->rank = t->rank;
    op->msg = msg;
    op->reply = reply;
    op->dst = dst;
    op->out_len = h->out_len;
    op->done = done;
    op->arg = done_arg;
    track(ch, op);
    lm_osc_count.msg_requests++;
    return MPI_SUCCESS;
}

lm_osc_tracked *lm_osc_track(lm_osc_channel *ch, int rank, lm_osc_done done, void *arg)
{
    msg_op *op = lm_calloc(LM_MEM_RMA, 1, sizeof *op);
    if (!op) return NULL;
    op->rank = rank;
    op->parts = 1;
    op->done = done;
    op->arg = arg;
    track(ch, op);
    return op;
}

void lm_osc_track_part(lm_osc_tracked *op) { op->parts++; }

void lm_osc_track_part_done(lm_osc_tracked *op, int err)
{
    if (err && !op->net_err) op->net_err = err;
    op->parts--;
}

/* Unlink op from the channel's list (p points at its link). */
static void unlink_op(lm_osc_channel *ch, msg_op **p, msg_op *op)
{
    *p = op->next;
    if (ch->ops_tail == &op->next) ch->ops_tail = p;
    ch->head.pending--;
    busy(-1);
}

void lm_osc_untrack(lm_osc_channel *ch, lm_osc_tracked *op)
{
    for (msg_op **p = &ch->ops; *p; p = &(*p)->next)
        if (*p == op) {
            unlink_op(ch, p, op);
            lm_free(LM_MEM_RMA, op);
            return;
        }
}

int lm_osc_msg_put(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count, int64_t stride,
                   const void *src, lm_osc_done done, void *arg)
{
    msg_hdr h = {.op = OP_PUT, .addr = t->addr + off, .len = len, .count = count, .stride = stride};
    return issue(ch, t, &h, NULL, src, len * count, NULL, done, arg);
}

int lm_osc_msg_get(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count, int64_t stride,
                   void *dst, lm_osc_done done, void *arg)
{
    msg_hdr h = {
        .op = OP_GET, .addr = t->addr + off, .len = len, .count = count, .stride = stride, .out_len = len * count};
    return issue(ch, t, &h, NULL, NULL, 0, dst, done, arg);
}

int lm_osc_call(lm_osc_channel *ch, const lm_osc_target *t, int kind, const void *arg, size_t arg_len, const void *data,
                size_t data_len, void *out, size_t out_len, lm_osc_done done, void *arg_done)
{
    msg_hdr h = {
        .op = OP_CALL, .kind = (uint8_t)kind, .arg_len = (uint32_t)arg_len, .addr = t->addr, .out_len = out_len};
    return issue(ch, t, &h, arg, data, data_len, out, done, arg_done);
}

/* Finish the answered operations (in any order: each has its own done). */
static int reap_ops(lm_osc_channel *ch)
{
    int n = 0;
    msg_op **p = &ch->ops;
    while (*p) {
        msg_op *op = *p;
        if (!op->sreq) { /* tracked network transfers */
            if (op->parts) {
                p = &op->next;
                continue;
            }
            unlink_op(ch, p, op);
            if (op->done) op->done(op->arg, op->net_err);
            if (op->net_err && !ch->head.err) ch->head.err = op->net_err;
            lm_free(LM_MEM_RMA, op);
            n++;
            continue;
        }
        if (!op->rreq->complete || !op->sreq->complete) {
            p = &op->next;
            continue;
        }
        unlink_op(ch, p, op);
        int err = op->sreq->error ? op->sreq->error : op->rreq->error;
        if (!err) err = ((reply_hdr *)op->reply)->err;
        if (!err && op->out_len) memcpy(op->dst, op->reply + sizeof(reply_hdr), op->out_len);
        lm_request_release(op->sreq);
        lm_request_release(op->rreq);
        lm_free(LM_MEM_RMA, op->msg);
        lm_free(LM_MEM_RMA, op->reply);
        if (op->done) op->done(op->arg, err);
        if (err && !ch->head.err) ch->head.err = err;
        lm_free(LM_MEM_RMA, op);
        n++;
    }
    return n;
}

/* ---- serving ---- */

/* Carry out one request; the reply (error class + answer) goes to buf,
 * allocated here. */
static int carry_out(lm_osc_channel *ch, int origin, const char *req, size_t req_len, char **reply, size_t *reply_len)
{
    msg_hdr h;
    memcpy(&h, req, sizeof h);
    const char *arg = req + sizeof h, *data = arg + h.arg_len;
    size_t data_len = req_len - sizeof h - h.arg_len;
    *reply_len = sizeof(reply_hdr) + h.out_len;
    *reply = lm_calloc(LM_MEM_RMA, 1, *reply_len);
    if (!*reply) return MPI_ERR_NO_MEM;
    char *out = *reply + sizeof(reply_hdr);
    int err = MPI_SUCCESS;
    char *base = (char *)(uintptr_t)h.addr;
    switch (h.op) {
    case OP_PUT:
        for (uint64_t k = 0; k < h.count; k++) memcpy(base + (int64_t)k * h.stride, data + k * h.len, h.len);
        break;
    case OP_GET:
        for (uint64_t k = 0; k < h.count; k++) memcpy(out + k * h.len, base + (int64_t)k * h.stride, h.len);
        break;
    case OP_CALL:
        err = h.kind < LM_OSC_CALL_KINDS && calls[h.kind]
                  ? calls[h.kind](ch->owner, origin, arg, h.arg_len, data, data_len, out, h.out_len)
                  : MPI_ERR_INTERN;
        break;
    default: err = MPI_ERR_INTERN;
    }
    ((reply_hdr *)*reply)->err = err;
    lm_osc_count.msg_served++;
    return MPI_SUCCESS;
}

static int serve(lm_osc_channel *ch)
{
    int n = 0, ctx = ch->comm->context_id;
    MPI_Status st;
    struct lm_unexpected *u;
    /* take every request that has arrived, in arrival order */
    while ((u = lm_mprobe_take(MPI_ANY_SOURCE, TAG_REQUEST, ch->comm, ctx, &st)) != NULL) {
        size_t len = (size_t)((MPI_Count)(unsigned)st.count_lo |
                              ((MPI_Count)(st.count_hi_and_cancelled & 0x7fffffff) << 32));
        served *s = lm_calloc(LM_MEM_RMA, 1, sizeof *s);
        lm_request *r = lm_request_new(LM_REQ_RECV);
        char *buf = lm_malloc(LM_MEM_RMA, len ? len : 1);
        if (!s || !r || !buf) lm_fatal("one-sided engine: out of memory for a request of %zu bytes", len);
        r->comm = ch->comm;
        r->ctx = ctx;
        r->buf = buf;
        r->len = len;
        r->count = (MPI_Count)len;
        r->datatype = MPI_BYTE;
        lm_mrecv_start(r, u);
        s->r = r;
        s->buf = buf;
        *ch->in_tail = s;
        ch->in_tail = &s->next;
        n++;
    }
    /* carry them out in that order: a large one still arriving holds
     * back the ones behind it */
    while (ch->in && ch->in->r->complete) {
        served *s = ch->in;
        ch->in = s->next;
        if (!ch->in) ch->in_tail = &ch->in;
        int origin = s->r->source;
        char *reply;
        size_t reply_len;
        if (carry_out(ch, origin, s->buf, (size_t)s->r->bytes, &reply, &reply_len))
            lm_fatal("one-sided engine: out of memory for a reply");
        lm_request_release(s->r);
        lm_free(LM_MEM_RMA, s->buf);
        lm_free(LM_MEM_RMA, s);
        reply_out *o = lm_calloc(LM_MEM_RMA, 1, sizeof *o);
        if (!o || lm_isend_bytes(reply, reply_len, origin, TAG_REPLY, ch->comm, ctx, &o->sreq))
            lm_fatal("one-sided engine: cannot answer rank %d", origin);
        o->buf = reply;
        o->next = ch->out;
        ch->out = o;
        busy(1);
        n++;
    }
    for (reply_out **p = &ch->out; *p;) {
        reply_out *o = *p;
        if (!o->sreq->complete) {
            p = &o->next;
            continue;
        }
        *p = o->next;
        lm_request_release(o->sreq);
        lm_free(LM_MEM_RMA, o->buf);
        lm_free(LM_MEM_RMA, o);
        busy(-1);
    }
    return n;
}

static int progress(void)
{
    int n = 0;
    for (lm_osc_channel *ch = channels; ch; ch = ch->next) {
        if (ch->head.pending) n += reap_ops(ch);
        if (ch->head.serve || ch->out) n += serve(ch);
    }
    return n;
}

int lm_osc_flush_wait(lm_osc_channel *ch, int rank)
{
    /* requests others sent here advance too, even when nothing of ours
     * is in flight: a process that spins on flushes to itself must not
     * starve the ones waiting for it */
    if (ch->head.serve) lm_progress();
    unsigned idle = 0;
    while (lm_osc_pending(ch, rank)) {
        if (reap_ops(ch)) continue;
        lm_progress_wait(&idle);
    }
    int err = ch->head.err;
    ch->head.err = MPI_SUCCESS;
    return err;
}

int lm_osc_pending(const lm_osc_channel *ch, int rank)
{
    if (!ch) return 0;
    if (rank < 0) return ch->head.pending;
    int n = 0;
    for (const msg_op *op = ch->ops; op; op = op->next) n += op->rank == rank;
    return n;
}

int lm_osc_init(void)
{
    progress_slot = lm_progress_hook_register(progress);
    return progress_slot < 0 ? MPI_ERR_INTERN : MPI_SUCCESS;
}
