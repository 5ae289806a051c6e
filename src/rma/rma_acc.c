/* The accumulate family: MPI_Accumulate, MPI_Get_accumulate,
 * MPI_Fetch_and_op, MPI_Compare_and_swap and their request and _c forms.
 *
 * Atomicity: every accumulate-family operation on a rank's part runs
 * under that part's accumulate lock (a word in the node segment), whoever
 * carries it out: the origin itself on DIRECT and CMA memory, the target
 * process for MSG. So accumulates are atomic with respect to each other
 * whatever their op and size, element by element and in fact call by
 * call, and they complete in the order issued (accumulate_ordering is
 * honoured in full). Operations are applied to runs of the target type,
 * with the predefined element type every datatype of the call is made
 * of. */
#include "rma/rma_op.h"
#include "coll/op.h"
#include "datatype/builtin_types_gen.h"
#include "datatype/typemap.h"
#include "transport/transport.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "util/lm_copy.h"
#include "api/impl_gen.h"
#include <string.h>

#define OP_CAS ((int64_t)-1) /* compare and swap, in the call's argument */

/* What a target needs to carry out one run: sent as the call's argument
 * block for MSG, used directly otherwise. */
typedef struct acc_run {
    int64_t op; /* MPI_Op handle, or OP_CAS */
    int32_t elem, want_result;
    uint64_t off; /* from the start of the target's part; MSG: an address in the target */
    uint64_t size, reps;
    int64_t stride;
} acc_run;

static const lm_datatype *elem_type(int basic)
{
    return lm_datatype_get((MPI_Datatype)LM_HANDLE(LM_KIND_DATATYPE, LM_TIER_BUILTIN, basic));
}

/* One element of the types and ops that counters and flags use (sums,
 * bit operations on integers), applied in line instead of through
 * lm_op_apply. inline_op says which (MPI_REPLACE aside); apply_one takes
 * those and MPI_REPLACE. */
static inline int inline_op(MPI_Op op, int kind, size_t size)
{
    if ((kind == LM_TK_INT || kind == LM_TK_UINT) && (size == 4 || size == 8))
        return op == MPI_SUM || op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR;
    return kind == LM_TK_FLOAT && op == MPI_SUM && (size == sizeof(double) || size == sizeof(float));
}
#define APPLY_ONE(T, OP)          \
    do {                          \
        T x, y;                   \
        memcpy(&x, q, sizeof x);  \
        memcpy(&y, in, sizeof y); \
        x = (T)(OP);              \
        memcpy(q, &x, sizeof x);  \
        return;                   \
    } while (0)
static inline void apply_one(MPI_Op op, int kind, size_t size, char *q, const char *in)
{
    if (op == MPI_REPLACE) {
        memcpy(q, in, size);
    } else if (kind == LM_TK_FLOAT) {
        if (size == sizeof(double)) APPLY_ONE(double, x + y);
        APPLY_ONE(float, x + y);
    } else if (size == 8) {
        if (op == MPI_SUM) APPLY_ONE(uint64_t, x + y);
        if (op == MPI_BAND) APPLY_ONE(uint64_t, x & y);
        if (op == MPI_BOR) APPLY_ONE(uint64_t, x | y);
        APPLY_ONE(uint64_t, x ^ y);
    } else {
        if (op == MPI_SUM) APPLY_ONE(uint32_t, x + y);
        if (op == MPI_BAND) APPLY_ONE(uint32_t, x & y);
        if (op == MPI_BOR) APPLY_ONE(uint32_t, x | y);
        APPLY_ONE(uint32_t, x ^ y);
    }
}
#undef APPLY_ONE

/* Apply one run in this process's address space at p: data holds the
 * operands (for OP_CAS: new value, then compare value), result receives
 * the old contents when asked. */
static int apply_run(const acc_run *r, char *p, const char *data, char *result)
{
    const lm_datatype *e = elem_type(r->elem);
    size_t esize = (size_t)(e->predefined && lm_builtin_types[r->elem].kind == LM_TK_PAIR ? e->extent : e->size);
    for (uint64_t k = 0; k < r->reps; k++) {
        char *q = p + (int64_t)k * r->stride;
        if (r->want_result) memcpy(result + k * r->size, q, r->size);
        if (r->op == OP_CAS) {
            if (!memcmp(q, data + r->size, r->size)) memcpy(q, data, r->size);
        } else if ((MPI_Op)r->op != MPI_NO_OP) {
            int rc = lm_op_apply((MPI_Op)r->op, data + k * r->size, q, r->size / esize, e);
            if (rc) return rc;
        }
    }
    return MPI_SUCCESS;
}

/* MSG: the target carries a run out on its own part. */
static int call_acc(void *owner, int origin, const void *arg, size_t arg_len, const void *data, size_t data_len,
                    void *out, size_t out_len)
{
    (void)origin;
    (void)data_len;
    (void)out_len;
    lm_win *w = owner;
    acc_run r;
    if (arg_len != sizeof r) return MPI_ERR_INTERN;
    memcpy(&r, arg, sizeof r);
    int me = w->comm->rank;
    uint64_t span = r.reps ? (uint64_t)((int64_t)(r.reps - 1) * r.stride) + r.size : 0;
    /* the part a dynamic window exposes is known only here */
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC && !lm_rma_in_range(w, me, (int64_t)r.off, (int64_t)(r.off + span)))
        return MPI_ERR_RMA_RANGE;
    char *p = (char *)(uintptr_t)r.off;
    lm_rma_acc_lock(w, me);
    int rc = apply_run(&r, p, data, out);
    lm_rma_acc_unlock(w, me);
    return rc;
}

int lm_rma_calls_init(void)
{
    lm_osc_register_call(LM_RMA_CALL_ACC, call_acc);
    lm_osc_register_call(LM_RMA_CALL_SYNC, lm_rma_call_sync);
    return lm_osc_init();
}

/* The predefined type every element of count elements of t is made of, or
 * -1 when it mixes several. */
typedef struct elem_scan {
    int basic;
} elem_scan;

static void scan_leaf(void *arg, MPI_Aint disp, MPI_Count size, int basic, MPI_Count reps, MPI_Aint stride)
{
    (void)disp;
    (void)size;
    (void)reps;
    (void)stride;
    elem_scan *s = arg;
    if (s->basic == -2) s->basic = basic;
    else if (s->basic != basic) s->basic = -1;
}

static int elem_of(const lm_datatype *t)
{
    if (t->predefined) return t->basic_id;
    elem_scan s = {-2};
    lm_typemap_walk(t, 1, scan_leaf, &s);
    return s.basic < 0 ? -1 : s.basic;
}

/* ---- issuing ---- */

typedef struct acc_state {
    lm_rma_args *a;
    lm_rma_op *o;
    acc_run proto;
    const char *in; /* origin stream */
    char *out;      /* result stream */
    size_t pos;
    int cma_tmp_err;
} acc_state;

static void acc_issue_run(void *arg, int64_t disp, size_t size, uint64_t reps, int64_t stride)
{
    acc_state *s = arg;
    lm_rma_args *a = s->a;
    acc_run r = s->proto;
    r.off = (uint64_t)(a->base + disp);
    r.size = size;
    r.reps = reps;
    r.stride = stride;
    const char *in = s->in ? s->in + (r.op == OP_CAS ? 0 : s->pos) : NULL;
    char *out = s->out ? s->out + s->pos : NULL;
    size_t in_len = !s->in || (MPI_Op)r.op == MPI_NO_OP ? 0 : (r.op == OP_CAS ? 2 * size : size * reps);
    int rc = MPI_SUCCESS;
    switch (a->t.reach) {
    case LM_OSC_DIRECT: rc = apply_run(&r, a->t.mapped + r.off, in, out); break;
    case LM_OSC_CMA: {
        /* read, apply, write back each block, under the target's lock */
        char *tmp = lm_malloc(LM_MEM_RMA, size);
        if (!tmp) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        acc_run one = r;
        one.reps = 1;
        for (uint64_t k = 0; k < reps && !rc; k++) {
            uint64_t remote = a->t.addr + r.off + (uint64_t)((int64_t)k * stride);
            if (lm_transport_rget(a->t.world, tmp, remote, size) != LM_OK) rc = MPI_ERR_RMA_RANGE;
            if (!rc)
                rc = apply_run(&one, tmp, in ? in + (r.op == OP_CAS ? 0 : k * size) : NULL,
                               out ? out + k * size : NULL);
            if (!rc && (MPI_Op)r.op != MPI_NO_OP && lm_transport_rput(a->t.world, remote, tmp, size) != LM_OK)
                rc = MPI_ERR_RMA_RANGE;
        }
        lm_free(LM_MEM_RMA, tmp);
        break;
    }
    case LM_OSC_NET: /* not here: turned into MSG above */
    case LM_OSC_MSG:
        /* the target gets an address of its own */
        r.off += a->t.addr;
        s->o->pending++;
        rc = lm_osc_call(a->w->ch, &a->t, LM_RMA_CALL_ACC, &r, sizeof r, in, in_len, out, out ? size * reps : 0,
                         lm_rma_op_done, s->o);
        if (rc) s->o->pending--;
        break;
    }
    if (rc && !s->o->err) s->o->err = rc;
    s->pos += size * reps;
}

/* The common case, dense data on node-shared memory and no request (the
 * single element of MPI_Fetch_and_op and MPI_Compare_and_swap among
 * others): applied here to the bytes at target of rank's part, as one run
 * under the accumulate lock, without the machinery of issued operations.
 * in: the origin data (NULL for MPI_NO_OP), compare: MPI_Compare_and_swap's
 * (at most CAS_HERE bytes), out: where the old contents go (NULL for
 * none); one: a single element of an op apply_one takes (inline_op, or
 * MPI_REPLACE and MPI_NO_OP). Returns an MPI error class. */
#define CAS_HERE 32
static inline int accumulate_here(lm_win *w, int rank, char *target, size_t bytes, int64_t op, int elem, const char *in,
                                  const char *compare, char *out, int one)
{
    char cas_in[2 * CAS_HERE];
    if (compare) {
        memcpy(cas_in, in, bytes);
        memcpy(cas_in + bytes, compare, bytes);
        in = cas_in;
    }
    int rc = MPI_SUCCESS, locked = !lm_rma_holds_exclusive(w, rank);
    if (locked) lm_rma_acc_lock(w, rank);
    if (one) {
        /* one element of a counter or a flag: in line */
        if (out) lm_copy(out, target, bytes);
        if (in) apply_one((MPI_Op)op, lm_builtin_types[elem].kind, bytes, target, in);
    } else {
        acc_run r = {
            .op = op, .elem = elem, .want_result = out != NULL, .size = bytes, .reps = 1, .stride = (int64_t)bytes};
        rc = apply_run(&r, target, in, out);
    }
    if (locked) lm_rma_acc_unlock(w, rank);
    return rc;
}

static int is_cas_kind(int kind)
{
    return kind == LM_TK_INT || kind == LM_TK_UINT || kind == LM_TK_BYTE || kind == LM_TK_CHAR || kind == LM_TK_BOOL ||
           kind == LM_TK_LOGICAL;
}

/* Before any of the general checks: every type of the call one and the
 * same dense predefined type (not a pair), a predefined op that applies to
 * it, and the bytes in a part in node-shared memory within an epoch
 * (lm_rma_direct_bytes). 1 when done (*rc its outcome); 0 when the call
 * takes the general path, which reports what is wrong, if anything. */
static int accumulate_direct(const void *obuf, MPI_Count ocount, MPI_Datatype odt, void *rbuf, MPI_Count rcount,
                             MPI_Datatype rdt, int rank, MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt, MPI_Op op,
                             const void *compare, MPI_Win win, int *rc)
{
    lm_win *w = lm_win_get(win);
    const lm_datatype *tt = lm_datatype_get(tdt);
    if (!w || !tt || !tt->predefined || !lm_datatype_dense(tt)) return 0;
    int elem = tt->basic_id, kind = lm_builtin_types[elem].kind, no_op = !compare && op == MPI_NO_OP;
    int64_t bytes;
    if (kind == LM_TK_PAIR || __builtin_mul_overflow((int64_t)tt->size, (int64_t)tcount, &bytes)) return 0;
    if (!no_op && (odt != tdt || (int64_t)tt->size * ocount != bytes)) return 0;
    int result = rbuf || rdt != MPI_DATATYPE_NULL;
    if (result && (rdt != tdt || (int64_t)tt->size * rcount != bytes)) return 0;
    int one = !compare && bytes == tt->size && (op == MPI_REPLACE || no_op || inline_op(op, kind, (size_t)bytes));
    if (!one && (compare ? !is_cas_kind(kind) || bytes > CAS_HERE
                         : LM_HANDLE_TIER(op) != LM_TIER_BUILTIN ||
                               (op != MPI_REPLACE && op != MPI_NO_OP && !lm_op_valid_for(op, tt))))
        return 0;
    char *target = lm_rma_direct_bytes(w, rank, disp, bytes);
    if (!target) return 0;
    *rc = accumulate_here(w, rank, target, (size_t)bytes, compare ? OP_CAS : (int64_t)op, elem, no_op ? NULL : obuf,
                          compare, result ? rbuf : NULL, one);
    return 1;
}

/* What the caller of accumulate_direct returns for its outcome. */
static int direct_outcome(int rc, MPI_Win win, const char *fname, int rank)
{
    return rc ? lm_err_win(win, rc, fname, "the operation on rank %d failed", rank) : MPI_SUCCESS;
}

/* The common body. result: the result buffer of the fetching calls
 * (NULL for MPI_Accumulate); compare: MPI_Compare_and_swap's. */
static int accumulate(const char *fname, const void *obuf, MPI_Count ocount, MPI_Datatype odt, void *rbuf,
                      MPI_Count rcount, MPI_Datatype rdt, int rank, MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt,
                      MPI_Op op, const void *compare, MPI_Win win, MPI_Request *request)
{
    int cas = compare != NULL;
    int no_op = !cas && op == MPI_NO_OP;
    int rc;
    if (!request &&
        accumulate_direct(obuf, ocount, odt, rbuf, rcount, rdt, rank, disp, tcount, tdt, op, compare, win, &rc))
        return direct_outcome(rc, win, fname, rank);
    lm_rma_args a;
    rc = lm_rma_prepare(&a, win, fname, rank, disp, obuf, ocount, odt, tcount, tdt, !no_op);
    if (rc) return rc;
    /* accumulates on another host's memory are its owner's: its node's
     * ranks apply theirs with CPU atomics under the part's accumulate lock,
     * which the network's RMA cannot take */
    if (a.t.reach == LM_OSC_NET) a.t.reach = LM_OSC_MSG;
    if (!cas) {
        if (lm_op_user_get(op))
            return lm_err_win(win, MPI_ERR_OP, fname, "user-defined operations cannot be used in one-sided calls");
        if (!lm_op_valid(op)) return lm_err_win(win, MPI_ERR_OP, fname, "invalid operation");
    }
    lm_datatype *rt = NULL;
    if (rbuf || rdt != MPI_DATATYPE_NULL) {
        rt = lm_datatype_get(rdt);
        if (!rt || !rt->committed) return lm_err_win(win, MPI_ERR_TYPE, fname, "invalid result datatype");
        if (a.rank != MPI_PROC_NULL && (MPI_Count)rt->size * rcount != (MPI_Count)a.bytes)
            return lm_err_win(win, MPI_ERR_TYPE, fname, "result data (%lld bytes) and target data (%zu bytes) differ",
                              (long long)(rt->size * rcount), a.bytes);
    }
    int elem = a.tt ? elem_of(a.tt) : -1;
    /* nothing moves without data: no element type to check either */
    if (a.rank != MPI_PROC_NULL && a.bytes > 0) {
        if (elem < 0 || (!no_op && elem_of(a.ot) != elem) || (rt && elem_of(rt) != elem))
            return lm_err_win(win, MPI_ERR_TYPE, fname,
                              "the datatypes must all be made of one and the same predefined type");
        if (cas && !is_cas_kind(lm_builtin_types[elem].kind))
            return lm_err_win(win, MPI_ERR_TYPE, fname, "compare-and-swap takes integer, logical and byte types only");
        if (!cas && op != MPI_REPLACE && op != MPI_NO_OP && !lm_op_valid_for(op, elem_type(elem)))
            return lm_err_win(win, MPI_ERR_OP, fname, "the operation does not apply to %s",
                              lm_builtin_types[elem].name);
    }
    /* a predefined value-index pair (every type of the call is that pair:
     * a derived type shows its members instead) moves with its padding,
     * count elements at its extent, as one run */
    int pair = a.rank != MPI_PROC_NULL && a.bytes > 0 && lm_builtin_types[elem].kind == LM_TK_PAIR;
    if (a.rank == MPI_PROC_NULL || a.bytes == 0) return lm_rma_done_at_once(a.w, fname, request);
    if (!request && !pair && a.t.reach == LM_OSC_DIRECT && lm_datatype_dense(a.tt) &&
        (no_op || lm_datatype_dense(a.ot)) && (!rt || lm_datatype_dense(rt)) && (!cas || a.bytes <= CAS_HERE)) {
        rc = accumulate_here(a.w, a.rank, a.t.mapped + a.lo, a.bytes, cas ? OP_CAS : (int64_t)op, elem,
                             no_op ? NULL : (const char *)obuf + a.ot->true_lb, compare,
                             rt ? (char *)rbuf + rt->true_lb : NULL, 0);
        if (rc) return lm_err_win(win, rc, fname, "the operation on rank %d failed", rank);
        return MPI_SUCCESS;
    }
    lm_request *req = NULL;
    if (request && (rc = lm_rma_request_new(a.w, fname, &req))) return rc;
    lm_rma_op space, *o = lm_rma_op_new(req, &a.t, &space);
    char *cas_in = NULL;
    if (!o) rc = MPI_ERR_NO_MEM;
    acc_state s = {.a = &a, .o = o, .proto = {.op = cas ? OP_CAS : (int64_t)op, .elem = elem, .want_result = !!rt}};
    /* origin stream */
    if (!rc && cas) {
        cas_in = lm_malloc(LM_MEM_RMA, 2 * a.bytes);
        if (!cas_in) rc = MPI_ERR_NO_MEM;
        else {
            memcpy(cas_in, obuf, a.bytes);
            memcpy(cas_in + a.bytes, compare, a.bytes);
            s.in = cas_in;
        }
    } else if (!rc && !no_op) {
        if (pair || lm_datatype_dense(a.ot)) s.in = (const char *)obuf + a.ot->true_lb;
        else if (!(o->tmp = lm_malloc(LM_MEM_RMA, a.bytes))) rc = MPI_ERR_NO_MEM;
        else {
            lm_typemap_pack(a.ot, obuf, a.ocount, 0, o->tmp, a.bytes);
            s.in = o->tmp;
        }
    }
    /* result stream: in place when dense, else unpacked at the end */
    char *result_tmp = NULL;
    if (!rc && rt) {
        if (pair || lm_datatype_dense(rt)) s.out = (char *)rbuf + rt->true_lb;
        else if (!(result_tmp = lm_malloc(LM_MEM_RMA, a.bytes))) rc = MPI_ERR_NO_MEM;
        else s.out = result_tmp;
    }
    if (rc) {
        lm_free(LM_MEM_RMA, cas_in);
        lm_free(LM_MEM_RMA, result_tmp);
        if (o) lm_rma_op_issued(o);
        if (req) lm_request_release(req);
        return lm_err_win(win, rc, fname, "out of memory");
    }
    int locked = a.t.reach != LM_OSC_MSG && !lm_rma_holds_exclusive(a.w, rank);
    if (locked) lm_rma_acc_lock(a.w, rank);
    if (pair) {
        size_t span = (size_t)(a.tcount * a.tt->extent);
        acc_issue_run(&s, 0, span, 1, (int64_t)span);
    } else {
        lm_rma_runs(a.tt, a.tcount, acc_issue_run, &s);
    }
    if (locked) lm_rma_acc_unlock(a.w, rank);
    /* the origin stream was copied into the requests or used already; the
     * result stream, if packed, is unpacked when everything is in */
    if (cas_in) lm_free(LM_MEM_RMA, cas_in);
    if (result_tmp) {
        if (o->tmp) lm_free(LM_MEM_RMA, o->tmp);
        o->tmp = result_tmp;
        o->rbuf = rbuf;
        o->rcount = rcount;
        o->rt = rt;
        o->rbytes = a.bytes;
        lm_datatype_retain(rt);
    }
    rc = lm_rma_op_issued(o);
    if (req) *request = req->obj.handle;
    if (rc) return lm_err_win(win, rc, fname, "the operation on rank %d failed", rank);
    return MPI_SUCCESS;
}

/* The entry points' fast paths (FAST_PATH in tools/gen/rules.py):
 * accumulate_direct before the generated checks. Beyond what it looks at,
 * those checks refuse only buffers that are NULL or MPI_IN_PLACE (the
 * origin of MPI_Fetch_and_op may be NULL for MPI_NO_OP), so those are
 * declined here too. */
static inline int bad_buffer(const void *p) { return !p || p == MPI_IN_PLACE; }

int fast_MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        int *rc)
{
    if (bad_buffer(origin_addr) ||
        !accumulate_direct(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL, target_rank,
                           target_disp, target_count, target_datatype, op, NULL, win, rc))
        return 0;
    *rc = direct_outcome(*rc, win, "MPI_Accumulate", target_rank);
    return 1;
}

int fast_MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Op op, MPI_Win win, int *rc)
{
    if (origin_addr == MPI_IN_PLACE || (op != MPI_NO_OP && !origin_addr) || bad_buffer(result_addr) ||
        !accumulate_direct(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype,
                           op, NULL, win, rc))
        return 0;
    *rc = direct_outcome(*rc, win, "MPI_Fetch_and_op", target_rank);
    return 1;
}

int fast_MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                              MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win, int *rc)
{
    if (bad_buffer(origin_addr) || bad_buffer(compare_addr) || bad_buffer(result_addr) ||
        !accumulate_direct(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype,
                           MPI_REPLACE, compare_addr, win, rc))
        return 0;
    *rc = direct_outcome(*rc, win, "MPI_Compare_and_swap", target_rank);
    return 1;
}

int impl_MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return accumulate("MPI_Accumulate", origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, NULL, win, NULL);
}

int impl_MPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                          MPI_Op op, MPI_Win win)
{
    return accumulate("MPI_Accumulate_c", origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, NULL, win, NULL);
}

int impl_MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request *request)
{
    return accumulate("MPI_Raccumulate", origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, NULL, win, request);
}

int impl_MPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                           MPI_Op op, MPI_Win win, MPI_Request *request)
{
    return accumulate("MPI_Raccumulate_c", origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, NULL, win, request);
}

int impl_MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                            int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                            int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return accumulate("MPI_Get_accumulate", origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype, op, NULL, win, NULL);
}

int impl_MPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                              void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                              MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                              MPI_Win win)
{
    return accumulate("MPI_Get_accumulate_c", origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype, op, NULL, win, NULL);
}

int impl_MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                             int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                             int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                             MPI_Request *request)
{
    return accumulate("MPI_Rget_accumulate", origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype, op, NULL, win, request);
}

int impl_MPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                               void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                               MPI_Win win, MPI_Request *request)
{
    return accumulate("MPI_Rget_accumulate_c", origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype, op, NULL, win, request);
}

int impl_MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    lm_datatype *t = lm_datatype_get(datatype);
    if (t && !t->predefined)
        return lm_err_win(win, MPI_ERR_TYPE, "MPI_Fetch_and_op", "the datatype must be a predefined one");
    /* one element each: the generated checks see no count to hold a NULL
     * buffer against */
    if (!result_addr || (op != MPI_NO_OP && !origin_addr))
        return lm_err_win(win, MPI_ERR_BUFFER, "MPI_Fetch_and_op", "argument %s is NULL",
                          result_addr ? "origin_addr" : "result_addr");
    return accumulate("MPI_Fetch_and_op", origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp,
                      1, datatype, op, NULL, win, NULL);
}

int impl_MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                              MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    lm_datatype *t = lm_datatype_get(datatype);
    if (t && !t->predefined)
        return lm_err_win(win, MPI_ERR_TYPE, "MPI_Compare_and_swap", "the datatype must be a predefined one");
    if (!origin_addr || !compare_addr || !result_addr)
        return lm_err_win(win, MPI_ERR_BUFFER, "MPI_Compare_and_swap", "argument %s is NULL",
                          !origin_addr    ? "origin_addr"
                          : !compare_addr ? "compare_addr"
                                          : "result_addr");
    return accumulate("MPI_Compare_and_swap", origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                      target_disp, 1, datatype, MPI_REPLACE, compare_addr, win, NULL);
}
