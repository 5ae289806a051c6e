/* The MPI collectives on intracommunicators. Every form — blocking,
 * nonblocking (MPI_I*), persistent (*_init) and large-count (_c) — checks
 * what the generated entry point could not (arrays, in-place rules,
 * ops), describes the call as a schedule spec with its buffers, and runs
 * the algorithm the selection table (or LEANMPI_<COLL>_ALGORITHM) picks.
 *
 * Dense data is used where it lies; any other layout is staged as its
 * packed stream (reductions: as a copy in the type's own element layout,
 * which is what the ops work on). */
#include "coll/coll_alg.h"
#include "coll/coll_counts_first.h"
#include "boot/boot.h"
#include "coll/coll_basic.h"
#include "coll/coll_args.h"
#include "coll/coll_shm.h"
#include "coll/intercomm_coll.h"
#include "coll/op.h"
#include "coll/sched_cache.h"
#include "coll/sched_exec.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <stdint.h>
#include <string.h>

typedef lm_arr arr;
#define ARR LM_ARR
#define at lm_arr_at
enum { RUN_BLOCKING = LM_RUN_BLOCKING, RUN_NONBLOCKING = LM_RUN_NONBLOCKING, RUN_PERSISTENT = LM_RUN_PERSISTENT };

typedef struct call {
    const char *fname;
    int kind;
    int mode;
    MPI_Comm comm;
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    MPI_Datatype stype, rtype;
    arr scounts, sdispls, rcounts, rdispls;
    const MPI_Datatype *stypes, *rtypes;
    MPI_Op op;
    int root;
    MPI_Request *request;
} call;

/* What a call turns into: the executor with its slots, the spec, and the
 * byte arrays of the v forms (needed only while the schedule is built). */
typedef struct build {
    lm_comm *c;
    lm_coll_exec *x;
    lm_coll_spec a;
    size_t *arrays;
} build;

static int fail(const call *k, int cls, const char *msg) { return lm_err_comm(k->comm, cls, k->fname, "%s", msg); }

static lm_datatype *type_of(MPI_Datatype dt) { return lm_datatype_get(dt); }

/* Point a slot at count elements of t at buf: directly when dense, as a
 * staged packed copy otherwise. */
static void slot_data(build *b, int slot, const void *buf, MPI_Count count, lm_datatype *t, int in, int out)
{
    lm_coll_exec *x = b->x;
    if (!count || lm_datatype_dense(t)) {
        x->base[slot] = (char *)buf + (count ? t->true_lb : 0);
        return;
    }
    x->in_scratch[slot] = 1;
    x->scratch_at[slot] = lm_coll_exec_stage(x, (void *)buf, count, t, in, out, 0);
}

/* The same for reductions: a staged copy keeps the element layout. */
static size_t slot_reduce(build *b, int slot, const void *buf, MPI_Count count, lm_datatype *t, int in, int out)
{
    lm_coll_exec *x = b->x;
    if (!count || lm_datatype_dense(t)) {
        x->base[slot] = (char *)buf + (count ? t->true_lb : 0);
        return 0;
    }
    x->in_scratch[slot] = 1;
    return x->scratch_at[slot] = lm_coll_exec_stage(x, (void *)buf, count, t, in, out, 1);
}

/* Whether count elements of t at buf would start at address 0: a NULL
 * buffer with data to move (MPI_BOTTOM takes a type or displacement that
 * points elsewhere). */
static int null_data(const void *buf, MPI_Count count, const lm_datatype *t)
{
    return count > 0 && (uintptr_t)buf + (uintptr_t)t->true_lb == 0;
}

static size_t *alloc_arrays(build *b, int n)
{
    if (!b->arrays) b->arrays = lm_calloc(LM_MEM_COLL, 4 * (size_t)(n ? n : 1), sizeof(size_t));
    return b->arrays;
}

/* One side of a v/w collective: n blocks of counts[i] elements of types[i]
 * (or t) at buf + displs[i] * unit (unit 0: the type's extent). Fills the
 * byte counts and offsets the generators read. */
static int blocks(const call *k, build *b, int slot, const void *buf, arr counts, arr displs, lm_datatype *t,
                  const MPI_Datatype *types, MPI_Aint unit, int in, int out, size_t *bc, size_t *bd)
{
    int n = b->c->size;
    const char *dir = slot == LM_SLOT_SEND ? "send" : "recv"; /* names the arrays in messages */
    if (!counts.p) return lm_err_comm(k->comm, MPI_ERR_ARG, k->fname, "argument %scounts is NULL", dir);
    if (!displs.p) return lm_err_comm(k->comm, MPI_ERR_ARG, k->fname, "the %s displacements array is NULL", dir);
    lm_coll_block *blk = lm_calloc(LM_MEM_COLL, (size_t)n, sizeof *blk);
    if (!blk) return fail(k, MPI_ERR_NO_MEM, "out of memory");
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && !rc; i++) {
        MPI_Count c = at(counts, i);
        if (c < 0)
            rc = lm_err_comm(k->comm, MPI_ERR_COUNT, k->fname, "argument %scounts[%d] = %lld is negative", dir, i,
                             (long long)c);
        if (rc || !c) continue;
        lm_datatype *ti = t;
        if (types) {
            ti = type_of(types[i]);
            if (!ti) rc = lm_err_comm(k->comm, MPI_ERR_TYPE, k->fname, "%stypes[%d] is not a valid datatype", dir, i);
            else if (!ti->committed)
                rc = lm_err_comm(k->comm, MPI_ERR_TYPE, k->fname, "%stypes[%d] has not been committed", dir, i);
            if (rc) continue;
        }
        blk[i] = (lm_coll_block){(const char *)buf + (MPI_Aint)at(displs, i) * (unit ? unit : ti->extent), c, ti};
        if (null_data(blk[i].buf, c, ti))
            rc = lm_err_comm(k->comm, MPI_ERR_BUFFER, k->fname, "argument %sbuf is NULL with %scounts[%d] = %lld", dir,
                             dir, i, (long long)c);
    }
    if (!rc) lm_coll_exec_blocks(b->x, slot, n, blk, in, out, bc, bd);
    lm_free(LM_MEM_COLL, blk);
    return rc;
}

/* Send and receive blocks of one rank must carry the same bytes. */
static int same_bytes(const call *k, size_t sent, size_t received)
{
    if (sent > received) return fail(k, MPI_ERR_TRUNCATE, "the send data is larger than the receive buffer");
    if (sent < received) return fail(k, MPI_ERR_ARG, "send and receive type signatures differ");
    return MPI_SUCCESS;
}

/* MPI_BOTTOM on both sides names absolute addresses, not one buffer. */
static int aliased(const call *k, const void *s, const void *r, int data)
{
    return data && s == r && s != MPI_BOTTOM
               ? fail(k, MPI_ERR_BUFFER, "send and receive buffers are the same (use MPI_IN_PLACE)")
               : MPI_SUCCESS;
}

/* This rank's own block: as many bytes sent as received, and not the same
 * memory unless MPI_IN_PLACE says so. */
static int own_block(const call *k, size_t sent, size_t received)
{
    int rc = same_bytes(k, sent, received);
    return rc ? rc : aliased(k, k->sbuf, k->rbuf, sent > 0);
}

/* ---- per collective ---------------------------------------------------- */

static int describe_bcast(const call *k, build *b)
{
    lm_datatype *t = type_of(k->rtype);
    int root = b->c->rank == k->root;
    b->a.bytes = (size_t)(k->rcount * t->size);
    slot_data(b, LM_SLOT_RECV, k->rbuf, k->rcount, t, root, !root);
    return MPI_SUCCESS;
}

static int describe_reduction(const call *k, build *b)
{
    lm_datatype *t = type_of(k->rtype);
    int me = b->c->rank, kind = k->kind, in_place = k->sbuf == MPI_IN_PLACE;
    int has_result = kind != LM_COLL_REDUCE || me == k->root;
    if (!lm_op_valid_for(k->op, t))
        return lm_err_comm(k->comm, MPI_ERR_OP, k->fname, "operation not defined for datatype %s",
                           t->name ? t->name : "(derived)");
    if (k->rbuf == MPI_IN_PLACE && has_result) return fail(k, MPI_ERR_BUFFER, "recvbuf cannot be MPI_IN_PLACE");
    if (in_place && !has_result) return fail(k, MPI_ERR_BUFFER, "only the root may use MPI_IN_PLACE");
    if (has_result) {
        int rc = aliased(k, k->sbuf, k->rbuf, k->rcount > 0);
        if (rc) return rc;
    }
    if (!lm_datatype_dense(t) && !t->contiguous && t->extent <= 0)
        return fail(k, MPI_ERR_TYPE, "reductions need a datatype with a positive extent");
    lm_coll_exec_set_op(b->x, k->op, t);
    b->a.commutative = lm_op_commutative(k->op);
    b->a.elem = (size_t)t->extent;
    b->a.bytes = (size_t)k->rcount * (size_t)t->extent;
    b->a.in_place = in_place;
    if (!in_place) slot_reduce(b, LM_SLOT_SEND, k->sbuf, k->rcount, t, 1, 0);
    if (has_result) /* exscan leaves rank 0's buffer alone */
        slot_reduce(b, LM_SLOT_RECV, k->rbuf, k->rcount, t, in_place, !(kind == LM_COLL_EXSCAN && me == 0));
    return MPI_SUCCESS;
}

static int describe_reduce_scatter(const call *k, build *b)
{
    lm_datatype *t = type_of(k->rtype);
    int n = b->c->size, me = b->c->rank, in_place = k->sbuf == MPI_IN_PLACE;
    if (!lm_op_valid_for(k->op, t))
        return lm_err_comm(k->comm, MPI_ERR_OP, k->fname, "operation not defined for datatype %s",
                           t->name ? t->name : "(derived)");
    if (k->rbuf == MPI_IN_PLACE) return fail(k, MPI_ERR_BUFFER, "recvbuf cannot be MPI_IN_PLACE");
    MPI_Count total = 0, mine = k->rcount;
    if (k->kind == LM_COLL_REDUCE_SCATTER) {
        if (!k->rcounts.p) return fail(k, MPI_ERR_ARG, "recvcounts is NULL");
        size_t *bc = alloc_arrays(b, n), *bd = bc + n;
        if (!bc) return fail(k, MPI_ERR_NO_MEM, "out of memory");
        for (int i = 0; i < n; i++) {
            if (at(k->rcounts, i) < 0) return fail(k, MPI_ERR_COUNT, "negative count in recvcounts");
            bc[i] = (size_t)at(k->rcounts, i) * (size_t)t->extent;
            bd[i] = (size_t)total * (size_t)t->extent;
            total += at(k->rcounts, i);
        }
        mine = at(k->rcounts, me);
        b->a.counts = bc;
        b->a.displs = bd;
    } else {
        total = k->rcount * n;
        b->a.bytes = (size_t)k->rcount * (size_t)t->extent;
    }
    int rc = aliased(k, k->sbuf, k->rbuf, total > 0);
    if (rc) return rc;
    if (!in_place && null_data(k->sbuf, total, t)) return fail(k, MPI_ERR_BUFFER, "argument sendbuf is NULL");
    if (null_data(k->rbuf, in_place ? total : mine, t)) return fail(k, MPI_ERR_BUFFER, "argument recvbuf is NULL");
    lm_coll_exec_set_op(b->x, k->op, t);
    b->a.commutative = lm_op_commutative(k->op);
    b->a.elem = (size_t)t->extent;
    b->a.in_place = in_place;
    if (!in_place) {
        slot_reduce(b, LM_SLOT_SEND, k->sbuf, total, t, 1, 0);
        slot_reduce(b, LM_SLOT_RECV, k->rbuf, mine, t, 0, 1);
    } else {
        /* the whole input is in recvbuf; only the first part takes the result */
        size_t off = slot_reduce(b, LM_SLOT_RECV, k->rbuf, total, t, 1, 0);
        if (b->x->in_scratch[LM_SLOT_RECV] && mine) lm_coll_exec_stage_at(b->x, k->rbuf, mine, t, 0, 1, 1, off);
    }
    return MPI_SUCCESS;
}

static int describe_gather(const call *k, build *b)
{
    int n = b->c->size, me = b->c->rank, root = me == k->root, in_place = k->sbuf == MPI_IN_PLACE;
    int v = k->kind == LM_COLL_GATHERV;
    if (in_place && !root) return fail(k, MPI_ERR_BUFFER, "only the root may use MPI_IN_PLACE");
    lm_datatype *st = in_place ? NULL : type_of(k->stype);
    b->a.in_place = in_place;
    if (!in_place) {
        b->a.bytes = (size_t)(k->scount * st->size);
        slot_data(b, LM_SLOT_SEND, k->sbuf, k->scount, st, 1, 0);
    }
    if (!root) return MPI_SUCCESS;
    lm_datatype *rt = type_of(k->rtype);
    if (!v) {
        size_t blk = (size_t)(k->rcount * rt->size);
        if (!in_place) {
            int rc = own_block(k, b->a.bytes, blk);
            if (rc) return rc;
        }
        b->a.bytes = blk;
        slot_data(b, LM_SLOT_RECV, k->rbuf, k->rcount * n, rt, in_place, 1);
        return MPI_SUCCESS;
    }
    size_t *bc = alloc_arrays(b, n), *bd = bc + n;
    if (!bc) return fail(k, MPI_ERR_NO_MEM, "out of memory");
    int rc = blocks(k, b, LM_SLOT_RECV, k->rbuf, k->rcounts, k->rdispls, rt, NULL, 0, in_place, 1, bc, bd);
    if (rc) return rc;
    if (!in_place) {
        rc = own_block(k, b->a.bytes, bc[me]);
        if (rc) return rc;
    }
    b->a.counts = bc;
    b->a.displs = bd;
    return MPI_SUCCESS;
}

static int describe_scatter(const call *k, build *b)
{
    int n = b->c->size, me = b->c->rank, root = me == k->root, in_place = k->rbuf == MPI_IN_PLACE;
    int v = k->kind == LM_COLL_SCATTERV;
    if (in_place && !root) return fail(k, MPI_ERR_BUFFER, "only the root may use MPI_IN_PLACE");
    if (k->sbuf == MPI_IN_PLACE && root) return fail(k, MPI_ERR_BUFFER, "sendbuf cannot be MPI_IN_PLACE");
    lm_datatype *rt = in_place ? NULL : type_of(k->rtype);
    b->a.in_place = in_place;
    if (!in_place) {
        b->a.bytes = (size_t)(k->rcount * rt->size);
        slot_data(b, LM_SLOT_RECV, k->rbuf, k->rcount, rt, 0, 1);
    }
    if (!root) return MPI_SUCCESS;
    lm_datatype *st = type_of(k->stype);
    if (!v) {
        size_t blk = (size_t)(k->scount * st->size);
        if (!in_place) {
            int rc = own_block(k, blk, b->a.bytes);
            if (rc) return rc;
        }
        b->a.bytes = blk;
        slot_data(b, LM_SLOT_SEND, k->sbuf, k->scount * n, st, 1, 0);
        return MPI_SUCCESS;
    }
    size_t *bc = alloc_arrays(b, n), *bd = bc + n;
    if (!bc) return fail(k, MPI_ERR_NO_MEM, "out of memory");
    int rc = blocks(k, b, LM_SLOT_SEND, k->sbuf, k->scounts, k->sdispls, st, NULL, 0, 1, 0, bc, bd);
    if (rc) return rc;
    if (!in_place) {
        rc = own_block(k, bc[me], b->a.bytes);
        if (rc) return rc;
    }
    b->a.counts = bc;
    b->a.displs = bd;
    return MPI_SUCCESS;
}

static int describe_allgather(const call *k, build *b)
{
    int n = b->c->size, me = b->c->rank, in_place = k->sbuf == MPI_IN_PLACE;
    if (k->rbuf == MPI_IN_PLACE) return fail(k, MPI_ERR_BUFFER, "recvbuf cannot be MPI_IN_PLACE");
    lm_datatype *rt = type_of(k->rtype), *st = in_place ? NULL : type_of(k->stype);
    size_t sent = in_place ? 0 : (size_t)(k->scount * st->size);
    b->a.in_place = in_place;
    if (!in_place) slot_data(b, LM_SLOT_SEND, k->sbuf, k->scount, st, 1, 0);
    if (k->kind == LM_COLL_ALLGATHER) {
        b->a.bytes = (size_t)(k->rcount * rt->size);
        if (!in_place) {
            int rc = own_block(k, sent, b->a.bytes);
            if (rc) return rc;
        }
        slot_data(b, LM_SLOT_RECV, k->rbuf, k->rcount * n, rt, in_place, 1);
        return MPI_SUCCESS;
    }
    size_t *bc = alloc_arrays(b, n), *bd = bc + n;
    if (!bc) return fail(k, MPI_ERR_NO_MEM, "out of memory");
    int rc = blocks(k, b, LM_SLOT_RECV, k->rbuf, k->rcounts, k->rdispls, rt, NULL, 0, in_place, 1, bc, bd);
    if (rc) return rc;
    if (!in_place) {
        rc = own_block(k, sent, bc[me]);
        if (rc) return rc;
    }
    b->a.bytes = bc[me];
    b->a.counts = bc;
    b->a.displs = bd;
    return MPI_SUCCESS;
}

static int describe_alltoall(const call *k, build *b)
{
    int n = b->c->size, in_place = k->sbuf == MPI_IN_PLACE;
    if (k->rbuf == MPI_IN_PLACE) return fail(k, MPI_ERR_BUFFER, "recvbuf cannot be MPI_IN_PLACE");
    b->a.in_place = in_place;
    if (k->kind == LM_COLL_ALLTOALL) {
        lm_datatype *rt = type_of(k->rtype);
        b->a.bytes = (size_t)(k->rcount * rt->size);
        if (!in_place) {
            lm_datatype *st = type_of(k->stype);
            int rc = own_block(k, (size_t)(k->scount * st->size), b->a.bytes);
            if (rc) return rc;
            slot_data(b, LM_SLOT_SEND, k->sbuf, k->scount * n, st, 1, 0);
        }
        slot_data(b, LM_SLOT_RECV, k->rbuf, k->rcount * n, rt, in_place, 1);
        return MPI_SUCCESS;
    }
    int w = k->kind == LM_COLL_ALLTOALLW;
    if (w && (!k->rtypes || (!in_place && !k->stypes))) return fail(k, MPI_ERR_ARG, "a types array is NULL");
    lm_datatype *rt = w ? NULL : type_of(k->rtype), *st = w || in_place ? NULL : type_of(k->stype);
    size_t *bc = alloc_arrays(b, n), *bd = bc + n, *sc = bd + n, *sd = sc + n;
    if (!bc) return fail(k, MPI_ERR_NO_MEM, "out of memory");
    int rc = blocks(k, b, LM_SLOT_RECV, k->rbuf, k->rcounts, k->rdispls, rt, w ? k->rtypes : NULL, w ? 1 : 0, in_place,
                    1, bc, bd);
    if (rc) return rc;
    b->a.counts = bc;
    b->a.displs = bd;
    if (in_place) { /* the generators send from (a copy of) the receive layout */
        b->a.scounts = bc;
        b->a.sdispls = bd;
        return MPI_SUCCESS;
    }
    rc = blocks(k, b, LM_SLOT_SEND, k->sbuf, k->scounts, k->sdispls, st, w ? k->stypes : NULL, w ? 1 : 0, 1, 0, sc, sd);
    if (rc) return rc;
    if (k->sbuf == k->rbuf && k->sbuf != MPI_BOTTOM)
        for (int i = 0; i < n; i++)
            if (sc[i] || bc[i])
                return fail(k, MPI_ERR_BUFFER, "send and receive buffers are the same (use MPI_IN_PLACE)");
    b->a.scounts = sc;
    b->a.sdispls = sd;
    return MPI_SUCCESS;
}

static int describe(const call *k, build *b)
{
    switch (k->kind) {
    case LM_COLL_BARRIER: return MPI_SUCCESS;
    case LM_COLL_BCAST: return describe_bcast(k, b);
    case LM_COLL_REDUCE:
    case LM_COLL_ALLREDUCE:
    case LM_COLL_SCAN:
    case LM_COLL_EXSCAN: return describe_reduction(k, b);
    case LM_COLL_REDUCE_SCATTER:
    case LM_COLL_REDUCE_SCATTER_BLOCK: return describe_reduce_scatter(k, b);
    case LM_COLL_GATHER:
    case LM_COLL_GATHERV: return describe_gather(k, b);
    case LM_COLL_SCATTER:
    case LM_COLL_SCATTERV: return describe_scatter(k, b);
    case LM_COLL_ALLGATHER:
    case LM_COLL_ALLGATHERV: return describe_allgather(k, b);
    default: return describe_alltoall(k, b);
    }
}

/* Intercommunicators: every form as one flat schedule (coll/intercomm_coll.c). */
static int run_inter(const call *k, lm_comm *c)
{
    lm_inter_call a = {.fname = k->fname,
                       .kind = k->kind,
                       .mode = k->mode,
                       .comm = k->comm,
                       .sbuf = k->sbuf,
                       .rbuf = k->rbuf,
                       .scount = k->scount,
                       .rcount = k->rcount,
                       .stype = k->stype,
                       .rtype = k->rtype,
                       .scounts = k->scounts,
                       .sdispls = k->sdispls,
                       .rcounts = k->rcounts,
                       .rdispls = k->rdispls,
                       .stypes = k->stypes,
                       .rtypes = k->rtypes,
                       .op = k->op,
                       .root = k->root,
                       .request = k->request};
    return lm_inter_coll(&a, c);
}

/* Blocking calls repeated with the same arguments (a loop around one
 * collective) reuse the executor the previous call built, as a persistent
 * collective would: described, checked, selected and generated once. It
 * lives with the communicator (built in place: an executor points into
 * itself) and is kept only when nothing had to be staged; the calls it
 * serves are the forms without per-rank arrays. */
typedef struct lm_coll_hot {
    call k; /* the arguments it was built for */
    int valid;
    int alg; /* its algorithm, as lm_comm.coll_alg counts */
    lm_coll_exec x;
} lm_coll_hot;

static int hot_kind(int kind)
{
    return kind != LM_COLL_GATHERV && kind != LM_COLL_SCATTERV && kind != LM_COLL_ALLGATHERV &&
           kind != LM_COLL_ALLTOALLV && kind != LM_COLL_ALLTOALLW && kind != LM_COLL_REDUCE_SCATTER;
}

static int same_call(const call *a, const call *b)
{
    return a->kind == b->kind && a->sbuf == b->sbuf && a->rbuf == b->rbuf && a->scount == b->scount &&
           a->rcount == b->rcount && a->stype == b->stype && a->rtype == b->rtype && a->op == b->op &&
           a->root == b->root;
}

void lm_coll_comm_freed(lm_comm *c)
{
    lm_coll_hot *h = c->coll_hot;
    if (!h || h->x.running) return; /* freed from inside its own call: kept */
    c->coll_hot = NULL;
    if (h->valid) lm_coll_exec_fini(&h->x); /* drops its hold on c */
    lm_free(LM_MEM_COLL, h);
}

/* Where a blocking call builds its executor: the communicator's kept one
 * (retired first), or the stack while that one is running (a callback
 * inside a collective calling another). */
static lm_coll_hot *hot_slot(lm_comm *c, const call *k)
{
    if (!hot_kind(k->kind)) return NULL;
    lm_coll_hot *h = c->coll_hot;
    if (!h) {
        h = c->coll_hot = lm_calloc(LM_MEM_COLL, 1, sizeof *h); /* not valid, not running */
    }
    if (!h || h->x.running) return NULL;
    if (h->valid) lm_coll_exec_fini(&h->x);
    h->valid = 0;
    return h;
}

/* spec.ppn of c (coll_alg.h), worked out once per communicator: how many
 * consecutive ranks each node holds, when c spans several nodes that way.
 * Every member reads the same group and the same layout arithmetic, so all
 * get the same answer; another job's process (no node here) rules it out. */
static int node_blocks(lm_comm *c)
{
    if (c->coll_ppn) return c->coll_ppn > 0 ? c->coll_ppn : 0;
    int ppn = -1;
    if (lm_boot_node_count() > 1 && !c->is_inter && c->size > 2) {
        int first = lm_boot_node_of(lm_comm_world_rank(c, 0)), n = 1;
        while (n < c->size && lm_boot_node_of(lm_comm_world_rank(c, n)) == first) n++;
        ppn = first >= 0 && n >= 2 && n < c->size ? n : -1;
        for (int r = 0; ppn > 0 && r < c->size; r++) {
            int node = lm_boot_node_of(lm_comm_world_rank(c, r));
            int leader_node = lm_boot_node_of(lm_comm_world_rank(c, r / ppn * ppn));
            /* a block on one node, and the next block on another */
            if (node < 0 || node != leader_node ||
                (r % ppn == 0 && r > 0 && leader_node == lm_boot_node_of(lm_comm_world_rank(c, r - ppn))))
                ppn = -1;
        }
    }
    c->coll_ppn = ppn;
    return ppn > 0 ? ppn : 0;
}

static int run(call *k)
{
    lm_comm *c = lm_comm_get(k->comm);
    if (!c) return fail(k, MPI_ERR_COMM, "invalid communicator");
    if (lm_comm_has_simulated(c))
        return fail(k, MPI_ERR_COMM, "the communicator has simulated ranks (mpirun --simulate-world-size)");
    if (c->is_inter) return run_inter(k, c);
    if (k->mode != RUN_BLOCKING && !k->request) return fail(k, MPI_ERR_ARG, "request is NULL");
    int rc;
    lm_coll_hot *hot = c->coll_hot;
    if (k->mode == RUN_BLOCKING && hot && hot->valid && !hot->x.running && same_call(&hot->k, k)) {
        c->coll_alg = hot->alg;
        rc = lm_coll_exec_run(&hot->x);
        return rc == MPI_SUCCESS ? rc : lm_err_comm(k->comm, rc, k->fname, "communication failed");
    }
    /* a blocking call's executor lives with the communicator or on the
     * stack: small schedules then run without a single allocation of the
     * executor's own */
    lm_coll_exec on_stack;
    build b = {.c = c, .x = &on_stack};
    hot = k->mode == RUN_BLOCKING ? hot_slot(c, k) : NULL;
    if (hot) b.x = &hot->x;
    if (k->mode == RUN_BLOCKING) lm_coll_exec_init(b.x, c);
    else if (!(b.x = lm_coll_exec_new(c))) return fail(k, MPI_ERR_NO_MEM, "out of memory");
    b.a = (lm_coll_spec){
        .kind = k->kind, .size = c->size, .rank = c->rank, .root = k->root, .elem = 1, .commutative = 1};
    rc = describe(k, &b);
    if (rc == MPI_SUCCESS) {
        /* every member makes the same blocking call here: the one place
         * mailboxes can be set up for all of them at once */
        if (k->mode == RUN_BLOCKING) lm_coll_shm_setup(c);
        /* not for persistent ones: mailbox entries go round in the order
         * collectives start, which persistent ones need not keep */
        b.a.shm = k->mode != RUN_PERSISTENT && lm_coll_shm_ready(c);
        b.a.space = b.a.shm && lm_coll_shm_same_space(c);
        b.a.ppn = node_blocks(c);
    }
    if (rc == MPI_SUCCESS) {
        /* the table's choice, also where the schedule comes from the cache
         * (the same spec chose it then; v forms are never cached) */
        const lm_coll_alg *g = lm_coll_select(&b.a);
        c->coll_alg = (int)(g - lm_coll_algs) + 1;
        if (g->counts_first) {
            /* a v form across nodes: a leader's schedule is finished once
             * its members' counts are in */
            rc = lm_coll_counts_first_generate(b.x, g, &b.a);
            if (rc != MPI_SUCCESS) rc = fail(k, rc, "out of memory");
        } else if (!lm_sched_cache_get(&b.a, &b.x->sched)) {
            size_t staged = b.x->sched.scratch_bytes;
            g->gen(&b.x->sched, &b.a);
            lm_sched_cache_put(&b.a, staged, &b.x->sched);
        }
    }
    lm_free(LM_MEM_COLL, b.arrays);
    if (rc != MPI_SUCCESS) {
        if (k->mode == RUN_BLOCKING) lm_coll_exec_fini(b.x);
        else lm_coll_exec_free(b.x);
        return rc;
    }
    if (k->mode == RUN_BLOCKING) {
        rc = lm_coll_exec_run(b.x);
        if (hot && rc == MPI_SUCCESS && !b.x->nstages) {
            hot->k = *k;
            hot->alg = c->coll_alg;
            hot->valid = 1;
        } else {
            lm_coll_exec_fini(b.x);
        }
        return rc == MPI_SUCCESS ? rc : lm_err_comm(k->comm, rc, k->fname, "communication failed");
    }
    lm_request *r;
    rc = lm_coll_exec_start_request(b.x, k->mode == RUN_PERSISTENT, &r);
    if (rc != MPI_SUCCESS) return lm_err_comm(k->comm, rc, k->fname, "could not start");
    *k->request = r->obj.handle;
    return MPI_SUCCESS;
}

int lm_coll_init(void)
{
    int rc = lm_coll_exec_start();
    if (rc == MPI_SUCCESS) rc = lm_comm_on_free(lm_coll_comm_freed);
    if (rc == MPI_SUCCESS) rc = lm_comm_on_destroy(lm_coll_shm_release);
    return rc;
}

void lm_coll_finalize(void) { lm_coll_shm_finalize(); }

/* ---- entry points -------------------------------------------------------
 * Each collective has up to six forms (classic, _c, I, I_c, _init,
 * _init_c); every one fills a call and runs it. Persistent forms take info
 * hints, none of which change the schedule yet. */

/* Each entry point is a signature followed by a macro body without a
 * semicolon, which the formatter cannot lay out. */
// clang-format off
#define ENTRY(fn, KIND, MODE, REQ, ...)                                                                        \
    {                                                                                                          \
        call k = {.fname = fn, .kind = KIND, .mode = MODE, .request = REQ};                                    \
        __VA_ARGS__;                                                                                           \
        return run(&k);                                                                                        \
    }

/* barrier */
int impl_MPI_Barrier(MPI_Comm comm) ENTRY("MPI_Barrier", LM_COLL_BARRIER, RUN_BLOCKING, NULL, k.comm = comm)
int impl_MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
    ENTRY("MPI_Ibarrier", LM_COLL_BARRIER, RUN_NONBLOCKING, request, k.comm = comm)
int impl_MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
    ENTRY("MPI_Barrier_init", LM_COLL_BARRIER, RUN_PERSISTENT, request, (void)info; k.comm = comm)

/* bcast */
#define BCAST(fn, MODE, REQ) \
    ENTRY(fn, LM_COLL_BCAST, MODE, REQ, k.rbuf = buffer; k.rcount = count; k.rtype = datatype; k.root = root; k.comm = comm)
int impl_MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
    BCAST("MPI_Bcast", RUN_BLOCKING, NULL)
int impl_MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
    BCAST("MPI_Bcast_c", RUN_BLOCKING, NULL)
int impl_MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
    BCAST("MPI_Ibcast", RUN_NONBLOCKING, request)
int impl_MPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                      MPI_Request *request) BCAST("MPI_Ibcast_c", RUN_NONBLOCKING, request)
int impl_MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request) BCAST("MPI_Bcast_init", RUN_PERSISTENT, request)
int impl_MPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                          MPI_Info info, MPI_Request *request) BCAST("MPI_Bcast_init_c", RUN_PERSISTENT, request)

/* reduce, allreduce, scan, exscan */
#define REDUCTION(fn, KIND, MODE, REQ, ROOT)                                                                    \
    ENTRY(fn, KIND, MODE, REQ, k.sbuf = sendbuf; k.rbuf = recvbuf; k.rcount = count; k.rtype = datatype;       \
          k.op = op; k.root = ROOT; k.comm = comm)
#define REDUCTION_FORMS(Name, IName, KIND)                                                                     \
    int impl_MPI_##Name(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,       \
                        MPI_Comm comm) REDUCTION("MPI_" #Name, KIND, RUN_BLOCKING, NULL, 0)                     \
    int impl_MPI_##Name##_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,        \
                            MPI_Op op, MPI_Comm comm) REDUCTION("MPI_" #Name "_c", KIND, RUN_BLOCKING, NULL, 0) \
    int impl_MPI_##IName(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,      \
                         MPI_Comm comm, MPI_Request *request)                                                  \
        REDUCTION("MPI_" #IName, KIND, RUN_NONBLOCKING, request, 0)                                            \
    int impl_MPI_##IName##_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,       \
                             MPI_Op op, MPI_Comm comm, MPI_Request *request)                                   \
        REDUCTION("MPI_" #IName "_c", KIND, RUN_NONBLOCKING, request, 0)                                       \
    int impl_MPI_##Name##_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, \
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)                             \
        REDUCTION("MPI_" #Name "_init", KIND, RUN_PERSISTENT, request, 0)                                      \
    int impl_MPI_##Name##_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,   \
                                 MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)                \
        REDUCTION("MPI_" #Name "_init_c", KIND, RUN_PERSISTENT, request, 0)
REDUCTION_FORMS(Allreduce, Iallreduce, LM_COLL_ALLREDUCE)
REDUCTION_FORMS(Scan, Iscan, LM_COLL_SCAN)
REDUCTION_FORMS(Exscan, Iexscan, LM_COLL_EXSCAN)

int impl_MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                    MPI_Comm comm) REDUCTION("MPI_Reduce", LM_COLL_REDUCE, RUN_BLOCKING, NULL, root)
int impl_MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                      int root, MPI_Comm comm) REDUCTION("MPI_Reduce_c", LM_COLL_REDUCE, RUN_BLOCKING, NULL, root)
int impl_MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm, MPI_Request *request)
    REDUCTION("MPI_Ireduce", LM_COLL_REDUCE, RUN_NONBLOCKING, request, root)
int impl_MPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                       int root, MPI_Comm comm, MPI_Request *request)
    REDUCTION("MPI_Ireduce_c", LM_COLL_REDUCE, RUN_NONBLOCKING, request, root)
int impl_MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
    REDUCTION("MPI_Reduce_init", LM_COLL_REDUCE, RUN_PERSISTENT, request, root)
int impl_MPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                           int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
    REDUCTION("MPI_Reduce_init_c", LM_COLL_REDUCE, RUN_PERSISTENT, request, root)

/* reduce_scatter_block, reduce_scatter */
#define RSB(fn, MODE, REQ)                                                                                     \
    ENTRY(fn, LM_COLL_REDUCE_SCATTER_BLOCK, MODE, REQ, k.sbuf = sendbuf; k.rbuf = recvbuf; k.rcount = recvcount; \
          k.rtype = datatype; k.op = op; k.comm = comm)
int impl_MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm) RSB("MPI_Reduce_scatter_block", RUN_BLOCKING, NULL)
int impl_MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                    MPI_Op op, MPI_Comm comm) RSB("MPI_Reduce_scatter_block_c", RUN_BLOCKING, NULL)
int impl_MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
    RSB("MPI_Ireduce_scatter_block", RUN_NONBLOCKING, request)
int impl_MPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
    RSB("MPI_Ireduce_scatter_block_c", RUN_NONBLOCKING, request)
int impl_MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
    RSB("MPI_Reduce_scatter_block_init", RUN_PERSISTENT, request)
int impl_MPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                         MPI_Request *request)
    RSB("MPI_Reduce_scatter_block_init_c", RUN_PERSISTENT, request)

#define RS(fn, MODE, REQ)                                                                                      \
    ENTRY(fn, LM_COLL_REDUCE_SCATTER, MODE, REQ, k.sbuf = sendbuf; k.rbuf = recvbuf; k.rcounts = ARR(recvcounts); \
          k.rtype = datatype; k.op = op; k.comm = comm)
int impl_MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm) RS("MPI_Reduce_scatter", RUN_BLOCKING, NULL)
int impl_MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
    RS("MPI_Reduce_scatter_c", RUN_BLOCKING, NULL)
int impl_MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Request *request)
    RS("MPI_Ireduce_scatter", RUN_NONBLOCKING, request)
int impl_MPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
    RS("MPI_Ireduce_scatter_c", RUN_NONBLOCKING, request)
int impl_MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
    RS("MPI_Reduce_scatter_init", RUN_PERSISTENT, request)
int impl_MPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request) RS("MPI_Reduce_scatter_init_c", RUN_PERSISTENT, request)

/* gather, scatter, allgather, alltoall: (send, count, type, recv, count, type) */
#define DATA(fn, KIND, MODE, REQ, ROOT)                                                                         \
    ENTRY(fn, KIND, MODE, REQ, k.sbuf = sendbuf; k.scount = sendcount; k.stype = sendtype; k.rbuf = recvbuf;   \
          k.rcount = recvcount; k.rtype = recvtype; k.root = ROOT; k.comm = comm)
#define DATA_FORMS(Name, IName, KIND)                                                                          \
    int impl_MPI_##Name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,             \
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm)                                   \
        DATA("MPI_" #Name, KIND, RUN_BLOCKING, NULL, 0)                                                        \
    int impl_MPI_##Name##_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,   \
                            MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)                         \
        DATA("MPI_" #Name "_c", KIND, RUN_BLOCKING, NULL, 0)                                                   \
    int impl_MPI_##IName(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,            \
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)            \
        DATA("MPI_" #IName, KIND, RUN_NONBLOCKING, request, 0)                                                 \
    int impl_MPI_##IName##_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,  \
                             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)  \
        DATA("MPI_" #IName "_c", KIND, RUN_NONBLOCKING, request, 0)                                            \
    int impl_MPI_##Name##_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,      \
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,             \
                               MPI_Request *request) DATA("MPI_" #Name "_init", KIND, RUN_PERSISTENT, request, 0) \
    int impl_MPI_##Name##_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,             \
                                 void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,     \
                                 MPI_Info info, MPI_Request *request)                                          \
        DATA("MPI_" #Name "_init_c", KIND, RUN_PERSISTENT, request, 0)
#define ROOTED_FORMS(Name, IName, KIND)                                                                        \
    int impl_MPI_##Name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,             \
                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)                         \
        DATA("MPI_" #Name, KIND, RUN_BLOCKING, NULL, root)                                                     \
    int impl_MPI_##Name##_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,   \
                            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)               \
        DATA("MPI_" #Name "_c", KIND, RUN_BLOCKING, NULL, root)                                                \
    int impl_MPI_##IName(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,            \
                         int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)  \
        DATA("MPI_" #IName, KIND, RUN_NONBLOCKING, request, root)                                              \
    int impl_MPI_##IName##_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,  \
                             MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,              \
                             MPI_Request *request) DATA("MPI_" #IName "_c", KIND, RUN_NONBLOCKING, request, root) \
    int impl_MPI_##Name##_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,      \
                               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,   \
                               MPI_Request *request) DATA("MPI_" #Name "_init", KIND, RUN_PERSISTENT, request, root) \
    int impl_MPI_##Name##_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,             \
                                 void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,          \
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request)                           \
        DATA("MPI_" #Name "_init_c", KIND, RUN_PERSISTENT, request, root)
ROOTED_FORMS(Gather, Igather, LM_COLL_GATHER)
ROOTED_FORMS(Scatter, Iscatter, LM_COLL_SCATTER)
DATA_FORMS(Allgather, Iallgather, LM_COLL_ALLGATHER)
DATA_FORMS(Alltoall, Ialltoall, LM_COLL_ALLTOALL)

/* gatherv, allgatherv: receive counts and displacements */
#define RECV_V(fn, KIND, MODE, REQ, ROOT)                                                                       \
    ENTRY(fn, KIND, MODE, REQ, k.sbuf = sendbuf; k.scount = sendcount; k.stype = sendtype; k.rbuf = recvbuf;   \
          k.rcounts = ARR(recvcounts); k.rdispls = ARR(displs); k.rtype = recvtype; k.root = ROOT; k.comm = comm)
int impl_MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
    RECV_V("MPI_Gatherv", LM_COLL_GATHERV, RUN_BLOCKING, NULL, root)
int impl_MPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                       MPI_Comm comm) RECV_V("MPI_Gatherv_c", LM_COLL_GATHERV, RUN_BLOCKING, NULL, root)
int impl_MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Request *request) RECV_V("MPI_Igatherv", LM_COLL_GATHERV, RUN_NONBLOCKING, request, root)
int impl_MPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Request *request)
    RECV_V("MPI_Igatherv_c", LM_COLL_GATHERV, RUN_NONBLOCKING, request, root)
int impl_MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
    RECV_V("MPI_Gatherv_init", LM_COLL_GATHERV, RUN_PERSISTENT, request, root)
int impl_MPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Info info, MPI_Request *request)
    RECV_V("MPI_Gatherv_init_c", LM_COLL_GATHERV, RUN_PERSISTENT, request, root)
int impl_MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
    RECV_V("MPI_Allgatherv", LM_COLL_ALLGATHERV, RUN_BLOCKING, NULL, 0)
int impl_MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                          MPI_Comm comm) RECV_V("MPI_Allgatherv_c", LM_COLL_ALLGATHERV, RUN_BLOCKING, NULL, 0)
int impl_MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request *request)
    RECV_V("MPI_Iallgatherv", LM_COLL_ALLGATHERV, RUN_NONBLOCKING, request, 0)
int impl_MPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                           const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Request *request)
    RECV_V("MPI_Iallgatherv_c", LM_COLL_ALLGATHERV, RUN_NONBLOCKING, request, 0)
int impl_MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Info info, MPI_Request *request)
    RECV_V("MPI_Allgatherv_init", LM_COLL_ALLGATHERV, RUN_PERSISTENT, request, 0)
int impl_MPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
    RECV_V("MPI_Allgatherv_init_c", LM_COLL_ALLGATHERV, RUN_PERSISTENT, request, 0)

/* scatterv: send counts and displacements */
#define SEND_V(fn, MODE, REQ)                                                                                   \
    ENTRY(fn, LM_COLL_SCATTERV, MODE, REQ, k.sbuf = sendbuf; k.scounts = ARR(sendcounts); k.sdispls = ARR(displs); \
          k.stype = sendtype; k.rbuf = recvbuf; k.rcount = recvcount; k.rtype = recvtype; k.root = root; k.comm = comm)
int impl_MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
    SEND_V("MPI_Scatterv", RUN_BLOCKING, NULL)
int impl_MPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm) SEND_V("MPI_Scatterv_c", RUN_BLOCKING, NULL)
int impl_MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                       MPI_Request *request) SEND_V("MPI_Iscatterv", RUN_NONBLOCKING, request)
int impl_MPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm, MPI_Request *request) SEND_V("MPI_Iscatterv_c", RUN_NONBLOCKING, request)
int impl_MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                           MPI_Info info, MPI_Request *request) SEND_V("MPI_Scatterv_init", RUN_PERSISTENT, request)
int impl_MPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                             MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
    SEND_V("MPI_Scatterv_init_c", RUN_PERSISTENT, request)

/* alltoallv */
#define A2AV(fn, MODE, REQ)                                                                                     \
    ENTRY(fn, LM_COLL_ALLTOALLV, MODE, REQ, k.sbuf = sendbuf; k.scounts = ARR(sendcounts);                     \
          k.sdispls = ARR(sdispls); k.stype = sendtype; k.rbuf = recvbuf; k.rcounts = ARR(recvcounts);         \
          k.rdispls = ARR(rdispls); k.rtype = recvtype; k.comm = comm)
int impl_MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm) A2AV("MPI_Alltoallv", RUN_BLOCKING, NULL)
int impl_MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                         MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                         MPI_Datatype recvtype, MPI_Comm comm) A2AV("MPI_Alltoallv_c", RUN_BLOCKING, NULL)
int impl_MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Request *request) A2AV("MPI_Ialltoallv", RUN_NONBLOCKING, request)
int impl_MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                          MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                          const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
    A2AV("MPI_Ialltoallv_c", RUN_NONBLOCKING, request)
int impl_MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Info info, MPI_Request *request)
    A2AV("MPI_Alltoallv_init", RUN_PERSISTENT, request)
int impl_MPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request) A2AV("MPI_Alltoallv_init_c", RUN_PERSISTENT, request)

/* alltoallw: byte displacements, a type per peer */
#define A2AW(fn, MODE, REQ)                                                                                     \
    ENTRY(fn, LM_COLL_ALLTOALLW, MODE, REQ, k.sbuf = sendbuf; k.scounts = ARR(sendcounts);                     \
          k.sdispls = ARR(sdispls); k.stypes = sendtypes; k.rbuf = recvbuf; k.rcounts = ARR(recvcounts);       \
          k.rdispls = ARR(rdispls); k.rtypes = recvtypes; k.comm = comm)
int impl_MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                       const MPI_Datatype recvtypes[], MPI_Comm comm) A2AW("MPI_Alltoallw", RUN_BLOCKING, NULL)
int impl_MPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                         const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
    A2AW("MPI_Alltoallw_c", RUN_BLOCKING, NULL)
int impl_MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                        const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
    A2AW("MPI_Ialltoallw", RUN_NONBLOCKING, request)
int impl_MPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                          MPI_Request *request) A2AW("MPI_Ialltoallw_c", RUN_NONBLOCKING, request)
int impl_MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                            MPI_Request *request) A2AW("MPI_Alltoallw_init", RUN_PERSISTENT, request)
int impl_MPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                              MPI_Info info, MPI_Request *request) A2AW("MPI_Alltoallw_init_c", RUN_PERSISTENT, request)
    // clang-format on
