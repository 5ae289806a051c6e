/* Topology records: allocation, copy, lookup on a communicator,
 * MPI_Topo_test and the neighbour lists of the neighbourhood collectives.
 * The constructors' helpers are in src/comm/topo_create.c. */
#include "obj/topo.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
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
        const char *what = kind == MPI_CART         ? "Cartesian"
                           : kind == MPI_GRAPH      ? "graph"
                           : kind == MPI_DIST_GRAPH ? "distributed graph"
                                                    : "process";
        *rc = lm_err_comm(comm, MPI_ERR_TOPOLOGY, fname, "the communicator has no %s topology", what);
        return NULL;
    }
    *rc = MPI_SUCCESS;
    return t;
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

/* Cartesian coordinates, ranks and shifts, row-major. */
#define DIMS(t) ((t)->data)
#define PERIODS(t) ((t)->data + (t)->a)

static int wrap(int x, int n) { return ((x % n) + n) % n; }

void lm_cart_coords(const lm_topo *t, int rank, int *coords)
{
    for (int d = t->a - 1; d >= 0; d--) {
        coords[d] = rank % DIMS(t)[d];
        rank /= DIMS(t)[d];
    }
}

/* coords already in range */
int lm_cart_rank(const lm_topo *t, const int *coords)
{
    int r = 0;
    for (int d = 0; d < t->a; d++) r = r * DIMS(t)[d] + coords[d];
    return r;
}

void lm_cart_shift(const lm_topo *t, int rank, int dir, int disp, int *src, int *dst)
{
    int coords[t->a > 0 ? t->a : 1];
    lm_cart_coords(t, rank, coords);
    int n = DIMS(t)[dir], me = coords[dir];
    long long up = (long long)me + disp, down = (long long)me - disp;
    if (PERIODS(t)[dir]) {
        coords[dir] = wrap((int)(up % n), n);
        *dst = lm_cart_rank(t, coords);
        coords[dir] = wrap((int)(down % n), n);
        *src = lm_cart_rank(t, coords);
        return;
    }
    coords[dir] = (int)up;
    *dst = up >= 0 && up < n ? lm_cart_rank(t, coords) : MPI_PROC_NULL;
    coords[dir] = (int)down;
    *src = down >= 0 && down < n ? lm_cart_rank(t, coords) : MPI_PROC_NULL;
}
