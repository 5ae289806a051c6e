/* Window management: the four creation calls, MPI_Win_free, predefined
 * attributes, group, name, hints and error handlers. A window is created
 * over a private duplicate of its communicator's context, so the RMA
 * traffic to come has a context id of its own. */
#include "rma/win.h"
#include "osc/osc.h"
#include "rma/rma.h"
#include "obj/attr.h"
#include "comm/context_id.h"
#include "coll/coll_basic.h"
#include "obj/errhandler.h"
#include "obj/info.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>

lm_win *lm_win_lookup(MPI_Win win) { return lm_object_lookup_remember(win, LM_KIND_WIN); }

static struct lm_attr_list **attr_list_of(int handle)
{
    lm_win *w = lm_win_get(handle);
    return w ? &w->attrs : NULL;
}

int lm_rma_init(void)
{
    lm_attr_register_kind(LM_KIND_WIN, attr_list_of);
    return lm_rma_calls_init();
}

int lm_win_errhandler(MPI_Win win, MPI_Errhandler *e)
{
    lm_win *w = lm_win_get(win);
    if (!w) return 0;
    *e = w->errhandler;
    return 1;
}

/* Everything a window owns. The private communicator goes last: the
 * shared segment's teardown needs nothing from it, but RMA will. */
static void destroy(lm_win *w)
{
    lm_win_rma_free(w);
    lm_win_shared_free(w);
    lm_win_regions_free(w);
    if (w->info) impl_MPI_Info_free(&w->info);
    lm_attr_discard(&w->attrs);
    if (w->comm) {
        MPI_Comm h = w->comm->obj.handle;
        impl_MPI_Comm_free(&h);
    }
    lm_errhandler_release(w->errhandler);
    lm_object_free(w);
}

/* Collective over comm: a window with its private communicator, hints and
 * the attributes every flavor has; the caller sets base and size. */
static int win_new(MPI_Comm comm, int flavor, MPI_Aint disp_unit, MPI_Info info, const char *fname, lm_win **out)
{
    lm_comm *p = lm_comm_get(comm);
    if (!p) return lm_err_comm(comm, MPI_ERR_COMM, fname, "invalid communicator");
    if (p->is_inter) return lm_err_comm(comm, MPI_ERR_COMM, fname, "windows are created over intracommunicators only");
    if (disp_unit > INT_MAX)
        return lm_err_comm(comm, MPI_ERR_DISP, fname, "disp_unit = %lld does not fit the MPI_WIN_DISP_UNIT attribute",
                           (long long)disp_unit);
    uint16_t id;
    int rc = lm_context_id_allocate(p, &id);
    if (rc) return lm_err_comm(comm, rc, fname, "no free context id");
    lm_group_retain(p->group);
    lm_comm *c = lm_comm_new_intra(p->group, id, p);
    if (!c) {
        lm_group_release(p->group);
        lm_context_id_release(id);
        return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    snprintf(c->name, sizeof c->name, "window communicator");
    lm_win *w = lm_object_alloc(LM_KIND_WIN, sizeof *w);
    if (!w) {
        MPI_Comm h = c->obj.handle;
        impl_MPI_Comm_free(&h);
        return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    w->comm = c;
    w->flavor = w->flavor_attr = flavor;
    w->model_attr = MPI_WIN_UNIFIED; /* one copy of the memory: processes of one node */
    w->disp_unit = disp_unit;
    w->disp_unit_attr = (int)disp_unit;
    /* MPI-4.1 section 9.3: windows start with MPI_ERRORS_ARE_FATAL */
    w->errhandler = MPI_ERRORS_ARE_FATAL;
    if (info != MPI_INFO_NULL && impl_MPI_Info_dup(info, &w->info)) {
        w->info = 0;
        destroy(w);
        return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    *out = w;
    return MPI_SUCCESS;
}

/* The node segment and the one-sided state every flavor has; on failure
 * the window is gone (the same on every process). */
static int finish(lm_win *w, MPI_Aint size, MPI_Aint disp_unit, int parts_here, int noncontig)
{
    int rc = lm_win_segment_create(w, size, disp_unit, w->base, parts_here, noncontig);
    if (!rc) rc = lm_win_rma_setup(w);
    if (rc) destroy(w);
    return rc;
}

static const char *finish_failure(int rc)
{
    switch (rc) {
    case MPI_ERR_RMA_SHARED: return "the processes of the communicator cannot share memory";
    case MPI_ERR_NO_MEM: return "cannot create the window's node segment";
    default: return "communication failed";
    }
}

static int create(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win,
                  const char *fname)
{
    lm_win *w;
    int rc = win_new(comm, MPI_WIN_FLAVOR_CREATE, disp_unit, info, fname, &w);
    if (rc) return rc;
    w->base = base;
    w->size = size;
    rc = finish(w, size, disp_unit, 0, 0);
    if (rc) return lm_err_comm(comm, rc, fname, "%s", finish_failure(rc));
    *win = w->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return create(base, size, disp_unit, info, comm, win, "MPI_Win_create");
}

int impl_MPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return create(base, size, disp_unit, info, comm, win, "MPI_Win_create_c");
}

static int allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win,
                    const char *fname)
{
    lm_win *w;
    int rc = win_new(comm, MPI_WIN_FLAVOR_ALLOCATE, disp_unit, info, fname, &w);
    if (rc) return rc;
    /* every part on pages of its own in the node segment, where the
     * other processes of the node load and store it directly */
    rc = finish(w, size, disp_unit, 1, 1);
    if (rc) return lm_err_comm(comm, rc, fname, "%s", finish_failure(rc));
    w->size = size;
    *(void **)baseptr = w->base;
    *win = w->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return allocate(size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate");
}

int impl_MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                            MPI_Win *win)
{
    return allocate(size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate_c");
}

/* A boolean hint: "true" or "false"; anything else counts as not given. */
static int info_flag(MPI_Info info, const char *key)
{
    if (info == MPI_INFO_NULL) return 0;
    const char *v = lm_info_value(lm_info_get(info), key);
    return v && !strcmp(v, "true");
}

static int allocate_shared(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win,
                           const char *fname)
{
    lm_win *w;
    int rc = win_new(comm, MPI_WIN_FLAVOR_SHARED, disp_unit, info, fname, &w);
    if (rc) return rc;
    rc = finish(w, size, disp_unit, 1, info_flag(info, "alloc_shared_noncontig"));
    if (rc) return lm_err_comm(comm, rc, fname, "%s", finish_failure(rc));
    w->size = size;
    *(void **)baseptr = w->base;
    *win = w->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                 MPI_Win *win)
{
    return allocate_shared(size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate_shared");
}

int impl_MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                   MPI_Win *win)
{
    return allocate_shared(size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate_shared_c");
}

int impl_MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    lm_win *w;
    int rc = win_new(comm, MPI_WIN_FLAVOR_DYNAMIC, 1, info, "MPI_Win_create_dynamic", &w);
    if (rc) return rc;
    w->base = MPI_BOTTOM;
    w->size = 0;
    rc = finish(w, 0, 1, 0, 0);
    if (rc) return lm_err_comm(comm, rc, "MPI_Win_create_dynamic", "%s", finish_failure(rc));
    *win = w->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Win_free(MPI_Win *win)
{
    lm_win *w = lm_win_get(*win);
    if (!w) return lm_err_win(*win, MPI_ERR_WIN, "MPI_Win_free", "invalid window");
    if (w->lockall || w->nheld || w->start_group || w->post_group)
        return lm_err_win(*win, MPI_ERR_RMA_SYNC, "MPI_Win_free", "an access or exposure epoch is still open");
    int rc = lm_attr_delete_all(LM_KIND_WIN, *win, &w->attrs);
    if (rc) return lm_err_win(*win, rc, "MPI_Win_free", "an attribute delete callback failed");
    /* what this process still has in flight (a fence epoch left open)
     * completes first: its targets' memory goes with the window */
    if (w->ch) rc = lm_osc_flush(w->ch, -1);
    if (rc) return lm_err_win(*win, rc, "MPI_Win_free", "a one-sided operation failed");
    /* collective: no process releases its memory while another may still
     * reach it */
    rc = lm_coll_barrier(w->comm);
    if (rc) return lm_err_win(*win, rc, "MPI_Win_free", "communication failed");
    destroy(w);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

/* ---- attributes ---- */

int impl_MPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    lm_win *w = lm_win_get(win);
    if (!w) return lm_err_win(win, MPI_ERR_WIN, "MPI_Win_get_attr", "invalid window");
    void *v;
    switch (keyval) {
    case MPI_WIN_BASE: v = w->base; break; /* the base itself, not a pointer to it */
    case MPI_WIN_SIZE: v = &w->size; break;
    case MPI_WIN_DISP_UNIT: v = &w->disp_unit_attr; break;
    case MPI_WIN_CREATE_FLAVOR: v = &w->flavor_attr; break;
    case MPI_WIN_MODEL: v = &w->model_attr; break;
    default: return lm_attr_get(LM_KIND_WIN, win, keyval, attribute_val, flag, "MPI_Win_get_attr");
    }
    *(void **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

/* ---- group, name ---- */

int impl_MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    lm_win *w = lm_win_get(win);
    if (!w) return lm_err_win(win, MPI_ERR_WIN, "MPI_Win_get_group", "invalid window");
    lm_group *g = lm_group_share(w->comm->group);
    if (!g) return lm_err_win(win, MPI_ERR_NO_MEM, "MPI_Win_get_group", "out of memory");
    *group = g->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Win_set_name(MPI_Win win, const char *win_name)
{
    lm_win *w = lm_win_get(win);
    if (!w) return lm_err_win(win, MPI_ERR_WIN, "MPI_Win_set_name", "invalid window");
    snprintf(w->name, sizeof w->name, "%s", win_name);
    return MPI_SUCCESS;
}

int impl_MPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    /* the null handle has a name too (MPI-4.1 section 7.8) */
    if (win == MPI_WIN_NULL) {
        *resultlen = snprintf(win_name, MPI_MAX_OBJECT_NAME, "MPI_WIN_NULL");
        return MPI_SUCCESS;
    }
    lm_win *w = lm_win_get(win);
    if (!w) return lm_err_win(win, MPI_ERR_WIN, "MPI_Win_get_name", "invalid window");
    *resultlen = snprintf(win_name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    return MPI_SUCCESS;
}

/* ---- hints ---- */

/* The hints of MPI-4.1 section 12.2.1 and the values used when the program
 * gave none; MPI_Win_get_info reports every one of them. */
static const struct {
    const char *key, *dflt;
} known_hints[] = {
    {"no_locks", "false"},
    {"accumulate_ordering", "rar,raw,war,waw"},
    {"accumulate_ops", "same_op_no_op"},
    {"same_size", "false"},
    {"same_disp_unit", "false"},
};

int impl_MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    lm_win *w = lm_win_get(win);
    if (!w) return lm_err_win(win, MPI_ERR_WIN, "MPI_Win_set_info", "invalid window");
    if (info == MPI_INFO_NULL) return MPI_SUCCESS;
    if (!w->info && impl_MPI_Info_create(&w->info)) {
        w->info = 0;
        return lm_err_win(win, MPI_ERR_NO_MEM, "MPI_Win_set_info", "out of memory");
    }
    /* new values replace old ones; keys not given keep theirs */
    int nkeys;
    impl_MPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        impl_MPI_Info_get_nthkey(info, i, key);
        /* fixed when the memory was allocated */
        if (!strcmp(key, "alloc_shared_noncontig")) continue;
        const char *val = lm_info_value(lm_info_get(info), key);
        if (val && impl_MPI_Info_set(w->info, key, val))
            return lm_err_win(win, MPI_ERR_NO_MEM, "MPI_Win_set_info", "out of memory");
    }
    return MPI_SUCCESS;
}

int impl_MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    lm_win *w = lm_win_get(win);
    if (!w) return lm_err_win(win, MPI_ERR_WIN, "MPI_Win_get_info", "invalid window");
    MPI_Info out;
    if (w->info ? impl_MPI_Info_dup(w->info, &out) : impl_MPI_Info_create(&out))
        return lm_err_win(win, MPI_ERR_NO_MEM, "MPI_Win_get_info", "out of memory");
    const struct lm_info *li = lm_info_get(out);
    int rc = MPI_SUCCESS;
    for (size_t i = 0; i < sizeof known_hints / sizeof known_hints[0] && !rc; i++)
        if (!lm_info_value(li, known_hints[i].key))
            rc = impl_MPI_Info_set(out, known_hints[i].key, known_hints[i].dflt);
    if (!rc && w->flavor == MPI_WIN_FLAVOR_SHARED && !lm_info_value(li, "alloc_shared_noncontig"))
        rc = impl_MPI_Info_set(out, "alloc_shared_noncontig", "false");
    if (rc) {
        impl_MPI_Info_free(&out);
        return lm_err_win(win, MPI_ERR_NO_MEM, "MPI_Win_get_info", "out of memory");
    }
    *info_used = out;
    return MPI_SUCCESS;
}

/* ---- error handlers ---- */

int impl_MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    lm_win *w = lm_win_get(win);
    if (!w) return lm_err_win(win, MPI_ERR_WIN, "MPI_Win_set_errhandler", "invalid window");
    if (!lm_errhandler_fits(errhandler, LM_ERRH_WIN))
        return lm_err_win(win, MPI_ERR_ARG, "MPI_Win_set_errhandler",
                          "the error handler is neither predefined nor made by MPI_Win_create_errhandler");
    lm_errhandler_retain(errhandler);
    lm_errhandler_release(w->errhandler);
    w->errhandler = errhandler;
    return MPI_SUCCESS;
}

int impl_MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    lm_win *w = lm_win_get(win);
    if (!w) return lm_err_win(win, MPI_ERR_WIN, "MPI_Win_get_errhandler", "invalid window");
    lm_errhandler_retain(w->errhandler);
    *errhandler = w->errhandler;
    return MPI_SUCCESS;
}

int impl_MPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    lm_win *w = lm_win_get(win);
    if (!w) return lm_err_win(win, MPI_ERR_WIN, "MPI_Win_call_errhandler", "invalid window");
    lm_errhandler_invoke(w->errhandler, LM_ERRH_WIN, win, errorcode, "MPI_Win_call_errhandler");
    return MPI_SUCCESS;
}
