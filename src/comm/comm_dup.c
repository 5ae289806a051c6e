/* Communicator constructors from a parent: dup (also with info) and split. */
#include "obj/comm.h"
#include "obj/attr.h"
#include "obj/topo.h"
#include "obj/comm_info.h"
#include "comm/context_id.h"
#include "comm/intercomm.h"
#include "coll/coll_basic.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <stdlib.h>

int impl_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc;
    lm_comm *p = lm_comm_checked(comm, "MPI_Comm_dup", &rc);
    if (!p) return rc;
    lm_comm *c;
    if (p->is_inter) {
        rc = lm_intercomm_dup(p, &c);
        if (rc) return lm_err_comm(comm, rc, "MPI_Comm_dup", "intercommunicator duplication failed");
    } else {
        uint16_t id;
        rc = lm_context_id_allocate(p, &id);
        if (rc) return lm_err_comm(comm, rc, "MPI_Comm_dup", "the agreement on a context id failed");
        lm_group_retain(p->group);
        c = lm_comm_new_intra(p->group, id, p);
        if (!c) return lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_dup", "out of memory");
    }
    /* a duplicate keeps the topology (MPI-4.1 section 7.4.2) */
    if (p->topo && !(c->topo = lm_topo_copy(p->topo))) {
        MPI_Comm h = c->obj.handle;
        impl_MPI_Comm_free(&h);
        return lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_dup", "out of memory");
    }
    rc = lm_attr_copy(LM_KIND_COMM, comm, p->attrs, c->obj.handle, &c->attrs);
    if (rc) {
        MPI_Comm h = c->obj.handle;
        impl_MPI_Comm_free(&h);
        return lm_err_comm(comm, rc, "MPI_Comm_dup", "an attribute copy callback failed");
    }
    /* and the hints (MPI-4.1 section 7.4.2) */
    if (lm_comm_info_set(c, p->info ? p->info : MPI_INFO_NULL)) {
        MPI_Comm h = c->obj.handle;
        impl_MPI_Comm_free(&h);
        return lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_dup", "out of memory");
    }
    *newcomm = c->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    int rc = impl_MPI_Comm_dup(comm, newcomm);
    if (rc) return rc;
    /* the given hints replace the copied ones */
    lm_comm *c = lm_comm_get(*newcomm);
    lm_comm_info_free(c);
    if (lm_comm_info_set(c, info)) {
        impl_MPI_Comm_free(newcomm);
        return lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_dup_with_info", "out of memory");
    }
    return MPI_SUCCESS;
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
    int rc;
    lm_comm *p = lm_comm_checked(comm, "MPI_Comm_split", &rc);
    if (!p) return rc;
    if (color < 0 && color != MPI_UNDEFINED)
        return lm_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_split", "invalid color %d", color);
    if (p->is_inter) {
        lm_comm *c;
        rc = lm_intercomm_split(p, color, key, &c);
        if (rc) return lm_err_comm(comm, rc, "MPI_Comm_split", "intercommunicator split failed");
        *newcomm = c ? c->obj.handle : MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    /* the table is temporary and proportional to the parent's size, as any
     * split must be; it is freed before returning */
    split_entry *all = lm_malloc(LM_MEM_COMM, (size_t)p->size * sizeof *all);
    if (!all) return lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_split", "out of memory");
    split_entry mine = {color, key, p->rank, lm_comm_world_rank(p, p->rank)};
    rc = lm_coll_allgather(&mine, sizeof mine, all, p);
    uint16_t id = 0;
    if (!rc) rc = lm_context_id_allocate(p, &id);
    if (rc) {
        lm_free(LM_MEM_COMM, all);
        return lm_err_comm(comm, rc, "MPI_Comm_split", "communication failed");
    }
    if (color == MPI_UNDEFINED) {
        lm_context_id_release(id);
        lm_free(LM_MEM_COMM, all);
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
    if (!c) return lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_split", "out of memory");
    *newcomm = c->obj.handle;
    return MPI_SUCCESS;
}
