/* Intercommunicator collectives as flat schedules (coll/intercomm_coll.h).
 * Peers in the steps are remote ranks: point-to-point on an
 * intercommunicator addresses the other group. */
#include "coll/intercomm_coll.h"
#include "coll/coll_alg.h"
#include "coll/op.h"
#include "coll/sched_exec.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"

typedef struct {
    const lm_inter_call *k;
    lm_comm *c;
    lm_coll_exec *x;
    int m;          /* remote group size */
    size_t *arrays; /* byte counts and offsets of the v forms, 4 * m */
} build;

static int fail(const lm_inter_call *k, int cls, const char *msg)
{
    return lm_err_comm(k->comm, cls, k->fname, "%s", msg);
}

static int get_type(const lm_inter_call *k, MPI_Datatype dt, lm_datatype **t)
{
    *t = lm_datatype_get(dt);
    return *t ? MPI_SUCCESS : fail(k, MPI_ERR_TYPE, "invalid datatype");
}

/* count elements of t at buf as a slot: in place when dense, else staged
 * (raw: in the type's element layout, which reductions work on). */
static void slot(build *b, int s, const void *buf, MPI_Count count, lm_datatype *t, int in, int out, int raw)
{
    lm_coll_exec *x = b->x;
    if (!count || lm_datatype_dense(t)) {
        x->base[s] = (char *)buf + (count ? t->true_lb : 0);
        return;
    }
    x->in_scratch[s] = 1;
    x->scratch_at[s] = lm_coll_exec_stage(x, (void *)buf, count, t, in, out, raw);
}

/* One side of a v/w form: a block per remote rank (see coll_api.c). */
static int blocks(build *b, int s, const void *buf, lm_arr counts, lm_arr displs, lm_datatype *t,
                  const MPI_Datatype *types, int in, int out, size_t *bc, size_t *bd)
{
    const lm_inter_call *k = b->k;
    if (!counts.p || !displs.p) return fail(k, MPI_ERR_ARG, "a counts or displacements array is NULL");
    if (types == NULL && !t) return fail(k, MPI_ERR_TYPE, "invalid datatype");
    lm_coll_block *blk = lm_calloc(LM_MEM_COLL, (size_t)b->m + 1, sizeof *blk);
    if (!blk) return fail(k, MPI_ERR_NO_MEM, "out of memory");
    int rc = MPI_SUCCESS;
    for (int i = 0; i < b->m && !rc; i++) {
        MPI_Count n = lm_arr_at(counts, i);
        if (n < 0) rc = fail(k, MPI_ERR_COUNT, "negative count in the counts array");
        if (rc || !n) continue;
        lm_datatype *ti = t;
        if (types) {
            ti = lm_datatype_get(types[i]);
            if (!ti) rc = fail(k, MPI_ERR_TYPE, "invalid datatype in the types array");
            else if (!ti->committed) rc = fail(k, MPI_ERR_TYPE, "uncommitted datatype in the types array");
            if (rc) continue;
        }
        MPI_Aint unit = types ? 1 : ti->extent;
        blk[i] = (lm_coll_block){(const char *)buf + (MPI_Aint)lm_arr_at(displs, i) * unit, n, ti};
    }
    if (!rc) lm_coll_exec_blocks(b->x, s, b->m, blk, in, out, bc, bd);
    lm_free(LM_MEM_COLL, blk);
    return rc;
}

static int not_in_place(const lm_inter_call *k, const void *buf)
{
    return buf == MPI_IN_PLACE ? fail(k, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on an intercommunicator")
                               : MPI_SUCCESS;
}

/* Rooted collectives: which side of the call this process is on. */
enum { SIDE_NONE, SIDE_ROOT, SIDE_REMOTE };

static int side(build *b, int *out)
{
    int root = b->k->root;
    if (root == MPI_PROC_NULL) *out = SIDE_NONE;
    else if (root == MPI_ROOT) *out = SIDE_ROOT;
    else if (root < 0 || root >= b->m) return fail(b->k, MPI_ERR_ROOT, "invalid root");
    else *out = SIDE_REMOTE;
    return MPI_SUCCESS;
}

static void exchange_all(lm_sched *s, int m, size_t send_bytes, size_t recv_bytes)
{
    for (int j = 0; j < m; j++) lm_sched_recv(s, j, LM_SLOT_RECV, (size_t)j * recv_bytes, recv_bytes);
    for (int j = 0; j < m; j++) lm_sched_send(s, j, LM_SLOT_SEND, (size_t)j * send_bytes, send_bytes);
}

static int build_barrier(build *b)
{
    /* no process leaves before every remote one has entered */
    for (int j = 0; j < b->m; j++) lm_sched_recv(&b->x->sched, j, LM_SLOT_RECV, 0, 0);
    for (int j = 0; j < b->m; j++) lm_sched_send(&b->x->sched, j, LM_SLOT_SEND, 0, 0);
    return MPI_SUCCESS;
}

static int build_bcast(build *b)
{
    const lm_inter_call *k = b->k;
    int sd, rc = side(b, &sd);
    lm_datatype *t;
    if (rc || sd == SIDE_NONE) return rc;
    if ((rc = get_type(k, k->rtype, &t))) return rc;
    size_t bytes = (size_t)(k->rcount * t->size);
    slot(b, LM_SLOT_RECV, k->rbuf, k->rcount, t, sd == SIDE_ROOT, sd != SIDE_ROOT, 0);
    if (sd == SIDE_REMOTE) lm_sched_recv(&b->x->sched, k->root, LM_SLOT_RECV, 0, bytes);
    else
        for (int j = 0; j < b->m; j++) lm_sched_send(&b->x->sched, j, LM_SLOT_RECV, 0, bytes);
    return MPI_SUCCESS;
}

/* gather(v) and scatter(v): the root side holds a block per remote rank. */
static int build_rooted_blocks(build *b, int gather)
{
    const lm_inter_call *k = b->k;
    int sd, rc = side(b, &sd), v = k->kind == LM_COLL_GATHERV || k->kind == LM_COLL_SCATTERV;
    if (rc || sd == SIDE_NONE) return rc;
    lm_sched *s = &b->x->sched;
    /* the root's many blocks are in RECV for a gather, SEND for a scatter */
    int many = gather ? LM_SLOT_RECV : LM_SLOT_SEND, one = gather ? LM_SLOT_SEND : LM_SLOT_RECV;
    const void *mbuf = gather ? k->rbuf : k->sbuf, *obuf = gather ? k->sbuf : k->rbuf;
    MPI_Count mcount = gather ? k->rcount : k->scount, ocount = gather ? k->scount : k->rcount;
    MPI_Datatype mtype = gather ? k->rtype : k->stype, otype = gather ? k->stype : k->rtype;
    lm_datatype *t;
    if (sd == SIDE_REMOTE) {
        if ((rc = not_in_place(k, obuf)) || (rc = get_type(k, otype, &t))) return rc;
        size_t bytes = (size_t)(ocount * t->size);
        slot(b, one, obuf, ocount, t, gather, !gather, 0);
        if (gather) lm_sched_send(s, k->root, one, 0, bytes);
        else lm_sched_recv(s, k->root, one, 0, bytes);
        return MPI_SUCCESS;
    }
    if ((rc = not_in_place(k, mbuf))) return rc;
    size_t *bc = b->arrays, *bd = bc + b->m;
    if (v) {
        t = lm_datatype_get(mtype);
        rc = blocks(b, many, mbuf, gather ? k->rcounts : k->scounts, gather ? k->rdispls : k->sdispls, t, NULL, !gather,
                    gather, bc, bd);
        if (rc) return rc;
    } else {
        if ((rc = get_type(k, mtype, &t))) return rc;
        slot(b, many, mbuf, mcount * b->m, t, !gather, gather, 0);
        for (int i = 0; i < b->m; i++) {
            bc[i] = (size_t)(mcount * t->size);
            bd[i] = (size_t)i * bc[i];
        }
    }
    for (int i = 0; i < b->m; i++) {
        if (gather) lm_sched_recv(s, i, many, bd[i], bc[i]);
        else lm_sched_send(s, i, many, bd[i], bc[i]);
    }
    return MPI_SUCCESS;
}

static int build_allgather(build *b)
{
    const lm_inter_call *k = b->k;
    lm_sched *s = &b->x->sched;
    lm_datatype *st, *rt;
    int rc = not_in_place(k, k->sbuf);
    if (!rc) rc = get_type(k, k->stype, &st);
    if (rc) return rc;
    size_t sent = (size_t)(k->scount * st->size);
    slot(b, LM_SLOT_SEND, k->sbuf, k->scount, st, 1, 0, 0);
    if (k->kind == LM_COLL_ALLGATHER) {
        if ((rc = get_type(k, k->rtype, &rt))) return rc;
        slot(b, LM_SLOT_RECV, k->rbuf, k->rcount * b->m, rt, 0, 1, 0);
        size_t blk = (size_t)(k->rcount * rt->size);
        for (int j = 0; j < b->m; j++) lm_sched_recv(s, j, LM_SLOT_RECV, (size_t)j * blk, blk);
    } else {
        size_t *bc = b->arrays, *bd = bc + b->m;
        rc = blocks(b, LM_SLOT_RECV, k->rbuf, k->rcounts, k->rdispls, lm_datatype_get(k->rtype), NULL, 0, 1, bc, bd);
        if (rc) return rc;
        for (int j = 0; j < b->m; j++) lm_sched_recv(s, j, LM_SLOT_RECV, bd[j], bc[j]);
    }
    for (int j = 0; j < b->m; j++) lm_sched_send(s, j, LM_SLOT_SEND, 0, sent);
    return MPI_SUCCESS;
}

static int build_alltoall(build *b)
{
    const lm_inter_call *k = b->k;
    lm_sched *s = &b->x->sched;
    int rc = not_in_place(k, k->sbuf);
    if (rc) return rc;
    if (k->kind == LM_COLL_ALLTOALL) {
        lm_datatype *st, *rt;
        if ((rc = get_type(k, k->stype, &st)) || (rc = get_type(k, k->rtype, &rt))) return rc;
        slot(b, LM_SLOT_SEND, k->sbuf, k->scount * b->m, st, 1, 0, 0);
        slot(b, LM_SLOT_RECV, k->rbuf, k->rcount * b->m, rt, 0, 1, 0);
        exchange_all(s, b->m, (size_t)(k->scount * st->size), (size_t)(k->rcount * rt->size));
        return MPI_SUCCESS;
    }
    int w = k->kind == LM_COLL_ALLTOALLW;
    if (w && (!k->stypes || !k->rtypes)) return fail(k, MPI_ERR_ARG, "a types array is NULL");
    size_t *rc_ = b->arrays, *rd = rc_ + b->m, *sc = rd + b->m, *sdp = sc + b->m;
    rc = blocks(b, LM_SLOT_RECV, k->rbuf, k->rcounts, k->rdispls, w ? NULL : lm_datatype_get(k->rtype),
                w ? k->rtypes : NULL, 0, 1, rc_, rd);
    if (!rc)
        rc = blocks(b, LM_SLOT_SEND, k->sbuf, k->scounts, k->sdispls, w ? NULL : lm_datatype_get(k->stype),
                    w ? k->stypes : NULL, 1, 0, sc, sdp);
    if (rc) return rc;
    for (int j = 0; j < b->m; j++) lm_sched_recv(s, j, LM_SLOT_RECV, rd[j], rc_[j]);
    for (int j = 0; j < b->m; j++) lm_sched_send(s, j, LM_SLOT_SEND, sdp[j], sc[j]);
    return MPI_SUCCESS;
}

/* Receive one input of `bytes` from every remote rank and combine them in
 * rank order into RECV at dst: the last one lands in place, each earlier
 * one is combined in front of it (in op acc), so non-commutative ops see
 * their operands in order. from_off picks the part of each input that is
 * kept (whole inputs of in_bytes arrive). */
static void recv_and_combine(build *b, size_t in_bytes, size_t from_off, size_t bytes)
{
    lm_sched *s = &b->x->sched;
    int m = b->m;
    size_t *at = b->arrays;
    for (int j = 0; j < m; j++) {
        if (j == m - 1 && in_bytes == bytes) {
            lm_sched_recv(s, j, LM_SLOT_RECV, 0, bytes);
            at[j] = (size_t)-1;
        } else {
            at[j] = lm_sched_scratch(s, in_bytes);
            lm_sched_recv(s, j, LM_SLOT_SCRATCH, at[j], in_bytes);
        }
    }
    lm_sched_round(s);
    if (at[m - 1] != (size_t)-1) {
        lm_sched_copy(s, LM_SLOT_SCRATCH, at[m - 1] + from_off, LM_SLOT_RECV, 0, bytes);
        lm_sched_round(s);
    }
    for (int j = m - 2; j >= 0; j--) {
        lm_sched_reduce(s, LM_SLOT_SCRATCH, at[j] + from_off, LM_SLOT_RECV, 0, bytes);
        lm_sched_round(s);
    }
}

static int build_reduction(build *b)
{
    const lm_inter_call *k = b->k;
    lm_sched *s = &b->x->sched;
    int kind = k->kind, sd = SIDE_REMOTE, rc = MPI_SUCCESS;
    if (kind == LM_COLL_REDUCE && ((rc = side(b, &sd)) || sd == SIDE_NONE)) return rc;
    lm_datatype *t;
    if ((rc = get_type(k, k->rtype, &t))) return rc;
    if (!lm_op_valid(k->op)) return fail(k, MPI_ERR_OP, "invalid operation");
    if (!lm_op_valid_for(k->op, t))
        return lm_err_comm(k->comm, MPI_ERR_OP, k->fname, "operation not defined for datatype %s",
                           t->name ? t->name : "(derived)");
    if (!lm_datatype_dense(t) && !t->contiguous && t->extent <= 0)
        return fail(k, MPI_ERR_TYPE, "reductions need a datatype with a positive extent");
    int sends = kind != LM_COLL_REDUCE || sd == SIDE_REMOTE, receives = kind != LM_COLL_REDUCE || sd == SIDE_ROOT;
    size_t ext = (size_t)t->extent;
    /* input and result counts: reduce_scatter(_block) scatters the result */
    MPI_Count in_count = k->rcount, mine = k->rcount, my_off = 0;
    if (kind == LM_COLL_REDUCE_SCATTER_BLOCK) {
        in_count = k->rcount * b->c->size;
    } else if (kind == LM_COLL_REDUCE_SCATTER) {
        if (!k->rcounts.p) return fail(k, MPI_ERR_ARG, "recvcounts is NULL");
        in_count = 0;
        for (int i = 0; i < b->c->size; i++) {
            MPI_Count n = lm_arr_at(k->rcounts, i);
            if (n < 0) return fail(k, MPI_ERR_COUNT, "negative count in recvcounts");
            if (i == b->c->rank) my_off = in_count;
            in_count += n;
        }
        mine = lm_arr_at(k->rcounts, b->c->rank);
    }
    if (sends && (rc = not_in_place(k, k->sbuf))) return rc;
    if (receives && k->rbuf == MPI_IN_PLACE) return fail(k, MPI_ERR_BUFFER, "recvbuf cannot be MPI_IN_PLACE");
    lm_coll_exec_set_op(b->x, k->op, t);
    if (sends) slot(b, LM_SLOT_SEND, k->sbuf, in_count, t, 1, 0, 1);
    if (receives) slot(b, LM_SLOT_RECV, k->rbuf, mine, t, 0, 1, 1);
    if (sends) {
        if (kind == LM_COLL_REDUCE) {
            lm_sched_send(s, k->root, LM_SLOT_SEND, 0, (size_t)in_count * ext);
        } else if (kind == LM_COLL_REDUCE_SCATTER_BLOCK) {
            /* remote rank j takes the j-th of m equal parts */
            size_t part = (size_t)(in_count / b->m) * ext;
            for (int j = 0; j < b->m; j++) lm_sched_send(s, j, LM_SLOT_SEND, (size_t)j * part, part);
        } else {
            /* allreduce; reduce_scatter, whose split only the receivers know */
            for (int j = 0; j < b->m; j++) lm_sched_send(s, j, LM_SLOT_SEND, 0, (size_t)in_count * ext);
        }
    }
    if (!receives) return MPI_SUCCESS;
    if (kind == LM_COLL_REDUCE_SCATTER)
        recv_and_combine(b, (size_t)in_count * ext, (size_t)my_off * ext, (size_t)mine * ext);
    else recv_and_combine(b, (size_t)mine * ext, 0, (size_t)mine * ext);
    return MPI_SUCCESS;
}

static int build_sched(build *b)
{
    switch (b->k->kind) {
    case LM_COLL_BARRIER: return build_barrier(b);
    case LM_COLL_BCAST: return build_bcast(b);
    case LM_COLL_GATHER:
    case LM_COLL_GATHERV: return build_rooted_blocks(b, 1);
    case LM_COLL_SCATTER:
    case LM_COLL_SCATTERV: return build_rooted_blocks(b, 0);
    case LM_COLL_ALLGATHER:
    case LM_COLL_ALLGATHERV: return build_allgather(b);
    case LM_COLL_ALLTOALL:
    case LM_COLL_ALLTOALLV:
    case LM_COLL_ALLTOALLW: return build_alltoall(b);
    case LM_COLL_REDUCE:
    case LM_COLL_ALLREDUCE:
    case LM_COLL_REDUCE_SCATTER:
    case LM_COLL_REDUCE_SCATTER_BLOCK: return build_reduction(b);
    default: return fail(b->k, MPI_ERR_COMM, "not defined on an intercommunicator");
    }
}

int lm_inter_coll(const lm_inter_call *k, lm_comm *c)
{
    if (k->mode != LM_RUN_BLOCKING && !k->request) return fail(k, MPI_ERR_ARG, "request is NULL");
    build b = {.k = k, .c = c, .m = c->remote_group->size};
    b.x = lm_coll_exec_new(c);
    b.arrays = lm_calloc(LM_MEM_COLL, 4 * (size_t)b.m + 1, sizeof(size_t));
    if (!b.x || !b.arrays) {
        lm_coll_exec_free(b.x);
        lm_free(LM_MEM_COLL, b.arrays);
        return fail(k, MPI_ERR_NO_MEM, "out of memory");
    }
    int rc = build_sched(&b);
    lm_sched_round(&b.x->sched);
    lm_free(LM_MEM_COLL, b.arrays);
    if (rc != MPI_SUCCESS) {
        lm_coll_exec_free(b.x);
        return rc;
    }
    if (k->mode == LM_RUN_BLOCKING) {
        rc = lm_coll_exec_run(b.x);
        lm_coll_exec_free(b.x);
        return rc == MPI_SUCCESS ? rc : lm_err_comm(k->comm, rc, k->fname, "communication failed");
    }
    lm_request *r;
    rc = lm_coll_exec_start_request(b.x, k->mode == LM_RUN_PERSISTENT, &r);
    if (rc != MPI_SUCCESS) return lm_err_comm(k->comm, rc, k->fname, "could not start");
    *k->request = r->obj.handle;
    return MPI_SUCCESS;
}
