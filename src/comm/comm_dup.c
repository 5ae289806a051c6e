/* Communicator constructors from a parent: dup (also with info) and split. */
#include "obj/comm.h"
#include "obj/attr.h"
#include "obj/topo.h"
#include "obj/comm_info.h"
#include "comm/comm_dup.h"
#include "comm/context_id.h"
#include "comm/intercomm.h"
#include "coll/coll_basic.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <stdlib.h>

/* What a duplicate takes from its parent at the call (MPI-4.1 section
 * 7.4.2): the topology, the attributes (through their copy callbacks) and
 * the hints, or info's hints instead when given. On failure c is freed and
 * the error class returned, with what failed in *what. */
int lm_comm_dup_contents(lm_comm *p, lm_comm *c, MPI_Info info, int use_info, const char **what)
{
    int rc = MPI_SUCCESS;
    *what = "out of memory";
    if (p->topo && !(c->topo = lm_topo_copy(p->topo))) rc = MPI_ERR_NO_MEM;
    if (!rc && (rc = lm_attr_copy(LM_KIND_COMM, p->obj.handle, p->attrs, c->obj.handle, &c->attrs)))
        *what = "an attribute copy callback failed";
    if (!rc && lm_comm_info_set(c, use_info ? info : p->info ? p->info : MPI_INFO_NULL)) rc = MPI_ERR_NO_MEM;
    if (rc) {
        MPI_Comm h = c->obj.handle;
        impl_MPI_Comm_free(&h);
    }
    return rc;
}

static int dup(const char *fname, MPI_Comm comm, MPI_Info info, int use_info, MPI_Comm *newcomm)
{
    int rc;
    lm_comm *p = lm_comm_checked(comm, fname, &rc);
    if (!p) return rc;
    lm_comm *c;
    if (p->is_inter) {
        rc = lm_intercomm_dup(p, &c);
        if (rc) return lm_err_comm(comm, rc, fname, "intercommunicator duplication failed");
    } else {
        uint16_t id;
        int bad;
        rc = lm_context_id_allocate_checked(p, MPI_SUCCESS, &id, &bad);
        if (rc) return lm_err_comm(comm, rc, fname, "the agreement on a context id failed");
        if (bad) return lm_context_id_peer_invalid(comm, bad, fname);
        lm_group_retain(p->group);
        c = lm_comm_new_intra(p->group, id, p);
        if (!c) {
            lm_group_release(p->group);
            lm_context_id_release(id);
            return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
        }
    }
    const char *what;
    rc = lm_comm_dup_contents(p, c, info, use_info, &what);
    if (rc) {
        *newcomm = MPI_COMM_NULL;
        return lm_err_comm(comm, rc, fname, "%s", what);
    }
    *newcomm = c->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) { return dup("MPI_Comm_dup", comm, MPI_INFO_NULL, 0, newcomm); }

int impl_MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return dup("MPI_Comm_dup_with_info", comm, info, 1, newcomm);
}

typedef struct {
    int color, key, rank, world;
} split_entry;

static int by_key(const void *a, const void *b)
{
    const split_entry *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int impl_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    const char *fname = "MPI_Comm_split";
    int rc;
    lm_comm *p = lm_comm_checked(comm, fname, &rc);
    if (!p) return rc;
    int local_err = MPI_SUCCESS;
    if (color < 0 && color != MPI_UNDEFINED)
        local_err = lm_err_comm(comm, MPI_ERR_ARG, fname, "invalid color %d", color);
    if (p->is_inter) {
        if (local_err) return lm_intercomm_abstain(p, local_err);
        lm_comm *c;
        rc = lm_intercomm_split(p, color, key, &c);
        if (rc) return lm_err_comm(comm, rc, fname, "intercommunicator split failed");
        *newcomm = c ? c->obj.handle : MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    /* the table is temporary and proportional to the parent's size, as any
     * split must be; it is freed before returning */
    split_entry *all = lm_malloc(LM_MEM_COMM, (size_t)p->size * sizeof *all);
    if (!all && !local_err) local_err = lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    /* the agreement first: it also tells every process whether all of them
     * can go on */
    uint16_t id = 0;
    int bad;
    rc = lm_context_id_allocate_checked(p, local_err, &id, &bad);
    if (rc || bad) {
        lm_free(LM_MEM_COMM, all);
        if (rc) return lm_err_comm(comm, rc, fname, "the agreement on a context id failed");
        return local_err ? local_err : lm_context_id_peer_invalid(comm, bad, fname);
    }
    split_entry mine = {color, key, p->rank, lm_comm_world_rank(p, p->rank)};
    rc = lm_coll_allgather(&mine, sizeof mine, all, p);
    if (rc || color == MPI_UNDEFINED) {
        lm_context_id_release(id);
        lm_free(LM_MEM_COMM, all);
        if (rc) return lm_err_comm(comm, rc, fname, "communication failed");
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int n = 0;
    for (int i = 0; i < p->size; i++)
        if (all[i].color == color) all[n++] = all[i];
    qsort(all, (size_t)n, sizeof *all, by_key);
    int *w = (int *)all; /* reuse the table for the member list */
    for (int i = 0; i < n; i++) w[i] = all[i].world;
    lm_group *g = lm_group_new_list(w, n);
    lm_free(LM_MEM_COMM, all);
    lm_comm *c = g ? lm_comm_new_intra(g, id, p) : NULL;
    if (!c) {
        if (g) lm_group_release(g);
        lm_context_id_release(id);
        return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    *newcomm = c->obj.handle;
    return MPI_SUCCESS;
}
