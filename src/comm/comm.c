/* Communicator management: the two predefined communicators, dup, split,
 * free, compare, names, error handlers and the predefined attributes. */
#include "comm/comm.h"
#include "comm/attr.h"
#include "comm/topo.h"
#include "comm/context_id.h"
#include "comm/intercomm.h"
#include "comm/comm_info.h"
#include "coll/coll_basic.h"
#include "coll/coll_shm.h"
#include "core/errhandler.h"
#include "core/lm_error.h"
#include "core/lm_mem.h"
#include "core/lm_state.h"
#include "core/user_errors.h"
#include "boot/boot.h"
#include "pt2pt/bsend.h"
#include "binding/impl_gen.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LM_TAG_UB_VALUE 1073741823

static lm_comm world, self;
static lm_group *world_group, *self_group;

/* Predefined attribute values live here so that pointers to them stay valid. */
static int attr_tag_ub = LM_TAG_UB_VALUE, attr_host = MPI_PROC_NULL, attr_io, attr_wtime_global = 0,
           attr_universe, attr_appnum, attr_lastusedcode = MPI_ERR_LASTCODE;

lm_comm *lm_comm_get(MPI_Comm h)
{
    if (h == MPI_COMM_WORLD) return world.group ? &world : NULL;
    if (h == MPI_COMM_SELF) return self.group ? &self : NULL;
    lm_comm *c = lm_object_lookup(h, LM_KIND_COMM);
    return c && !c->freed ? c : NULL;
}

int lm_comm_world_rank(const lm_comm *c, int r)
{
    return lm_group_world_rank(c->is_inter ? c->remote_group : c->group, r);
}

int lm_comm_init_builtin(void)
{
    const lm_boot_info *b = lm_boot();
    world_group = lm_group_new_range(0, 1, b->reported_world_size);
    self_group = lm_group_new_range(b->world_rank, 1, 1);
    if (!world_group || !self_group) return MPI_ERR_NO_MEM;
    world = (lm_comm){.obj = {MPI_COMM_WORLD, 1}, .context_id = LM_CONTEXT_WORLD, .rank = b->world_rank,
                      .size = b->reported_world_size, .group = world_group,
                      .errhandler = MPI_ERRORS_ARE_FATAL};
    strcpy(world.name, "MPI_COMM_WORLD");
    self = (lm_comm){.obj = {MPI_COMM_SELF, 1}, .context_id = LM_CONTEXT_SELF, .rank = 0, .size = 1,
                     .group = self_group, .errhandler = MPI_ERRORS_ARE_FATAL};
    strcpy(self.name, "MPI_COMM_SELF");
    attr_universe = b->reported_world_size;
    attr_io = MPI_ANY_SOURCE; /* every rank can do I/O */
    const char *app = getenv("LEANMPI_APPNUM");
    attr_appnum = app ? atoi(app) : 0;
    return MPI_SUCCESS;
}

void lm_comm_finalize(void)
{
    lm_coll_comm_freed(&world);
    lm_coll_comm_freed(&self);
    lm_coll_shm_release(&world);
    lm_coll_shm_finalize();
    lm_bsend_pool_free(&world.bsend);
    lm_bsend_pool_free(&self.bsend);
    lm_comm_info_free(&world);
    lm_comm_info_free(&self);
    lm_group_release(world_group);
    lm_group_release(self_group);
    world.group = self.group = NULL;
    world_group = self_group = NULL;
    lm_free(LM_MEM_PT2PT, world.part_seq);
    lm_free(LM_MEM_PT2PT, self.part_seq);
    world.part_seq = self.part_seq = NULL;
}

static lm_comm *get(MPI_Comm h, const char *fname, int *rc)
{
    lm_comm *c = lm_comm_get(h);
    *rc = c ? MPI_SUCCESS : lm_err_comm(h, MPI_ERR_COMM, fname, "invalid communicator");
    return c;
}

int impl_MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    int rc;
    lm_comm *c = get(comm, "MPI_Comm_rank", &rc);
    if (!c) return rc;
    *rank = c->rank;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_size(MPI_Comm comm, int *size)
{
    int rc;
    lm_comm *c = get(comm, "MPI_Comm_size", &rc);
    if (!c) return rc;
    *size = c->size;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    int rc;
    lm_comm *c = get(comm, "MPI_Comm_test_inter", &rc);
    if (!c) return rc;
    *flag = c->is_inter;
    return MPI_SUCCESS;
}

/* A new intracommunicator over group g (retained), on context id. */
static lm_comm *make_comm(lm_group *g, uint16_t id, lm_comm *parent)
{
    lm_comm *c = lm_object_alloc(LM_KIND_COMM, sizeof *c);
    if (!c) return NULL;
    c->context_id = id;
    c->group = g;
    c->size = g->size;
    c->rank = g->my_rank;
    c->errhandler = parent->errhandler;
    lm_errhandler_retain(c->errhandler);
    return c;
}

lm_comm *lm_comm_new_intra(lm_group *g, uint16_t id, lm_comm *parent)
{
    return make_comm(g, id, parent);
}

int impl_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc;
    lm_comm *p = get(comm, "MPI_Comm_dup", &rc);
    if (!p) return rc;
    lm_comm *c;
    if (p->is_inter) {
        rc = lm_intercomm_dup(p, &c);
        if (rc) return lm_err_comm(comm, rc, "MPI_Comm_dup", "intercommunicator duplication failed");
    } else {
        uint16_t id;
        rc = lm_context_id_allocate(p, &id);
        if (rc) return lm_err_comm(comm, rc, "MPI_Comm_dup", "no free context id");
        lm_group_retain(p->group);
        c = make_comm(p->group, id, p);
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

typedef struct { int color, key, rank, world; } split_entry;

static int by_key(const void *a, const void *b)
{
    const split_entry *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int impl_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    int rc;
    lm_comm *p = get(comm, "MPI_Comm_split", &rc);
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
    lm_comm *c = g ? make_comm(g, id, p) : NULL;
    if (!c) return lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_split", "out of memory");
    *newcomm = c->obj.handle;
    return MPI_SUCCESS;
}

/* Everything a communicator owns; its context id becomes free for reuse
 * only here, after the last message that could match it. */
static void destroy(lm_comm *c)
{
    lm_coll_shm_release(c);
    lm_context_id_release(c->context_id);
    lm_group_release(c->group);
    if (c->remote_group) lm_group_release(c->remote_group);
    if (c->local_comm) lm_intercomm_release(c);
    lm_topo_free(c->topo);
    lm_comm_info_free(c);
    lm_free(LM_MEM_PT2PT, c->part_seq);
    lm_errhandler_release(c->errhandler);
    lm_object_free(c);
}

void lm_comm_hold(lm_comm *c) { c->pending++; }

void lm_comm_drop(lm_comm *c)
{
    if (--c->pending == 0 && c->freed) destroy(c);
}

int impl_MPI_Comm_free(MPI_Comm *comm)
{
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return lm_err_comm(*comm, MPI_ERR_COMM, "MPI_Comm_free", "cannot free a predefined communicator");
    int rc;
    lm_comm *c = get(*comm, "MPI_Comm_free", &rc);
    if (!c) return rc;
    rc = lm_attr_delete_all(LM_KIND_COMM, *comm, &c->attrs);
    if (rc) return lm_err_comm(*comm, rc, "MPI_Comm_free", "an attribute delete callback failed");
    /* its buffered messages leave before the communicator does */
    lm_bsend_pool_free(&c->bsend);
    lm_coll_comm_freed(c);
    *comm = MPI_COMM_NULL;
    if (c->pending) c->freed = 1; /* the last operation in flight destroys it */
    else destroy(c);
    return MPI_SUCCESS;
}

int impl_MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    int rc;
    lm_comm *a = get(comm1, "MPI_Comm_compare", &rc);
    if (!a) return rc;
    lm_comm *b = get(comm2, "MPI_Comm_compare", &rc);
    if (!b) return rc;
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->is_inter != b->is_inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    rc = impl_MPI_Group_compare(a->group->obj.handle, b->group->obj.handle, result);
    if (!rc && a->is_inter) {
        /* an intercommunicator compares as the weaker of its two groups */
        int remote;
        rc = impl_MPI_Group_compare(a->remote_group->obj.handle, b->remote_group->obj.handle, &remote);
        if (remote > *result) *result = remote;
    }
    if (*result == MPI_IDENT) *result = MPI_CONGRUENT;
    return rc;
}

int impl_MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    int rc;
    lm_comm *c = get(comm, "MPI_Comm_group", &rc);
    if (!c) return rc;
    lm_group *g = lm_group_share(c->group);
    if (!g) return lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_group", "out of memory");
    *group = g->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    int rc;
    lm_comm *c = get(comm, "MPI_Comm_set_name", &rc);
    if (!c) return rc;
    snprintf(c->name, sizeof c->name, "%s", comm_name);
    return MPI_SUCCESS;
}

int impl_MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    /* a null handle has a name too (MPI-4.1 section 7.8) */
    if (comm == MPI_COMM_NULL) {
        *resultlen = snprintf(comm_name, MPI_MAX_OBJECT_NAME, "MPI_COMM_NULL");
        return MPI_SUCCESS;
    }
    int rc;
    lm_comm *c = get(comm, "MPI_Comm_get_name", &rc);
    if (!c) return rc;
    *resultlen = snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    return MPI_SUCCESS;
}

int impl_MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    int rc;
    lm_comm *c = get(comm, "MPI_Comm_set_errhandler", &rc);
    if (!c) return rc;
    if (!lm_errhandler_fits(errhandler, LM_ERRH_COMM))
        return lm_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                           "the error handler is neither predefined nor made by MPI_Comm_create_errhandler");
    lm_errhandler_retain(errhandler);
    lm_errhandler_release(c->errhandler);
    c->errhandler = errhandler;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    int rc;
    lm_comm *c = get(comm, "MPI_Comm_get_errhandler", &rc);
    if (!c) return rc;
    lm_errhandler_retain(c->errhandler);
    *errhandler = c->errhandler;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    int rc;
    lm_comm *c = get(comm, "MPI_Comm_call_errhandler", &rc);
    if (!c) return rc;
    lm_errhandler_invoke(c->errhandler, LM_ERRH_COMM, comm, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}

int impl_MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    int rc;
    lm_comm *c = get(comm, "MPI_Comm_get_attr", &rc);
    if (!c) return rc;
    int *v = NULL;
    if (keyval == MPI_TAG_UB) v = &attr_tag_ub;
    else if (keyval == MPI_HOST) v = &attr_host;
    else if (keyval == MPI_IO) v = &attr_io;
    else if (keyval == MPI_WTIME_IS_GLOBAL) v = &attr_wtime_global;
    else if (keyval == MPI_UNIVERSE_SIZE) v = &attr_universe;
    else if (keyval == MPI_APPNUM) v = &attr_appnum;
    else if (keyval == MPI_LASTUSEDCODE) {
        attr_lastusedcode = lm_user_error_last_used();
        v = &attr_lastusedcode;
    }
    else return lm_attr_get(LM_KIND_COMM, comm, keyval, attribute_val, flag, "MPI_Comm_get_attr");
    *flag = 1;
    *(int **)attribute_val = v;
    return MPI_SUCCESS;
}

int lm_comm_has_simulated(const lm_comm *c)
{
    if (!lm_world_simulated) return 0;
    int n = lm_world_size();
    return lm_group_reaches(c->group, n) || (c->remote_group && lm_group_reaches(c->remote_group, n));
}
