#include "coll/coll_basic.h"
#include "pt2pt/pt2pt.h"
#include "core/lm_mem.h"
#include <string.h>

#define TAG_BARRIER 1
#define TAG_BCAST 2
#define TAG_REDUCE 3
#define TAG_GATHER 4
#define TAG_SCATTER 5
#define TAG_ALLTOALL 6

static int ctx(lm_comm *c) { return c->context_id + 1; }

static int sendrecv(const void *sb, size_t sl, int dst, void *rb, size_t rl, int src, int tag, lm_comm *c)
{
    lm_request *s, *r;
    int rc = lm_irecv_bytes(rb, rl, src, tag, c, ctx(c), &r);
    if (rc) return rc;
    rc = lm_isend_bytes(sb, sl, dst, tag, c, ctx(c), &s);
    if (rc) return rc;
    int e1 = lm_wait_release(s, MPI_STATUS_IGNORE);
    int e2 = lm_wait_release(r, MPI_STATUS_IGNORE);
    return e1 ? e1 : e2;
}

static int send(const void *b, size_t l, int dst, int tag, lm_comm *c)
{
    lm_request *s;
    int rc = lm_isend_bytes(b, l, dst, tag, c, ctx(c), &s);
    return rc ? rc : lm_wait_release(s, MPI_STATUS_IGNORE);
}

static int recv(void *b, size_t l, int src, int tag, lm_comm *c)
{
    lm_request *r;
    int rc = lm_irecv_bytes(b, l, src, tag, c, ctx(c), &r);
    return rc ? rc : lm_wait_release(r, MPI_STATUS_IGNORE);
}

int lm_coll_barrier(lm_comm *c)
{
    char x = 0, y;
    for (int d = 1; d < c->size; d <<= 1) {
        int rc = sendrecv(&x, 1, (c->rank + d) % c->size, &y, 1, (c->rank - d + c->size) % c->size, TAG_BARRIER, c);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}

int lm_coll_bcast(void *buf, size_t len, int root, lm_comm *c)
{
    int n = c->size, me = (c->rank - root + n) % n;
    int mask = 1;
    while (mask < n) {
        if (me & mask) {
            int rc = recv(buf, len, (me - mask + root) % n, TAG_BCAST, c);
            if (rc) return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (me + mask < n) {
            int rc = send(buf, len, (me + mask + root) % n, TAG_BCAST, c);
            if (rc) return rc;
        }
    }
    return MPI_SUCCESS;
}

int lm_coll_reduce(const void *sbuf, void *rbuf, size_t count, size_t es, lm_reduce_fn fn, void *arg, int root,
                   lm_comm *c)
{
    size_t len = count * es;
    int n = c->size, me = (c->rank - root + n) % n;
    char *acc = lm_malloc(LM_MEM_COLL, len ? 2 * len : 1);
    if (!acc) return MPI_ERR_NO_MEM;
    char *tmp = acc + len;
    memcpy(acc, sbuf, len);
    int rc = MPI_SUCCESS;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (me & mask) {
            rc = send(acc, len, (me - mask + root) % n, TAG_REDUCE, c);
            break;
        }
        if (me + mask < n) {
            rc = recv(tmp, len, (me + mask + root) % n, TAG_REDUCE, c);
            if (rc) break;
            /* children hold higher ranks: combine as acc = acc op tmp keeps rank order */
            fn(acc, tmp, count, arg);
            memcpy(acc, tmp, len);
        }
    }
    if (!rc && c->rank == root) memcpy(rbuf, acc, len);
    lm_free(LM_MEM_COLL, acc);
    return rc;
}

int lm_coll_allreduce(void *buf, size_t count, size_t es, lm_reduce_fn fn, void *arg, lm_comm *c)
{
    int rc = lm_coll_reduce(buf, buf, count, es, fn, arg, 0, c);
    return rc ? rc : lm_coll_bcast(buf, count * es, 0, c);
}

int lm_coll_gather(const void *sbuf, size_t len, void *rbuf, int root, lm_comm *c)
{
    if (c->rank != root) return send(sbuf, len, root, TAG_GATHER, c);
    for (int i = 0; i < c->size; i++) {
        char *dst = (char *)rbuf + (size_t)i * len;
        if (i == root) {
            if (sbuf != dst) memmove(dst, sbuf, len);
            continue;
        }
        int rc = recv(dst, len, i, TAG_GATHER, c);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}

int lm_coll_scatter(const void *sbuf, size_t len, void *rbuf, int root, lm_comm *c)
{
    if (c->rank != root) return recv(rbuf, len, root, TAG_SCATTER, c);
    for (int i = 0; i < c->size; i++) {
        const char *src = (const char *)sbuf + (size_t)i * len;
        if (i == root) {
            if (rbuf != src) memmove(rbuf, src, len);
            continue;
        }
        int rc = send(src, len, i, TAG_SCATTER, c);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}

int lm_coll_allgather(const void *sbuf, size_t len, void *rbuf, lm_comm *c)
{
    /* ring: n-1 steps, each passing on the block received last */
    int n = c->size, me = c->rank;
    char *out = rbuf;
    if (sbuf != out + (size_t)me * len) memmove(out + (size_t)me * len, sbuf, len);
    for (int s = 0; s < n - 1; s++) {
        int sb = (me - s + n) % n, rb = (me - s - 1 + n) % n;
        int rc = sendrecv(out + (size_t)sb * len, len, (me + 1) % n, out + (size_t)rb * len, len, (me - 1 + n) % n,
                          TAG_GATHER, c);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}

int lm_coll_alltoall(const void *sbuf, size_t len, void *rbuf, lm_comm *c)
{
    int n = c->size, me = c->rank;
    memmove((char *)rbuf + (size_t)me * len, (const char *)sbuf + (size_t)me * len, len);
    for (int s = 1; s < n; s++) {
        int dst = (me + s) % n, src = (me - s + n) % n;
        int rc = sendrecv((const char *)sbuf + (size_t)dst * len, len, dst, (char *)rbuf + (size_t)src * len, len,
                          src, TAG_ALLTOALL, c);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}
