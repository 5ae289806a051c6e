/* Sessions: local handles to the shared runtime, their error handlers and
 * hints, the predefined process sets, and MPI_Comm_create_from_group, which
 * agrees on a context id among the group's members only, with no parent
 * communicator (the world model may never have been initialized). */
#include "runtime/session.h"
#include "runtime/runtime.h"
#include "obj/errhandler.h"
#include "obj/info.h"
#include "util/lm_error.h"
#include "util/lm_handle.h"
#include "util/lm_state.h"
#include "obj/comm.h"
#include "obj/comm_info.h"
#include "comm/context_id.h"
#include "api/impl_gen.h"
#include "pt2pt/bsend.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct lm_session {
    lm_object obj;
    MPI_Errhandler errhandler;
    MPI_Info info;               /* the hints in use, thread_level included */
    struct lm_bsend_pool *bsend; /* MPI_Session_attach_buffer (pt2pt/bsend.c) */
} lm_session;

static const char *const pset_names[] = {"mpi://WORLD", "mpi://SELF"};
#define NPSETS ((int)(sizeof pset_names / sizeof pset_names[0]))

/* The communicator over the world ranks on a reserved context, through which
 * MPI_Comm_create_from_group agrees; made on first use. */
static lm_comm *agreement;

static lm_session *get(MPI_Session s) { return lm_object_lookup(s, LM_KIND_SESSION); }

static lm_bsend_pool **bsend_slot_of(MPI_Session session)
{
    lm_session *s = get(session);
    return s ? &s->bsend : NULL;
}

int lm_session_errhandler(MPI_Session s, MPI_Errhandler *e)
{
    lm_session *x = get(s);
    if (!x) return 0;
    *e = x->errhandler;
    return 1;
}

int lm_sessions_init(void)
{
    lm_bsend_set_session_slots(bsend_slot_of);
    return MPI_SUCCESS;
}

void lm_sessions_finalize(void)
{
    if (!agreement) return;
    lm_group_release(agreement->group);
    lm_errhandler_release(agreement->errhandler);
    lm_object_free(agreement);
    agreement = NULL;
}

static const char *level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
    }
}

/* The level asked for by the "thread_level" hint; MPI_THREAD_SINGLE without it. */
static int requested_level(MPI_Info info, int *ok)
{
    *ok = 1;
    const char *v = info == MPI_INFO_NULL ? NULL : lm_info_value(lm_info_get(info), "thread_level");
    if (!v) return MPI_THREAD_SINGLE;
    static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE};
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(v, level_name(levels[i]))) return levels[i];
    *ok = 0;
    return MPI_THREAD_SINGLE;
}

int impl_MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    const char *fname = "MPI_Session_init";
    if (!lm_errhandler_fits(errhandler, LM_ERRH_SESSION))
        return lm_err_noobj(MPI_ERR_ARG, fname, "errhandler is not a session error handler");
    int ok, provided;
    int level = requested_level(info, &ok);
    if (!ok)
        return lm_err_handler(errhandler, LM_ERRH_SESSION, MPI_ERR_INFO_VALUE, fname,
                              "the thread_level hint names no thread support level");
    int rc = lm_runtime_acquire(fname, level, &provided);
    if (rc) return rc;
    lm_session *s = lm_object_alloc(LM_KIND_SESSION, sizeof *s);
    MPI_Info used = MPI_INFO_NULL;
    if (!s || (info == MPI_INFO_NULL ? impl_MPI_Info_create(&used) : impl_MPI_Info_dup(info, &used)) ||
        impl_MPI_Info_set(used, "thread_level", level_name(provided))) {
        if (used != MPI_INFO_NULL) impl_MPI_Info_free(&used);
        if (s) lm_object_free(s);
        lm_runtime_release();
        return lm_err_handler(errhandler, LM_ERRH_SESSION, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    s->info = used;
    s->errhandler = errhandler;
    lm_errhandler_retain(errhandler);
    *session = s->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Session_finalize(MPI_Session *session)
{
    lm_session *s = get(*session);
    if (!s) return lm_err_session(*session, MPI_ERR_SESSION, "MPI_Session_finalize", "invalid session");
    lm_bsend_pool_free(&s->bsend);
    impl_MPI_Info_free(&s->info);
    lm_errhandler_release(s->errhandler);
    lm_object_free(s);
    *session = MPI_SESSION_NULL;
    lm_runtime_release();
    return MPI_SUCCESS;
}

int impl_MPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    lm_session *s = get(session);
    if (!s) return lm_err_session(session, MPI_ERR_SESSION, "MPI_Session_get_info", "invalid session");
    return impl_MPI_Info_dup(s->info, info_used);
}

int impl_MPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    (void)session, (void)info;
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

int impl_MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name)
{
    (void)info;
    const char *fname = "MPI_Session_get_nth_pset";
    if (n < 0 || n >= NPSETS)
        return lm_err_session(session, MPI_ERR_ARG, fname, "n = %d is not below the number of process sets (%d)", n,
                              NPSETS);
    int len = (int)strlen(pset_names[n]);
    /* a length of 0 asks for the length the name needs, terminator included */
    if (*pset_len == 0) {
        *pset_len = len + 1;
        return MPI_SUCCESS;
    }
    if (*pset_len < 0) return lm_err_session(session, MPI_ERR_ARG, fname, "pset_len is negative");
    if (!pset_name) return lm_err_session(session, MPI_ERR_ARG, fname, "argument pset_name is a NULL pointer");
    int copy = len < *pset_len - 1 ? len : *pset_len - 1;
    memcpy(pset_name, pset_names[n], (size_t)copy);
    pset_name[copy] = '\0';
    *pset_len = len + 1;
    return MPI_SUCCESS;
}

/* The group behind a process set's name, or NULL if unknown. */
static lm_group *pset_group(const char *name)
{
    MPI_Comm c = !strcasecmp(name, "mpi://WORLD")  ? MPI_COMM_WORLD
                 : !strcasecmp(name, "mpi://SELF") ? MPI_COMM_SELF
                                                   : MPI_COMM_NULL;
    lm_comm *comm = c == MPI_COMM_NULL ? NULL : lm_comm_get(c);
    return comm ? comm->group : NULL;
}

int impl_MPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    const char *fname = "MPI_Session_get_pset_info";
    lm_group *g = pset_group(pset_name);
    if (!g) return lm_err_session(session, MPI_ERR_ARG, fname, "no process set is named \"%.64s\"", pset_name);
    char size[16];
    snprintf(size, sizeof size, "%d", g->size);
    MPI_Info in;
    int rc = impl_MPI_Info_create(&in);
    if (rc) return rc;
    rc = impl_MPI_Info_set(in, "mpi_size", size);
    if (rc) {
        impl_MPI_Info_free(&in);
        return rc;
    }
    *info = in;
    return MPI_SUCCESS;
}

int impl_MPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    const char *fname = "MPI_Group_from_session_pset";
    lm_group *g = pset_group(pset_name);
    if (!g) return lm_err_session(session, MPI_ERR_ARG, fname, "no process set is named \"%.64s\"", pset_name);
    g = lm_group_share(g);
    if (!g) return lm_err_session(session, MPI_ERR_NO_MEM, fname, "out of memory");
    *newgroup = g->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    lm_session *s = get(session);
    if (!s) return lm_err_session(session, MPI_ERR_SESSION, "MPI_Session_set_errhandler", "invalid session");
    if (!lm_errhandler_fits(errhandler, LM_ERRH_SESSION))
        return lm_err_session(session, MPI_ERR_ARG, "MPI_Session_set_errhandler",
                              "errhandler is not a session error handler");
    lm_errhandler_retain(errhandler);
    lm_errhandler_release(s->errhandler);
    s->errhandler = errhandler;
    return MPI_SUCCESS;
}

int impl_MPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    lm_session *s = get(session);
    if (!s) return lm_err_session(session, MPI_ERR_SESSION, "MPI_Session_get_errhandler", "invalid session");
    lm_errhandler_retain(s->errhandler);
    *errhandler = s->errhandler;
    return MPI_SUCCESS;
}

int impl_MPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    lm_session *s = get(session);
    if (!s) return lm_err_session(session, MPI_ERR_SESSION, "MPI_Session_call_errhandler", "invalid session");
    lm_errhandler_invoke(s->errhandler, LM_ERRH_SESSION, session, errorcode, "MPI_Session_call_errhandler");
    return MPI_SUCCESS;
}

static lm_comm *agreement_comm(void)
{
    if (agreement) return agreement;
    lm_comm *w = lm_comm_get(MPI_COMM_WORLD);
    if (!w) return NULL;
    lm_group_retain(w->group);
    agreement = lm_comm_new_intra(w->group, LM_CONTEXT_GROUP_AGREEMENT, w);
    if (!agreement) {
        lm_group_release(w->group);
        return NULL;
    }
    /* failures are reported by the call that agrees, on its own handler */
    lm_errhandler_release(agreement->errhandler);
    agreement->errhandler = MPI_ERRORS_RETURN;
    return agreement;
}

/* The tag that keeps concurrent creations with different string tags apart
 * (FNV-1a, folded to the tag range). */
static int stringtag_tag(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return (int)((h ^ (h >> 30)) & 0x3fffffffu);
}

int impl_MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                    MPI_Comm *newcomm)
{
    const char *fname = "MPI_Comm_create_from_group";
    if (!lm_errhandler_fits(errhandler, LM_ERRH_COMM))
        return lm_err_noobj(MPI_ERR_ARG, fname, "errhandler is not a communicator error handler");
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return lm_err_handler(errhandler, LM_ERRH_COMM, MPI_ERR_ARG, fname,
                              "stringtag is longer than MPI_MAX_STRINGTAG_LEN - 1");
    lm_group *g = lm_group_get(group);
    if (!g) return lm_err_handler(errhandler, LM_ERRH_COMM, MPI_ERR_GROUP, fname, "invalid group");
    if (g->my_rank == MPI_UNDEFINED)
        return lm_err_handler(errhandler, LM_ERRH_COMM, MPI_ERR_GROUP, fname,
                              "the calling process is not a member of group");
    lm_comm *a = agreement_comm();
    if (!a) return lm_err_handler(errhandler, LM_ERRH_COMM, MPI_ERR_NO_MEM, fname, "out of memory");
    uint16_t id;
    int rc = lm_context_id_allocate_group(a, g, stringtag_tag(stringtag), &id);
    if (rc) return lm_err_handler(errhandler, LM_ERRH_COMM, rc, fname, "context id agreement failed");
    lm_group_retain(g);
    lm_comm *c = lm_comm_new_intra(g, id, a);
    if (!c) {
        lm_group_release(g);
        lm_context_id_release(id);
        return lm_err_handler(errhandler, LM_ERRH_COMM, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    lm_errhandler_release(c->errhandler);
    c->errhandler = errhandler;
    lm_errhandler_retain(errhandler);
    *newcomm = c->obj.handle;
    if (info != MPI_INFO_NULL && lm_comm_info_set(c, info)) {
        impl_MPI_Comm_free(newcomm);
        return lm_err_handler(errhandler, LM_ERRH_COMM, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    return MPI_SUCCESS;
}
