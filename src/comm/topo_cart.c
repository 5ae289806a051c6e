/* Cartesian topologies and MPI_Dims_create (MPI-4.1 sections 8.5.1-8.5.5,
 * 8.5.7). Grid coordinates are row-major in the rank, the last dimension
 * fastest; with reorder, the ranks of a job across hosts are permuted so
 * that more grid neighbours share a host (topo_map.c). */
#include "comm/topo_create.h"
#include "comm/topo_map.h"
#include "util/lm_mem.h"
#include "util/lm_error.h"
#include "api/impl_gen.h"
#include <limits.h>

#define DIMS(t) ((t)->data)
#define PERIODS(t) ((t)->data + (t)->a)

static int wrap(int x, int n) { return ((x % n) + n) % n; }

/* Number of grid points of valid dims, or -1 (with *rc set) if invalid. */
static long long grid_size(MPI_Comm comm, int ndims, const int dims[], const char *fname, int *rc)
{
    long long n = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0) {
            *rc = lm_err_comm(comm, MPI_ERR_DIMS, fname, "dims[%d] = %d is not positive", d, dims[d]);
            return -1;
        }
        n *= dims[d];
        if (n > INT_MAX) {
            *rc = lm_err_comm(comm, MPI_ERR_DIMS, fname, "the grid has more than INT_MAX points");
            return -1;
        }
    }
    return n;
}

/* The grid's neighbour lists (both directions of every edge) as
 * lm_topo_map_key takes them, and this process's key from it: its own rank
 * where there is no memory for them (any keys make a valid communicator;
 * only the placement is then worse). */
static int grid_key(lm_comm *p, int ndims, const int dims[], const int periods[], int n)
{
    int key = p->rank;
    if (!lm_topo_map_wanted(p, n)) return key;
    int *xadj = lm_malloc(LM_MEM_COMM, ((size_t)n + 1 + 2 * (size_t)ndims * (size_t)n) * sizeof(int));
    if (!xadj) return key;
    int *adj = xadj + n + 1, e = 0;
    for (int v = 0; v < n; v++) {
        xadj[v] = e;
        for (int d = 0, stride = 1, rest = v; d < ndims; d++) {
            int k = ndims - 1 - d; /* the last dimension is the fastest */
            int c = rest % dims[k];
            rest /= dims[k];
            for (int step = -1; step <= 1; step += 2) {
                int to = c + step;
                if ((to < 0 || to >= dims[k]) && !periods[k]) continue;
                adj[e++] = v + (wrap(to, dims[k]) - c) * stride;
            }
            stride *= dims[k];
        }
    }
    xadj[n] = e;
    if (lm_topo_map_key(p, n, xadj, adj, &key) != MPI_SUCCESS) key = p->rank;
    lm_free(LM_MEM_COMM, xadj);
    return key;
}

int impl_MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                         MPI_Comm *comm_cart)
{
    const char *fname = "MPI_Cart_create";
    lm_comm *p = lm_comm_get(comm_old);
    if (p->is_inter) return lm_err_comm(comm_old, MPI_ERR_COMM, fname, "topologies need an intracommunicator");
    int rc, local_err = MPI_SUCCESS;
    long long n = grid_size(comm_old, ndims, dims, fname, &rc);
    if (n < 0) local_err = rc;
    else if (n > p->size)
        local_err = lm_err_comm(comm_old, MPI_ERR_ARG, fname, "the grid has %lld points, the communicator %d processes",
                                n, p->size);
    uint64_t h = local_err ? 0 : lm_topo_hash(lm_topo_hash(0, dims, ndims, 0), periods, ndims, 1);
    rc = lm_topo_same_everywhere(p, comm_old, h, local_err, fname);
    if (rc) return rc;
    lm_topo *t = lm_topo_new(MPI_CART, ndims, 0, 2 * ndims);
    if (t)
        for (int d = 0; d < ndims; d++) {
            DIMS(t)[d] = dims[d];
            PERIODS(t)[d] = periods[d] != 0;
        }
    int key = reorder ? grid_key(p, ndims, dims, periods, (int)n) : p->rank;
    return lm_topo_attach(comm_old, p->rank < n ? 0 : MPI_UNDEFINED, key, t, comm_cart, fname);
}

int impl_MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    int rc;
    lm_topo *t = lm_topo_of(comm, MPI_CART, "MPI_Cartdim_get", NULL, &rc);
    if (!t) return rc;
    *ndims = t->a;
    return MPI_SUCCESS;
}

int impl_MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    const char *fname = "MPI_Cart_get";
    int rc;
    lm_comm *c;
    lm_topo *t = lm_topo_of(comm, MPI_CART, fname, &c, &rc);
    if (!t) return rc;
    if (maxdims < t->a) return lm_err_comm(comm, MPI_ERR_ARG, fname, "maxdims %d < ndims %d", maxdims, t->a);
    if (t->a == 0) return MPI_SUCCESS;
    for (int d = 0; d < t->a; d++) {
        dims[d] = DIMS(t)[d];
        periods[d] = PERIODS(t)[d];
    }
    lm_cart_coords(t, c->rank, coords);
    return MPI_SUCCESS;
}

int impl_MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    const char *fname = "MPI_Cart_rank";
    int rc;
    lm_topo *t = lm_topo_of(comm, MPI_CART, fname, NULL, &rc);
    if (!t) return rc;
    rc = lm_topo_check_array(comm, coords, t->a, "coords", fname);
    if (rc) return rc;
    int r = 0;
    for (int d = 0; d < t->a; d++) {
        int x = coords[d], n = DIMS(t)[d];
        if (PERIODS(t)[d]) x = wrap(x, n);
        else if (x < 0 || x >= n)
            return lm_err_comm(comm, MPI_ERR_ARG, fname, "coords[%d] = %d is outside the non-periodic dimension of %d",
                               d, coords[d], n);
        r = r * n + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

int impl_MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    const char *fname = "MPI_Cart_coords";
    int rc;
    lm_comm *c;
    lm_topo *t = lm_topo_of(comm, MPI_CART, fname, &c, &rc);
    if (!t) return rc;
    if (rank < 0 || rank >= c->size) return lm_err_comm(comm, MPI_ERR_RANK, fname, "invalid rank %d", rank);
    if (maxdims < t->a) return lm_err_comm(comm, MPI_ERR_ARG, fname, "maxdims %d < ndims %d", maxdims, t->a);
    if (t->a) lm_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}

int impl_MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    const char *fname = "MPI_Cart_shift";
    int rc;
    lm_comm *c;
    lm_topo *t = lm_topo_of(comm, MPI_CART, fname, &c, &rc);
    if (!t) return rc;
    if (direction < 0 || direction >= t->a)
        return lm_err_comm(comm, MPI_ERR_ARG, fname, "direction %d is not a dimension (ndims %d)", direction, t->a);
    lm_cart_shift(t, c->rank, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}

int impl_MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    const char *fname = "MPI_Cart_sub";
    int rc;
    lm_comm *c;
    lm_topo *t = lm_topo_of(comm, MPI_CART, fname, &c, &rc);
    if (!t) return rc;
    int local_err = lm_topo_check_array(comm, remain_dims, t->a, "remain_dims", fname);
    rc = lm_topo_same_everywhere(c, comm, local_err ? 0 : lm_topo_hash(0, remain_dims, t->a, 1), local_err, fname);
    if (rc) return rc;
    int coords[t->a > 0 ? t->a : 1];
    if (t->a) lm_cart_coords(t, c->rank, coords);
    /* the color numbers the dropped coordinates, the key the kept ones:
     * row-major order over the kept dimensions is then the new rank order */
    int color = 0, key = 0, nd = 0;
    for (int d = 0; d < t->a; d++) {
        if (remain_dims[d]) {
            key = key * DIMS(t)[d] + coords[d];
            nd++;
        } else {
            color = color * DIMS(t)[d] + coords[d];
        }
    }
    lm_topo *s = lm_topo_new(MPI_CART, nd, 0, 2 * nd);
    if (s) {
        int *dims = DIMS(s), *periods = dims + nd;
        for (int d = 0, k = 0; d < t->a; d++)
            if (remain_dims[d]) {
                dims[k] = DIMS(t)[d];
                periods[k++] = PERIODS(t)[d];
            }
    }
    return lm_topo_attach(comm, color, key, s, newcomm, fname);
}

int impl_MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    const char *fname = "MPI_Cart_map";
    (void)periods;
    lm_comm *c = lm_comm_get(comm);
    if (c->is_inter) return lm_err_comm(comm, MPI_ERR_COMM, fname, "topologies need an intracommunicator");
    int rc;
    long long n = grid_size(comm, ndims, dims, fname, &rc);
    if (n < 0) return rc;
    if (n > c->size)
        return lm_err_comm(comm, MPI_ERR_ARG, fname, "the grid has %lld points, the communicator %d processes", n,
                           c->size);
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* The lexicographically smallest non-increasing factorization of m into k
 * factors each at most cap: the first dimension as small as it can be, then
 * the second, ..., which is the most balanced split. */
static int factor(int m, int k, int cap, int *out)
{
    if (k == 0) return m == 1;
    if (k == 1) {
        if (m > cap) return 0;
        out[0] = m;
        return 1;
    }
    /* divisors of m in increasing order: i up to sqrt(m), then m / i back down */
    int root = 1;
    while ((long long)(root + 1) * (root + 1) <= m) root++;
    for (int pass = 0; pass < 2; pass++)
        for (int i = pass ? root : 1; pass ? i >= 1 : i <= root; i += pass ? -1 : 1) {
            if (m % i) continue;
            int f = pass ? m / i : i;
            if (pass && f == i) continue; /* the square root, already tried */
            if (f > cap) return 0;
            /* k factors each <= f give at most f^k */
            long long pw = 1;
            for (int j = 0; j < k && pw < m; j++) pw *= f;
            if (pw < m) continue;
            if (factor(m / f, k - 1, f, out + 1)) {
                out[0] = f;
                return 1;
            }
        }
    return 0;
}

int impl_MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    const char *fname = "MPI_Dims_create";
    if (nnodes < 0) return lm_err_noobj(MPI_ERR_ARG, fname, "nnodes %d is negative", nnodes);
    if (ndims < 0) return lm_err_noobj(MPI_ERR_DIMS, fname, "ndims %d is negative", ndims);
    long long fixed = 1;
    int free_dims = 0;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 0) return lm_err_noobj(MPI_ERR_DIMS, fname, "dims[%d] = %d is negative", d, dims[d]);
        if (dims[d] == 0) free_dims++;
        else if ((fixed *= dims[d]) > INT_MAX) fixed = (long long)INT_MAX + 1;
    }
    if (nnodes == 0) {
        /* only an empty grid has no points; every free dimension is 0 then
         * (the call is erroneous if some dimension is fixed) */
        if (free_dims < ndims) return lm_err_noobj(MPI_ERR_DIMS, fname, "fixed dims cannot make a grid of 0 nodes");
        return MPI_SUCCESS;
    }
    if (nnodes % fixed)
        return lm_err_noobj(MPI_ERR_DIMS, fname, "nnodes %d is not a multiple of the fixed dims' product %lld", nnodes,
                            fixed);
    int m = (int)(nnodes / fixed);
    if (free_dims == 0) {
        if (m != 1)
            return lm_err_noobj(MPI_ERR_DIMS, fname, "the fixed dims' product %lld is not nnodes %d", fixed, nnodes);
        return MPI_SUCCESS;
    }
    int f[free_dims];
    if (!factor(m, free_dims, m, f)) return lm_err_noobj(MPI_ERR_DIMS, fname, "cannot factor %d", m); /* never */
    /* f is non-increasing, as the standard wants the dims set here to be */
    for (int d = 0, k = 0; d < ndims; d++)
        if (dims[d] == 0) dims[d] = f[k++];
    return MPI_SUCCESS;
}
