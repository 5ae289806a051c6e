/* Communicator objects: the two predefined communicators, lookup, lifetime
 * (holds, free, destroy and the hooks of the layers that hang state on a
 * communicator), compare, names, error handlers and the predefined
 * attributes. Constructors are in src/comm/. */
#include "obj/comm.h"
#include "obj/attr.h"
#include "obj/topo.h"
#include "obj/comm_info.h"
#include "obj/errhandler.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "util/lm_state.h"
#include "obj/user_errors.h"
#include "boot/boot.h"
#include "util/lm_handle.h"
#include "api/impl_gen.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lm_comm world, self;
static lm_group *world_group, *self_group;

/* Predefined attribute values live here so that pointers to them stay valid. */
static int attr_tag_ub = LM_TAG_UB, attr_host = MPI_PROC_NULL, attr_io, attr_wtime_global = 0, attr_universe,
           attr_appnum, attr_lastusedcode = MPI_ERR_LASTCODE;

lm_comm *lm_comm_get(MPI_Comm h)
{
    if (h == MPI_COMM_WORLD) return world.group ? &world : NULL;
    if (h == MPI_COMM_SELF) return self.group ? &self : NULL;
    lm_comm *c = lm_object_lookup(h, LM_KIND_COMM);
    return c && !c->freed ? c : NULL;
}

int lm_comm_init_builtin(void)
{
    const lm_boot_info *b = lm_boot();
    world_group = lm_group_new_range(0, 1, b->reported_world_size);
    self_group = lm_group_new_range(b->world_rank, 1, 1);
    if (!world_group || !self_group) return MPI_ERR_NO_MEM;
    world = (lm_comm){.obj = {MPI_COMM_WORLD, 1},
                      .context_id = LM_CONTEXT_WORLD,
                      .rank = b->world_rank,
                      .size = b->reported_world_size,
                      .group = world_group,
                      .errhandler = MPI_ERRORS_ARE_FATAL};
    strcpy(world.name, "MPI_COMM_WORLD");
    self = (lm_comm){.obj = {MPI_COMM_SELF, 1},
                     .context_id = LM_CONTEXT_SELF,
                     .rank = 0,
                     .size = 1,
                     .group = self_group,
                     .errhandler = MPI_ERRORS_ARE_FATAL};
    strcpy(self.name, "MPI_COMM_SELF");
    attr_universe = b->universe_size;
    attr_io = MPI_ANY_SOURCE; /* every rank can do I/O */
    const char *app = getenv("LEANMPI_APPNUM");
    attr_appnum = app ? atoi(app) : 0;
    return MPI_SUCCESS;
}

/* Hooks of the layers above, run on every communicator (MPI-4.1 section
 * 7.4.3): at MPI_Comm_free, while operations may still be in flight, and
 * at destruction, once the last of them has let go. */
#define LM_COMM_HOOKS_MAX 8
static lm_comm_hook free_hooks[LM_COMM_HOOKS_MAX], destroy_hooks[LM_COMM_HOOKS_MAX];
static int nfree_hooks, ndestroy_hooks;

static int add_hook(lm_comm_hook *list, int *n, lm_comm_hook fn)
{
    for (int i = 0; i < *n; i++)
        if (list[i] == fn) return MPI_SUCCESS;
    if (*n == LM_COMM_HOOKS_MAX) return MPI_ERR_INTERN;
    list[(*n)++] = fn;
    return MPI_SUCCESS;
}

int lm_comm_on_free(lm_comm_hook fn) { return add_hook(free_hooks, &nfree_hooks, fn); }
int lm_comm_on_destroy(lm_comm_hook fn) { return add_hook(destroy_hooks, &ndestroy_hooks, fn); }

static void run_hooks(const lm_comm_hook *list, int n, lm_comm *c)
{
    for (int i = n - 1; i >= 0; i--) list[i](c); /* the latest registered (highest layer) first */
}

void lm_comm_release_predefined(void)
{
    if (!world.group) return;
    run_hooks(free_hooks, nfree_hooks, &world);
    run_hooks(free_hooks, nfree_hooks, &self);
    run_hooks(destroy_hooks, ndestroy_hooks, &world);
    run_hooks(destroy_hooks, ndestroy_hooks, &self);
}

void lm_comm_finalize(void)
{
    lm_comm_info_free(&world);
    lm_comm_info_free(&self);
    lm_group_release(world_group);
    lm_group_release(self_group);
    world.group = self.group = NULL;
    world_group = self_group = NULL;
    nfree_hooks = ndestroy_hooks = 0;
}

lm_comm *lm_comm_checked(MPI_Comm h, const char *fname, int *rc)
{
    lm_comm *c = lm_comm_get(h);
    *rc = c ? MPI_SUCCESS : lm_err_comm(h, MPI_ERR_COMM, fname, "invalid communicator");
    return c;
}

int impl_MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    int rc;
    lm_comm *c = lm_comm_checked(comm, "MPI_Comm_rank", &rc);
    if (!c) return rc;
    *rank = c->rank;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_size(MPI_Comm comm, int *size)
{
    int rc;
    lm_comm *c = lm_comm_checked(comm, "MPI_Comm_size", &rc);
    if (!c) return rc;
    *size = c->size;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    int rc;
    lm_comm *c = lm_comm_checked(comm, "MPI_Comm_test_inter", &rc);
    if (!c) return rc;
    *flag = c->is_inter;
    return MPI_SUCCESS;
}

/* A new intracommunicator over group g (retained), on context id. */
lm_comm *lm_comm_new_intra(lm_group *g, uint16_t id, lm_comm *parent)
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

/* Everything a communicator owns; its context id becomes free for reuse
 * only here, after the last message that could match it. */
static void destroy(lm_comm *c)
{
    run_hooks(destroy_hooks, ndestroy_hooks, c);
    lm_group_release(c->group);
    if (c->remote_group) lm_group_release(c->remote_group);
    lm_topo_free(c->topo);
    lm_comm_info_free(c);
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
    lm_comm *c = lm_comm_checked(*comm, "MPI_Comm_free", &rc);
    if (!c) return rc;
    rc = lm_attr_delete_all(LM_KIND_COMM, *comm, &c->attrs);
    if (rc) return lm_err_comm(*comm, rc, "MPI_Comm_free", "an attribute delete callback failed");
    /* what the layers above keep for it goes now (its buffered messages
     * leave before the communicator does) */
    run_hooks(free_hooks, nfree_hooks, c);
    *comm = MPI_COMM_NULL;
    if (c->pending) c->freed = 1; /* the last operation in flight destroys it */
    else destroy(c);
    return MPI_SUCCESS;
}

int impl_MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    int rc;
    lm_comm *a = lm_comm_checked(comm1, "MPI_Comm_compare", &rc);
    if (!a) return rc;
    lm_comm *b = lm_comm_checked(comm2, "MPI_Comm_compare", &rc);
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
    lm_comm *c = lm_comm_checked(comm, "MPI_Comm_group", &rc);
    if (!c) return rc;
    lm_group *g = lm_group_share(c->group);
    if (!g) return lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_group", "out of memory");
    *group = g->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    int rc;
    lm_comm *c = lm_comm_checked(comm, "MPI_Comm_set_name", &rc);
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
    lm_comm *c = lm_comm_checked(comm, "MPI_Comm_get_name", &rc);
    if (!c) return rc;
    *resultlen = snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    return MPI_SUCCESS;
}

int impl_MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    int rc;
    lm_comm *c = lm_comm_checked(comm, "MPI_Comm_set_errhandler", &rc);
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
    lm_comm *c = lm_comm_checked(comm, "MPI_Comm_get_errhandler", &rc);
    if (!c) return rc;
    lm_errhandler_retain(c->errhandler);
    *errhandler = c->errhandler;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    int rc;
    lm_comm *c = lm_comm_checked(comm, "MPI_Comm_call_errhandler", &rc);
    if (!c) return rc;
    lm_errhandler_invoke(c->errhandler, LM_ERRH_COMM, comm, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}

int impl_MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    int rc;
    lm_comm *c = lm_comm_checked(comm, "MPI_Comm_get_attr", &rc);
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
    } else return lm_attr_get(LM_KIND_COMM, comm, keyval, attribute_val, flag, "MPI_Comm_get_attr");
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
