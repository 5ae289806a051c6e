/* MPI_Put and MPI_Get in all their forms, and what every communication
 * call shares: argument checks against the target's part (known on the
 * node from the window's segment), the completion of a call's engine
 * operations, and the walk of a target datatype as strided runs.
 *
 * Data moves as its packed stream: dense origin and target data are
 * copied as they are, a derived type on a DIRECT target is packed or
 * unpacked straight in the target's memory, and on the other reaches each
 * run of the target type (count blocks, stride apart) is one strided
 * engine operation. */
#include "rma/rma_op.h"
#include "datatype/typemap.h"
#include "obj/errhandler.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <string.h>

/* ---- checks ---- */

int lm_rma_prepare(lm_rma_args *a, MPI_Win win, const char *fname, int rank, MPI_Aint disp, const void *obuf,
                   MPI_Count ocount, MPI_Datatype odt, MPI_Count tcount, MPI_Datatype tdt, int origin_used)
{
    /* field by field: this is on the path of every 8-byte put */
    lm_win *w = lm_win_get(win);
    a->w = w;
    a->win = win;
    a->fname = fname;
    a->rank = rank;
    a->bytes = 0;
    a->ot = a->tt = NULL;
    if (!w) return lm_err_win(win, MPI_ERR_WIN, fname, "invalid window");
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (rank < 0 || rank >= w->comm->size)
        return lm_err_win(win, MPI_ERR_RANK, fname, "target rank %d is not in the window's group of %d", rank,
                          w->comm->size);
    if (!lm_rma_may_access(w, rank))
        return lm_err_win(win, MPI_ERR_RMA_SYNC, fname, "no access epoch to rank %d is open", rank);
    lm_datatype *tt = lm_datatype_get(tdt);
    lm_datatype *ot = origin_used ? lm_datatype_get(odt) : tt;
    if (!tt || !ot) return lm_err_win(win, MPI_ERR_TYPE, fname, "invalid datatype");
    if (!tt->committed || !ot->committed) return lm_err_win(win, MPI_ERR_TYPE, fname, "the datatype is not committed");
    if (origin_used && (MPI_Count)ot->size * ocount != (MPI_Count)tt->size * tcount)
        return lm_err_win(win, MPI_ERR_TYPE, fname, "origin data (%lld bytes) and target data (%lld bytes) differ",
                          (long long)(ot->size * ocount), (long long)(tt->size * tcount));
    a->obuf = obuf;
    a->ocount = ocount;
    a->tcount = tcount;
    a->ot = ot;
    a->tt = tt;
    a->bytes = (size_t)(tt->size * tcount);
    int64_t unit, size;
    lm_rma_target(w, rank, &a->t, &unit, &size);
    a->base = (int64_t)disp * unit;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC && disp < 0)
        return lm_err_win(win, MPI_ERR_RMA_RANGE, fname, "target_disp %lld is negative", (long long)disp);
    if (a->bytes == 0) return MPI_SUCCESS;
    int64_t first = a->base + tt->true_lb, step = (int64_t)(tcount - 1) * tt->extent;
    int64_t lo = first + (step < 0 ? step : 0), hi = first + (step > 0 ? step : 0) + tt->true_extent;
    a->lo = first;
    if (!lm_rma_in_range(w, rank, lo, hi))
        return lm_err_win(win, MPI_ERR_RMA_RANGE, fname,
                          w->flavor == MPI_WIN_FLAVOR_DYNAMIC
                              ? "bytes [%lld, %lld) are not inside a region rank %d has attached"
                              : "bytes [%lld, %lld) are outside the window part of rank %d",
                          (long long)lo, (long long)hi, rank);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* displacements are addresses: the target buffer itself is the
         * start of the range */
        if (a->t.reach == LM_OSC_DIRECT) a->t.mapped = (char *)(uintptr_t)a->base;
        else a->t.addr = (uint64_t)a->base;
        a->lo -= a->base;
        a->base = 0;
    }
    return MPI_SUCCESS;
}

/* ---- completion ---- */

lm_rma_op *lm_rma_op_new(lm_request *req, const lm_osc_target *t, lm_rma_op *space)
{
    int stack = !req && !lm_osc_async(t);
    lm_rma_op *o = stack ? space : lm_malloc(LM_MEM_RMA, sizeof *o);
    if (o) {
        *o = (lm_rma_op){.on_stack = stack};
        o->pending = 1;
        o->req = req;
    }
    return o;
}

static void finish(lm_rma_op *o)
{
    if (!o->err && o->rbuf) lm_typemap_unpack(o->rt, o->rbuf, o->rcount, 0, o->tmp, o->rbytes);
    if (o->rt) lm_datatype_release(o->rt);
    lm_free(LM_MEM_RMA, o->tmp);
    if (o->req) {
        o->req->error = o->err;
        lm_request_complete(o->req);
    }
    if (!o->on_stack) lm_free(LM_MEM_RMA, o);
}

void lm_rma_op_done(void *arg, int err)
{
    lm_rma_op *o = arg;
    if (err && !o->err) o->err = err;
    if (--o->pending == 0) finish(o);
}

int lm_rma_op_issued(lm_rma_op *o)
{
    int err = o->err;
    lm_rma_op_done(o, MPI_SUCCESS);
    return err;
}

int lm_rma_request_new(lm_win *w, const char *fname, lm_request **out)
{
    lm_request *r = lm_request_new(LM_REQ_SEND);
    if (!r) return lm_err_win(w->obj.handle, MPI_ERR_NO_MEM, fname, "out of memory");
    r->source = MPI_ANY_SOURCE;
    r->tag = MPI_ANY_TAG;
    *out = r;
    return MPI_SUCCESS;
}

int lm_rma_done_at_once(lm_win *w, const char *fname, MPI_Request *request)
{
    if (!request) return MPI_SUCCESS;
    lm_request *req = NULL;
    int rc = lm_rma_request_new(w, fname, &req);
    if (rc) return rc;
    lm_request_complete(req);
    *request = req->obj.handle;
    return MPI_SUCCESS;
}

/* ---- target runs ---- */

typedef struct walk_state {
    lm_rma_run_fn fn;
    void *arg;
} walk_state;

static void visit(void *arg, MPI_Aint disp, MPI_Count size, int basic, MPI_Count reps, MPI_Aint stride)
{
    (void)basic;
    walk_state *s = arg;
    s->fn(s->arg, (int64_t)disp, (size_t)size, (uint64_t)reps, (int64_t)stride);
}

void lm_rma_runs(const lm_datatype *t, MPI_Count count, lm_rma_run_fn fn, void *arg)
{
    if (lm_datatype_dense(t)) {
        size_t n = (size_t)(t->size * count);
        if (n) fn(arg, t->true_lb, n, 1, (int64_t)n);
        return;
    }
    walk_state s = {fn, arg};
    lm_typemap_walk(t, count, visit, &s);
}

/* ---- put and get ---- */

typedef struct xfer {
    lm_rma_args *a;
    lm_rma_op *o;
    char *stream;
    size_t pos;
    int put;
} xfer;

static void xfer_run(void *arg, int64_t disp, size_t size, uint64_t reps, int64_t stride)
{
    xfer *x = arg;
    x->o->pending++;
    int rc = x->put ? lm_osc_put(x->a->w->ch, &x->a->t, (uint64_t)(x->a->base + disp), size, reps, stride,
                                 x->stream + x->pos, lm_rma_op_done, x->o)
                    : lm_osc_get(x->a->w->ch, &x->a->t, (uint64_t)(x->a->base + disp), size, reps, stride,
                                 x->stream + x->pos, lm_rma_op_done, x->o);
    /* not issued: done never runs for it */
    if (rc) {
        x->o->pending--;
        if (!x->o->err) x->o->err = rc;
    }
    x->pos += size * reps;
}

static int transfer(lm_rma_args *a, int put, void *obuf, lm_request *req)
{
    lm_rma_op space, *o = lm_rma_op_new(req, &a->t, &space);
    if (!o) return lm_err_win(a->win, MPI_ERR_NO_MEM, a->fname, "out of memory");
    char *stream;
    if (lm_datatype_dense(a->ot)) {
        stream = (char *)obuf + a->ot->true_lb;
    } else {
        o->tmp = lm_malloc(LM_MEM_RMA, a->bytes);
        if (!o->tmp) {
            lm_rma_op_issued(o);
            return lm_err_win(a->win, MPI_ERR_NO_MEM, a->fname, "out of memory for %zu bytes of packed data", a->bytes);
        }
        stream = o->tmp;
        if (put) lm_typemap_pack(a->ot, obuf, a->ocount, 0, stream, a->bytes);
        else {
            /* unpacked into the program's buffer once it is all here */
            o->rbuf = obuf;
            o->rcount = a->ocount;
            o->rt = a->ot;
            o->rbytes = a->bytes;
            lm_datatype_retain(a->ot);
        }
    }
    if (a->t.reach == LM_OSC_DIRECT && !lm_datatype_dense(a->tt)) {
        char *target = a->t.mapped + a->base;
        if (put) lm_typemap_unpack(a->tt, target, a->tcount, 0, stream, a->bytes);
        else lm_typemap_pack(a->tt, target, a->tcount, 0, stream, a->bytes);
    } else {
        xfer x = {a, o, stream, 0, put};
        lm_rma_runs(a->tt, a->tcount, xfer_run, &x);
    }
    int rc = lm_rma_op_issued(o);
    if (rc) return lm_err_win(a->win, rc, a->fname, "the transfer to rank %d failed", a->rank);
    return MPI_SUCCESS;
}

/* memcpy with the sizes of single elements as constants, which the
 * compiler turns into moves instead of a call into the C library. */
static inline void copy_bytes(char *dst, const char *src, size_t n)
{
    switch (n) {
    case 4: memcpy(dst, src, 4); return;
    case 8: memcpy(dst, src, 8); return;
    case 16: memcpy(dst, src, 16); return;
    default: memcpy(dst, src, n);
    }
}

/* A put or get of n dense bytes between origin and target, both mapped
 * here, counted in the pvars. */
static void move_dense(int put, char *target, char *origin, size_t n)
{
    if (put) {
        copy_bytes(target, origin, n);
        lm_osc_count.bytes_put += n;
    } else {
        copy_bytes(origin, target, n);
        lm_osc_count.bytes_got += n;
    }
}

/* The common case whole, before any of the general checks: dense data of
 * predefined types to or from a part in node-shared memory, in an epoch
 * that covers the target, inside the part. 1 when done; 0 when the call
 * takes the general path (which reports what is wrong, if anything). */
static int put_get_here(int put, void *obuf, MPI_Count ocount, MPI_Datatype odt, int rank, MPI_Aint disp,
                        MPI_Count tcount, MPI_Datatype tdt, MPI_Win win)
{
    lm_win *w = lm_win_get(win);
    const lm_datatype *ot = lm_datatype_get(odt), *tt = lm_datatype_get(tdt);
    if (!w || !ot || !tt || !ot->predefined || !tt->predefined || !lm_datatype_dense(ot) || !lm_datatype_dense(tt))
        return 0;
    int64_t bytes;
    if (__builtin_mul_overflow((int64_t)ot->size, (int64_t)ocount, &bytes) || bytes != (int64_t)tt->size * tcount)
        return 0;
    char *target = lm_rma_direct_bytes(w, rank, disp, bytes);
    if (!target) return 0;
    move_dense(put, target, obuf, (size_t)bytes);
    return 1;
}

static int put_get(int put, const char *fname, void *obuf, MPI_Count ocount, MPI_Datatype odt, int rank, MPI_Aint disp,
                   MPI_Count tcount, MPI_Datatype tdt, MPI_Win win, MPI_Request *request)
{
    if (!request && put_get_here(put, obuf, ocount, odt, rank, disp, tcount, tdt, win)) return MPI_SUCCESS;
    lm_rma_args a;
    int rc = lm_rma_prepare(&a, win, fname, rank, disp, obuf, ocount, odt, tcount, tdt, 1);
    if (rc) return rc;
    /* dense data in memory mapped here (derived types among them): one memcpy */
    if (!request && a.bytes && a.t.reach == LM_OSC_DIRECT && lm_datatype_dense(a.ot) && lm_datatype_dense(a.tt)) {
        move_dense(put, a.t.mapped + a.lo, (char *)obuf + a.ot->true_lb, a.bytes);
        return MPI_SUCCESS;
    }
    if (a.rank == MPI_PROC_NULL || a.bytes == 0) return lm_rma_done_at_once(a.w, fname, request);
    lm_request *req = NULL;
    if (request && (rc = lm_rma_request_new(a.w, fname, &req))) return rc;
    rc = transfer(&a, put, obuf, req);
    if (req) {
        if (rc && !req->complete) lm_request_complete(req);
        *request = req->obj.handle;
    }
    return rc;
}

/* The entry points' fast paths (FAST_PATH in tools/gen/rules.py): the
 * plain case of put_get_here, taken before the generated checks. Beyond
 * what put_get_here looks at (window, types, counts, rank, displacement,
 * epoch, bounds) those checks refuse only an origin buffer that is NULL or
 * MPI_IN_PLACE, so that is declined here too. */
static inline int fast_put_get(int put, void *obuf, int ocount, MPI_Datatype odt, int rank, MPI_Aint disp, int tcount,
                               MPI_Datatype tdt, MPI_Win win, int *rc)
{
    if (!obuf || obuf == MPI_IN_PLACE || !put_get_here(put, obuf, ocount, odt, rank, disp, tcount, tdt, win)) return 0;
    *rc = MPI_SUCCESS;
    return 1;
}

int fast_MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, int *rc)
{
    return fast_put_get(1, (void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                        target_datatype, win, rc);
}

int fast_MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, int *rc)
{
    return fast_put_get(0, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                        target_datatype, win, rc);
}

int impl_MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return put_get(1, "MPI_Put", (void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, NULL);
}

int impl_MPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return put_get(1, "MPI_Put_c", (void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, NULL);
}

int impl_MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                  MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                  MPI_Request *request)
{
    return put_get(1, "MPI_Rput", (void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, request);
}

int impl_MPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                    MPI_Request *request)
{
    return put_get(1, "MPI_Rput_c", (void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, request);
}

int impl_MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return put_get(0, "MPI_Get", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                   target_datatype, win, NULL);
}

int impl_MPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return put_get(0, "MPI_Get_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                   target_datatype, win, NULL);
}

int impl_MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                  MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                  MPI_Request *request)
{
    return put_get(0, "MPI_Rget", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                   target_datatype, win, request);
}

int impl_MPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                    MPI_Request *request)
{
    return put_get(0, "MPI_Rget_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                   target_datatype, win, request);
}
