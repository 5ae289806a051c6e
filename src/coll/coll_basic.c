/* The internal collectives (contiguous bytes, no user objects) as
 * schedules: the same generators and selection table as the MPI ones. */
#include "coll/coll_basic.h"
#include "coll/coll_alg.h"
#include "coll/coll_shm.h"
#include "coll/sched_exec.h"

static int run(lm_comm *c, lm_coll_spec *a, const void *sbuf, void *rbuf, lm_reduce_fn fn, void *arg, size_t elem)
{
    a->size = c->size;
    a->rank = c->rank;
    a->commutative = 1;
    a->shm = lm_coll_shm_ready(c);
    lm_coll_exec xs, *x = &xs;
    lm_coll_exec_init(x, c);
    x->base[LM_SLOT_SEND] = (char *)sbuf;
    x->base[LM_SLOT_RECV] = rbuf;
    if (fn) {
        x->fn = fn;
        x->fn_arg = arg;
        x->elem = elem;
        a->elem = elem;
    }
    lm_coll_select(a)->gen(&x->sched, a);
    int rc = lm_coll_exec_run(x);
    lm_coll_exec_fini(x);
    return rc;
}

int lm_coll_barrier(lm_comm *c)
{
    lm_coll_spec a = {.kind = LM_COLL_BARRIER};
    return run(c, &a, NULL, NULL, NULL, NULL, 0);
}

int lm_coll_bcast(void *buf, size_t len, int root, lm_comm *c)
{
    lm_coll_spec a = {.kind = LM_COLL_BCAST, .root = root, .bytes = len};
    return run(c, &a, NULL, buf, NULL, NULL, 0);
}

int lm_coll_allreduce(void *buf, size_t count, size_t es, lm_reduce_fn fn, void *arg, lm_comm *c)
{
    lm_coll_spec a = {.kind = LM_COLL_ALLREDUCE, .bytes = count * es, .in_place = 1};
    return run(c, &a, NULL, buf, fn, arg, es);
}

static void max_int(const void *in, void *inout, size_t count, void *arg)
{
    (void)arg;
    const int *a = in;
    int *b = inout;
    for (size_t i = 0; i < count; i++)
        if (a[i] > b[i]) b[i] = a[i];
}

int lm_coll_allreduce_max_int(int *v, lm_comm *c) { return lm_coll_allreduce(v, 1, sizeof *v, max_int, NULL, c); }

int lm_coll_reduce(const void *sbuf, void *rbuf, size_t count, size_t es, lm_reduce_fn fn, void *arg, int root,
                   lm_comm *c)
{
    lm_coll_spec a = {
        .kind = LM_COLL_REDUCE, .root = root, .bytes = count * es, .in_place = c->rank == root && sbuf == rbuf};
    return run(c, &a, sbuf, rbuf, fn, arg, es);
}

int lm_coll_gather(const void *sbuf, size_t len, void *rbuf, int root, lm_comm *c)
{
    lm_coll_spec a = {.kind = LM_COLL_GATHER,
                      .root = root,
                      .bytes = len,
                      .in_place = c->rank == root && sbuf == (char *)rbuf + (size_t)root * len};
    return run(c, &a, sbuf, rbuf, NULL, NULL, 0);
}

int lm_coll_scatter(const void *sbuf, size_t len, void *rbuf, int root, lm_comm *c)
{
    lm_coll_spec a = {.kind = LM_COLL_SCATTER,
                      .root = root,
                      .bytes = len,
                      .in_place = c->rank == root && rbuf == (const char *)sbuf + (size_t)root * len};
    return run(c, &a, sbuf, rbuf, NULL, NULL, 0);
}

int lm_coll_allgather(const void *sbuf, size_t len, void *rbuf, lm_comm *c)
{
    lm_coll_spec a = {
        .kind = LM_COLL_ALLGATHER, .bytes = len, .in_place = sbuf == (char *)rbuf + (size_t)c->rank * len};
    return run(c, &a, sbuf, rbuf, NULL, NULL, 0);
}

int lm_coll_alltoall(const void *sbuf, size_t len, void *rbuf, lm_comm *c)
{
    lm_coll_spec a = {.kind = LM_COLL_ALLTOALL, .bytes = len, .in_place = sbuf == rbuf};
    return run(c, &a, sbuf, rbuf, NULL, NULL, 0);
}
