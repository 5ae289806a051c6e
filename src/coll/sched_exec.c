/* Executing schedules: rounds of nonblocking point-to-point messages on
 * the collective context, local copies and reductions in between. */
#include "coll/sched_exec.h"
#include "coll/op.h"
#include "coll/coll_shm.h"
#include "util/lm_copy.h"
#include "util/lm_mem.h"
#include "pt2pt/pt2pt.h"
#include <stddef.h>
#include <string.h>

/* Tags of schedule messages stay below the ones group-local agreements use
 * (context_id.c sets bit 30). */
#define TAG_MASK 0x3fffffff

void lm_coll_exec_init(lm_coll_exec *x, lm_comm *c)
{
    /* everything but the schedule (initialised below) and the inline
     * areas, which need no clearing */
    memset(x, 0, offsetof(lm_coll_exec, sched));
    lm_sched_init(&x->sched);
    x->comm = c;
    lm_comm_hold(c); /* a pending collective keeps its communicator alive */
    x->elem = 1;
    x->reqs = x->inline_reqs;
    x->reqs_cap = LM_COLL_EXEC_INLINE_REQS;
}

lm_coll_exec *lm_coll_exec_new(lm_comm *c)
{
    lm_coll_exec *x = lm_malloc(LM_MEM_COLL, sizeof *x);
    if (x) lm_coll_exec_init(x, c);
    return x;
}

static void free_scratch(lm_coll_exec *x)
{
    if (x->scratch && x->scratch != x->inline_scratch) lm_free(LM_MEM_COLL, x->scratch);
    x->scratch = NULL;
}

void lm_coll_exec_fini(lm_coll_exec *x)
{
    for (int i = 0; i < x->nstages; i++)
        if (x->stages[i].type) lm_datatype_release(x->stages[i].type);
    if (x->op_type) {
        lm_datatype_release(x->op_type);
        lm_op_release(x->op);
    }
    if (x->stages) lm_free(LM_MEM_COLL, x->stages);
    lm_free(LM_MEM_COLL, x->owned);
    if (x->reqs != x->inline_reqs) lm_free(LM_MEM_COLL, x->reqs);
    free_scratch(x);
    if (x->sched.steps != x->sched.inline_steps || x->sched.round_end != x->sched.inline_rounds)
        lm_sched_free(&x->sched);
    lm_comm_drop(x->comm);
}

void lm_coll_exec_free(lm_coll_exec *x)
{
    if (!x) return;
    lm_coll_exec_fini(x);
    lm_free(LM_MEM_COLL, x);
}

size_t lm_coll_exec_stage(lm_coll_exec *x, void *user, MPI_Count count, lm_datatype *t, int in, int out, int raw)
{
    size_t bytes = (size_t)count * (size_t)(raw ? t->extent : t->size);
    size_t off = lm_sched_scratch(&x->sched, bytes);
    lm_coll_exec_stage_at(x, user, count, t, in, out, raw, off);
    return off;
}

void lm_coll_exec_stage_at(lm_coll_exec *x, void *user, MPI_Count count, lm_datatype *t, int in, int out, int raw,
                           size_t off)
{
    if (x->nstages == x->stages_cap) {
        int cap = x->stages_cap ? 2 * x->stages_cap : 4;
        lm_stage *n = lm_realloc(LM_MEM_COLL, x->stages, (size_t)cap * sizeof *n);
        if (!n) {
            x->sched.failed = 1;
            return;
        }
        x->stages = n;
        x->stages_cap = cap;
    }
    lm_datatype_retain(t);
    x->stages[x->nstages++] = (lm_stage){user, count, t, off, (uint8_t)in, (uint8_t)out, (uint8_t)raw};
}

void lm_coll_exec_blocks(lm_coll_exec *x, int slot, int n, const lm_coll_block *b, int in, int out, size_t *bytes,
                         size_t *offs)
{
    int dense = 1;
    for (int i = 0; i < n; i++) {
        bytes[i] = b[i].t ? (size_t)(b[i].count * b[i].t->size) : 0;
        if (bytes[i] && !lm_datatype_dense(b[i].t)) dense = 0;
    }
    if (!dense) {
        x->in_scratch[slot] = 1;
        x->scratch_at[slot] = 0;
        for (int i = 0; i < n; i++)
            offs[i] = bytes[i] ? lm_coll_exec_stage(x, (void *)b[i].buf, b[i].count, b[i].t, in, out, 0) : 0;
        return;
    }
    /* offsets from the lowest block, so that they stay non-negative */
    const char *lo = NULL;
    for (int i = 0; i < n; i++)
        if (bytes[i] && (!lo || (const char *)b[i].buf + b[i].t->true_lb < lo))
            lo = (const char *)b[i].buf + b[i].t->true_lb;
    for (int i = 0; i < n; i++) offs[i] = bytes[i] ? (size_t)((const char *)b[i].buf + b[i].t->true_lb - lo) : 0;
    x->base[slot] = (char *)lo;
}

/* Slots address the first data byte of element 0; ops take the address
 * the element's displacements start from. */
static void op_adapter(const void *in, void *inout, size_t count, void *arg)
{
    lm_coll_exec *x = arg;
    MPI_Aint lb = x->op_type->true_lb;
    lm_op_apply(x->op, (const char *)in - lb, (char *)inout - lb, count, x->op_type);
}

void lm_coll_exec_set_op(lm_coll_exec *x, MPI_Op op, lm_datatype *t)
{
    lm_datatype_retain(t);
    lm_op_retain(op);
    x->op = op;
    x->op_type = t;
    x->fn = op_adapter;
    x->fn_arg = x;
    x->elem = (size_t)t->extent;
}

/* Copy count elements of t between a user layout and a raw element layout
 * (element i at i * extent from base - true_lb ... as the user's would be)
 * through the packed stream, a bounded piece at a time. */
static void relayout(const lm_datatype *t, const void *from, void *to, MPI_Count count)
{
    char bounce[16384];
    MPI_Count total = count * t->size;
    for (MPI_Count off = 0; off < total; off += (MPI_Count)sizeof bounce) {
        size_t len = (size_t)(total - off < (MPI_Count)sizeof bounce ? total - off : (MPI_Count)sizeof bounce);
        lm_typemap_pack(t, from, count, off, bounce, len);
        lm_typemap_unpack(t, to, count, off, bounce, len);
    }
}

static void stage_copy(lm_coll_exec *x, const lm_stage *st, int in)
{
    char *area = x->scratch + st->scratch_off;
    size_t packed = (size_t)(st->count * st->type->size);
    /* a raw copy keeps the user's element layout: element 0 at the start
     * of the area, so the user's displacements apply from area - true_lb */
    char *raw_base = area - st->type->true_lb;
    if (in) {
        if (st->raw) relayout(st->type, st->user, raw_base, st->count);
        else lm_typemap_pack(st->type, st->user, st->count, 0, area, packed);
    } else {
        if (st->raw) relayout(st->type, raw_base, st->user, st->count);
        else lm_typemap_unpack(st->type, st->user, st->count, 0, area, packed);
    }
}

static char *addr(lm_coll_exec *x, int slot, size_t off)
{
    if (slot == LM_SLOT_SCRATCH) return x->scratch + off;
    char *b = x->in_scratch[slot] ? x->scratch + x->scratch_at[slot] : x->base[slot];
    return b + off;
}

static void copy_step(lm_coll_exec *x, const lm_step *st)
{
    char *dst = addr(x, st->dst_slot, st->dst_off);
    const char *src = addr(x, st->src_slot, st->src_off);
    if (st->blocks == 1) {
        memmove(dst, src, st->bytes);
        return;
    }
    ptrdiff_t ds = (ptrdiff_t)st->dst_stride * (ptrdiff_t)st->bytes;
    ptrdiff_t ss = (ptrdiff_t)st->src_stride * (ptrdiff_t)st->bytes;
    for (uint32_t i = 0; i < st->blocks; i++) memcpy(dst + (ptrdiff_t)i * ds, src + (ptrdiff_t)i * ss, st->bytes);
}

static int prepare(lm_coll_exec *x)
{
    lm_sched *s = &x->sched;
    if (s->failed) return MPI_ERR_NO_MEM;
    if (lm_comm_has_simulated(x->comm)) return MPI_ERR_COMM; /* its messages could never arrive */
    uint32_t widest = s->widest;
    if (widest > x->reqs_cap) {
        /* nothing is in flight between runs: no contents to keep */
        lm_request **n = lm_malloc(LM_MEM_COLL, widest * sizeof *n);
        if (!n) return MPI_ERR_NO_MEM;
        if (x->reqs != x->inline_reqs) lm_free(LM_MEM_COLL, x->reqs);
        x->reqs = n;
        x->reqs_cap = widest;
    }
    if (s->scratch_bytes && !x->scratch) {
        x->scratch = s->scratch_bytes <= sizeof x->inline_scratch ? x->inline_scratch
                                                                  : lm_malloc(LM_MEM_COLL, s->scratch_bytes);
        if (!x->scratch) return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < x->nstages; i++)
        if (x->stages[i].copy_in) stage_copy(x, &x->stages[i], 1);
    if (!x->fixed_call) {
        x->call = x->comm->coll_seq++;
        x->tag = (int)(x->call & TAG_MASK);
    }
    x->round = 0;
    x->next_step = x->round_stop = 0;
    x->nreqs = 0;
    x->error = MPI_SUCCESS;
    x->round_error = MPI_SUCCESS;
    x->running = 1;
    return MPI_SUCCESS;
}

static void finish(lm_coll_exec *x)
{
    x->running = 0;
    if (x->error == MPI_SUCCESS)
        for (int i = 0; i < x->nstages; i++)
            if (x->stages[i].copy_out) stage_copy(x, &x->stages[i], 0);
    /* persistent collectives keep their scratch for the next start */
    if (!x->req || !x->req->persistent) free_scratch(x);
}

/* A request in the blocking run's frame: what lm_isend_bytes and
 * lm_irecv_bytes would allocate, without the handle object. */
static int post_in_frame(lm_coll_exec *x, const lm_step *st, lm_request *r)
{
    lm_comm *c = x->comm;
    lm_zero(r, sizeof *r);
    r->comm = c;
    r->ctx = c->context_id + 1;
    r->peer = st->peer;
    r->match_tag = x->tag;
    r->mode = LM_MODE_STANDARD;
    if (st->kind == LM_STEP_SEND) {
        r->kind = LM_REQ_SEND;
        r->buf = addr(x, st->src_slot, st->src_off);
        r->peer_world = st->peer >= 0 ? lm_comm_world_rank(c, st->peer) : -1;
    } else {
        r->kind = LM_REQ_RECV;
        r->buf = addr(x, st->dst_slot, st->dst_off);
        r->peer_world = -1;
    }
    r->len = st->bytes;
    return st->kind == LM_STEP_SEND ? lm_send_start(r) : lm_recv_start(r);
}

static void post(lm_coll_exec *x, const lm_step *st)
{
    lm_comm *c = x->comm;
    lm_request *r = NULL;
    if (x->frame_reqs) {
        /* a blocking run: what has arrived, or can leave, needs no request */
        int rc, done, err = MPI_SUCCESS;
        if (st->kind == LM_STEP_SEND)
            rc = lm_send_bytes_now(addr(x, st->src_slot, st->src_off), st->bytes, st->peer, x->tag, c,
                                   c->context_id + 1, &done);
        else
            rc = lm_recv_bytes_now(addr(x, st->dst_slot, st->dst_off), st->bytes, st->peer, x->tag, c->context_id + 1,
                                   &done, &err);
        if (rc != MPI_SUCCESS) {
            if (x->error == MPI_SUCCESS) x->error = rc;
            return;
        }
        if (done) {
            /* as a request's error: known once the round is done */
            if (err != MPI_SUCCESS && x->round_error == MPI_SUCCESS) x->round_error = err;
            return;
        }
    }
    if (x->frame_reqs && x->nreqs < LM_COLL_EXEC_INLINE_REQS) {
        r = &x->frame_reqs[x->nreqs];
        int rc = post_in_frame(x, st, r);
        if (rc != MPI_SUCCESS) {
            /* not started (no memory to queue it): nothing refers to r */
            if (x->error == MPI_SUCCESS) x->error = rc;
            return;
        }
        x->reqs[x->nreqs++] = r;
        return;
    }
    int rc = st->kind == LM_STEP_SEND ? lm_isend_bytes(addr(x, st->src_slot, st->src_off), st->bytes, st->peer, x->tag,
                                                       c, c->context_id + 1, &r)
                                      : lm_irecv_bytes(addr(x, st->dst_slot, st->dst_off), st->bytes, st->peer, x->tag,
                                                       c, c->context_id + 1, &r);
    if (rc != MPI_SUCCESS) {
        if (r) lm_request_release(r); /* never started: nothing to wait for */
        r = NULL;
        if (x->error == MPI_SUCCESS) x->error = rc;
    }
    if (r) x->reqs[x->nreqs++] = r;
}

/* A mailbox step: 1 when done, 0 when it has to wait for a peer. */
static int mailbox_step(lm_coll_exec *x, const lm_step *st)
{
    if (st->kind == LM_STEP_WAIT_READ) return lm_coll_shm_read_by_all(x->comm, x->call);
    if (st->kind == LM_STEP_POST) {
        if (st->by_address) return lm_coll_shm_post_address(x->comm, x->call, st, addr(x, st->src_slot, st->src_off));
        return lm_coll_shm_post(x->comm, x->call, st, st->bytes ? addr(x, st->src_slot, st->src_off) : NULL);
    }
    const void *data = st->by_address ? lm_coll_shm_peek_address(x->comm, x->call, st)
                                      : lm_coll_shm_peek(x->comm, x->call, st);
    if (!data) return 0;
    if (st->bytes) { /* a barrier's flags carry nothing */
        char *dst = addr(x, st->dst_slot, st->dst_off);
        if (st->kind == LM_STEP_FETCH_REDUCE) x->fn(data, dst, st->bytes / x->elem, x->fn_arg);
        else memcpy(dst, data, st->bytes);
    }
    lm_coll_shm_fetched(x->comm, x->call, st);
    return 1;
}

/* Issue the steps of the current round in order; 0 when a mailbox step has
 * to wait (the round resumes there next time). */
static int issue(lm_coll_exec *x)
{
    const lm_sched *s = &x->sched;
    for (; x->next_step < x->round_stop && x->error == MPI_SUCCESS; x->next_step++) {
        const lm_step *st = &s->steps[x->next_step];
        switch (st->kind) {
        case LM_STEP_SEND:
        case LM_STEP_RECV: post(x, st); break;
        case LM_STEP_COPY: copy_step(x, st); break;
        case LM_STEP_REDUCE:
            x->fn(addr(x, st->src_slot, st->src_off), addr(x, st->dst_slot, st->dst_off), st->bytes / x->elem,
                  x->fn_arg);
            break;
        default:
            if (!mailbox_step(x, st)) return 0;
        }
    }
    return 1;
}

/* The first part's rounds are done and nothing is in flight: append the
 * rest, with room for its requests and scratch (the first part's scratch
 * contents kept). */
static int extend_schedule(lm_coll_exec *x)
{
    lm_sched *s = &x->sched;
    size_t had = s->scratch_bytes;
    void (*extend)(lm_coll_exec *) = x->extend;
    x->extend = NULL;
    extend(x);
    if (s->failed) return MPI_ERR_NO_MEM;
    if (s->widest > x->reqs_cap) {
        lm_request **n = lm_malloc(LM_MEM_COLL, s->widest * sizeof *n);
        if (!n) return MPI_ERR_NO_MEM;
        if (x->reqs != x->inline_reqs) lm_free(LM_MEM_COLL, x->reqs);
        x->reqs = n;
        x->reqs_cap = s->widest;
    }
    if (s->scratch_bytes > had && !(x->scratch == x->inline_scratch && s->scratch_bytes <= sizeof x->inline_scratch)) {
        char *n = lm_malloc(LM_MEM_COLL, s->scratch_bytes);
        if (!n) return MPI_ERR_NO_MEM;
        if (x->scratch) memcpy(n, x->scratch, had);
        free_scratch(x);
        x->scratch = n;
    }
    return MPI_SUCCESS;
}

/* Move x forward as far as it goes without waiting; 1 when finished. */
static int advance(lm_coll_exec *x)
{
    lm_sched *s = &x->sched;
    for (;;) {
        if (!issue(x)) return 0;
        while (x->nreqs) {
            lm_request *r = x->reqs[x->nreqs - 1];
            if (!r->complete) return 0;
            if (r->error != MPI_SUCCESS && x->error == MPI_SUCCESS) x->error = r->error;
            lm_request_release(r);
            x->nreqs--;
        }
        if (x->round_error != MPI_SUCCESS) {
            if (x->error == MPI_SUCCESS) x->error = x->round_error;
            x->round_error = MPI_SUCCESS;
        }
        if (x->error == MPI_SUCCESS && x->round == s->nrounds && x->extend) x->error = extend_schedule(x);
        if (x->error != MPI_SUCCESS || x->round == s->nrounds) {
            finish(x);
            return 1;
        }
        x->next_step = x->round ? s->round_end[x->round - 1] : 0;
        x->round_stop = s->round_end[x->round];
        x->round++;
    }
}

int lm_coll_exec_run(lm_coll_exec *x)
{
    int rc = prepare(x);
    if (rc != MPI_SUCCESS) return rc;
    /* every message of a round completes before the next round starts and
     * before this returns, so the round's requests can live right here */
    lm_request frame[LM_COLL_EXEC_INLINE_REQS];
    x->frame_reqs = frame;
    unsigned idle = 0;
    while (!advance(x)) lm_progress_wait(&idle);
    x->frame_reqs = NULL;
    return x->error;
}

/* ---- nonblocking and persistent ---------------------------------------- */

static lm_coll_exec *active;
static int progress_slot = -1; /* on while a nonblocking or persistent collective is active */

static int progress_active(void)
{
    static int busy; /* posting a message may progress, which comes back here */
    if (busy) return 0;
    busy = 1;
    int n = 0;
    for (lm_coll_exec **p = &active; *p;) {
        lm_coll_exec *x = *p;
        if (!advance(x)) {
            p = &x->next_active;
            continue;
        }
        *p = x->next_active;
        n++;
        lm_request *r = x->req;
        r->error = x->error;
        lm_request_complete(r); /* may free r and x */
    }
    if (!active) lm_progress_hook_set_active(progress_slot, 0);
    busy = 0;
    return n;
}

static int activate(lm_coll_exec *x)
{
    int rc = prepare(x);
    if (rc != MPI_SUCCESS) return rc;
    x->req->complete = 0;
    x->req->error = MPI_SUCCESS;
    x->next_active = active;
    active = x;
    lm_progress_hook_set_active(progress_slot, 1);
    return MPI_SUCCESS;
}

static int start_persistent(lm_request *r) { return activate(r->ext); }

static void free_request_state(lm_request *r)
{
    lm_coll_exec_free(r->ext);
    r->ext = NULL;
}

int lm_coll_exec_start_request(lm_coll_exec *x, int persistent, lm_request **out)
{
    lm_request *r = lm_request_new(LM_REQ_COLL);
    if (!r) {
        lm_coll_exec_free(x);
        return MPI_ERR_NO_MEM;
    }
    r->comm = x->comm;
    r->source = MPI_ANY_SOURCE;
    r->tag = MPI_ANY_TAG;
    r->ext = x;
    r->ext_free = free_request_state;
    x->req = r;
    if (persistent) {
        /* its number in the order of initialization, the same on every rank */
        x->call = x->comm->coll_seq++;
        x->tag = (int)(x->call & TAG_MASK);
        x->fixed_call = 1;
        r->persistent = 1;
        r->complete = 1; /* inactive until MPI_Start */
        r->ext_start = start_persistent;
        *out = r;
        return MPI_SUCCESS;
    }
    int rc = activate(x);
    if (rc != MPI_SUCCESS) {
        lm_request_release(r);
        return rc;
    }
    *out = r;
    return MPI_SUCCESS;
}

int lm_coll_exec_start(void)
{
    progress_slot = lm_progress_hook_register(progress_active);
    return progress_slot < 0 ? MPI_ERR_INTERN : MPI_SUCCESS;
}
