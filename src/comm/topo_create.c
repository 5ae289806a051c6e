/* What every topology constructor shares: the new communicator it returns,
 * checks of arrays whose length the topology gives, and the agreement that
 * every process passed the same arguments. */
#include "comm/topo_create.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "coll/coll_basic.h"
#include "comm/context_id.h"
#include "api/impl_gen.h"
#include <string.h>

int lm_topo_attach(MPI_Comm parent, int color, int key, lm_topo *t, MPI_Comm *newcomm, const char *fname)
{
    /* Comm_split gives the context id agreement and the rank order (key:
     * the parent rank, or with reorder the vertex placed on this process,
     * topo_map.c). */
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

int lm_topo_same_everywhere(lm_comm *p, MPI_Comm comm, uint64_t h, int local_err, const char *fname)
{
    /* the third word is the complement of the largest error class */
    uint64_t m[3] = {h, ~h, ~(uint64_t)(uint32_t)local_err};
    int rc = lm_coll_allreduce(m, 3, sizeof m[0], min_fn, NULL, p);
    if (local_err) return local_err;
    if (rc) return lm_err_comm(comm, rc, fname, "the argument check among the processes failed");
    int bad = (int)(uint32_t)~m[2];
    if (bad) return lm_context_id_peer_invalid(comm, bad, fname);
    if (m[0] != ~m[1])
        return lm_err_comm(comm, MPI_ERR_NOT_SAME, fname, "the processes passed different topology arguments");
    return MPI_SUCCESS;
}

int lm_topo_abstain(lm_comm *p, int err)
{
    if (p && !p->is_inter) lm_topo_same_everywhere(p, p->obj.handle, 0, err, NULL);
    return err;
}
