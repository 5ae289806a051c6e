/* Topology records: allocation, copy, lookup on a communicator, the new
 * communicator a constructor returns, MPI_Topo_test and the neighbour lists
 * of the neighbourhood collectives. */
#include "comm/topo.h"
#include "core/lm_error.h"
#include "core/lm_mem.h"
#include "coll/coll_basic.h"
#include "binding/impl_gen.h"
#include <string.h>

lm_topo *lm_topo_new(int kind, int a, int b, int n)
{
    lm_topo *t = lm_malloc(LM_MEM_COMM, sizeof *t + (size_t)n * sizeof(int));
    if (!t) return NULL;
    t->kind = kind;
    t->a = a;
    t->b = b;
    t->weighted = 0;
    t->n = n;
    return t;
}

lm_topo *lm_topo_copy(const lm_topo *t)
{
    lm_topo *c = lm_malloc(LM_MEM_COMM, sizeof *t + (size_t)t->n * sizeof(int));
    if (c) memcpy(c, t, sizeof *t + (size_t)t->n * sizeof(int));
    return c;
}

void lm_topo_free(lm_topo *t)
{
    if (t) lm_free(LM_MEM_COMM, t);
}

lm_topo *lm_topo_of(MPI_Comm comm, int kind, const char *fname, lm_comm **cp, int *rc)
{
    lm_comm *c = lm_comm_get(comm);
    if (!c) {
        *rc = lm_err_comm(comm, MPI_ERR_COMM, fname, "invalid communicator");
        return NULL;
    }
    if (cp) *cp = c;
    lm_topo *t = c->topo;
    if (!t || (kind && t->kind != kind)) {
        const char *what = kind == MPI_CART ? "Cartesian" : kind == MPI_GRAPH ? "graph"
                         : kind == MPI_DIST_GRAPH ? "distributed graph" : "process";
        *rc = lm_err_comm(comm, MPI_ERR_TOPOLOGY, fname, "the communicator has no %s topology", what);
        return NULL;
    }
    *rc = MPI_SUCCESS;
    return t;
}

int lm_topo_attach(MPI_Comm parent, int color, int key, lm_topo *t, MPI_Comm *newcomm, const char *fname)
{
    /* Comm_split gives the context id agreement and the rank order (key is
     * the parent rank: reordering is allowed but never done). */
    int rc = impl_MPI_Comm_split(parent, color, key, newcomm);
    if (rc) {
        lm_topo_free(t);
        return rc;
    }
    if (*newcomm == MPI_COMM_NULL) {
        lm_topo_free(t);
        return MPI_SUCCESS;
    }
    lm_comm *c = lm_comm_get(*newcomm);
    if (!t) {
        impl_MPI_Comm_free(newcomm);
        return lm_err_comm(parent, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    c->topo = t;
    return MPI_SUCCESS;
}

int lm_topo_check_array(MPI_Comm comm, const void *p, long long len, const char *name, const char *fname)
{
    if (p || len <= 0) return MPI_SUCCESS;
    return lm_err_comm(comm, MPI_ERR_ARG, fname, "argument %s is a NULL pointer but %lld entries are needed", name,
                       len);
}

uint64_t lm_topo_hash(uint64_t h, const int *v, int n, int flags)
{
    /* FNV-1a over the values; the count goes in first so that prefixes differ */
    const uint64_t prime = 1099511628211ull;
    h = (h ^ (uint64_t)(uint32_t)n) * prime;
    for (int i = 0; i < n; i++) h = (h ^ (uint64_t)(uint32_t)(flags ? v[i] != 0 : v[i])) * prime;
    return h;
}

/* Elementwise minimum of (h, ~h) pairs: the smallest hash and the complement of the largest. */
static void min_fn(const void *in, void *inout, size_t count, void *arg)
{
    (void)arg;
    const uint64_t *a = in;
    uint64_t *b = inout;
    for (size_t i = 0; i < count; i++)
        if (a[i] < b[i]) b[i] = a[i];
}

int lm_topo_same_everywhere(lm_comm *p, MPI_Comm comm, uint64_t h, const char *fname)
{
    uint64_t m[2] = {h, ~h};
    int rc = lm_coll_allreduce(m, 2, sizeof m[0], min_fn, NULL, p);
    if (rc) return lm_err_comm(comm, rc, fname, "the argument check among the processes failed");
    if (m[0] != ~m[1])
        return lm_err_comm(comm, MPI_ERR_NOT_SAME, fname, "the processes passed different topology arguments");
    return MPI_SUCCESS;
}

int impl_MPI_Topo_test(MPI_Comm comm, int *status)
{
    lm_comm *c = lm_comm_get(comm);
    if (!c) return lm_err_comm(comm, MPI_ERR_COMM, "MPI_Topo_test", "invalid communicator");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int lm_topo_neighbors(const lm_comm *c, const lm_topo *t, lm_topo_nbrs *nb)
{
    int in, out;
    if (t->kind == MPI_CART) {
        in = out = 2 * t->a;
    } else if (t->kind == MPI_GRAPH) {
        int lo = c->rank ? t->data[c->rank - 1] : 0;
        in = out = t->data[c->rank] - lo;
    } else {
        in = t->a;
        out = t->b;
    }
    int *m = lm_malloc(LM_MEM_COLL, 2 * (size_t)(in + out) * sizeof(int) + 1);
    if (!m) return MPI_ERR_NO_MEM;
    nb->indeg = in;
    nb->outdeg = out;
    nb->in = m;
    nb->out = m + in;
    nb->in_tag = m + in + out;
    nb->out_tag = m + 2 * in + out;
    if (t->kind == MPI_CART) {
        /* block 2d holds the -1 neighbour of dimension d, 2d+1 the +1 one; what
         * goes to the -1 neighbour arrives in its +1 block, hence tag k^1 */
        for (int d = 0; d < t->a; d++) {
            lm_cart_shift(t, c->rank, d, 1, &nb->in[2 * d], &nb->in[2 * d + 1]);
            nb->out[2 * d] = nb->in[2 * d];
            nb->out[2 * d + 1] = nb->in[2 * d + 1];
        }
        for (int k = 0; k < in; k++) {
            nb->in_tag[k] = k;
            nb->out_tag[k] = k ^ 1;
        }
    } else if (t->kind == MPI_GRAPH) {
        /* the same edges both ways; repeated edges pair up in posting order */
        const int *e = t->data + t->a + (c->rank ? t->data[c->rank - 1] : 0);
        for (int k = 0; k < in; k++) {
            nb->in[k] = nb->out[k] = e[k];
            nb->in_tag[k] = nb->out_tag[k] = 0;
        }
    } else {
        for (int k = 0; k < in; k++) {
            nb->in[k] = t->data[k];
            nb->in_tag[k] = 0;
        }
        for (int k = 0; k < out; k++) {
            nb->out[k] = t->data[in + k];
            nb->out_tag[k] = 0;
        }
    }
    return MPI_SUCCESS;
}

void lm_topo_neighbors_free(lm_topo_nbrs *nb)
{
    lm_free(LM_MEM_COLL, nb->in);
    nb->in = NULL;
}
