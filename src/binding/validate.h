/* Argument checks called by the generated MPI entry points, one small
 * function per parameter kind. Each returns MPI_SUCCESS or the code returned
 * by the error handler it raised (so a failed check ends the MPI call). */
#ifndef LM_VALIDATE_H
#define LM_VALIDATE_H
#include "mpi.h"
#include "util/lm_handle.h"
#include "util/lm_error.h"
#include "util/lm_state.h"
#include "obj/comm.h"
#include "obj/group.h"
#include "datatype/datatype.h"
#include "binding/predefined_gen.h"
#include "comm/context_id.h"
#include "comm/intercomm.h"
#include "comm/topo_create.h"

/* Which object's error handler reports an error: none (MPI_COMM_SELF's,
 * via lm_err_noobj) until the call's communicator/window/file/session
 * argument has been validated. */
typedef struct lm_errctx {
    const char *fn; /* MPI function name */
    int kind;       /* LM_KIND_COMM/WIN/FILE/SESSION, or 0 */
    int handle;
} lm_errctx;

#define LM_ERRCTX_INIT(fn) \
    {                      \
        fn, 0, 0           \
    }
#define LM_CHECK(expr)                            \
    do {                                          \
        int lm_rc_ = (expr);                      \
        if (lm_rc_ != MPI_SUCCESS) return lm_rc_; \
    } while (0)

/* A collective constructor's check once its communicator is known (lm_c):
 * when it fails, this process still takes part in the constructor's first
 * collective step with its error (abstain, from comm/context_id.h or
 * comm/topo_create.h), so that the other processes fail too instead of
 * waiting for it. */
#define LM_CHECK_OR_ABSTAIN(abstain, expr)                       \
    do {                                                         \
        int lm_rc_ = (expr);                                     \
        if (lm_rc_ != MPI_SUCCESS) return abstain(lm_c, lm_rc_); \
    } while (0)
/* The same for an abstain that needs more of the call's arguments. */
#define LM_CHECK_OR_ABSTAIN_WITH(abstain, expr, ...)                          \
    do {                                                                      \
        int lm_rc_ = (expr);                                                  \
        if (lm_rc_ != MPI_SUCCESS) return abstain(lm_c, lm_rc_, __VA_ARGS__); \
    } while (0)

static inline void lm_errctx_bind(lm_errctx *ctx, int kind, int handle)
{
    ctx->kind = kind;
    ctx->handle = handle;
}

/* Run the error handler for an error code an implementation returned
 * (raise.c); returns what the entry point returns. */
int lm_raise_at_boundary(const char *fname, int code);

/* Record errclass on ctx's object (the entry point raises it on the way
 * out); the message names ctx->fn. */
int lm_raise(const lm_errctx *ctx, int errclass, const char *fmt, ...) LM_PRINTF(3, 4);

int lm_raise_not_initialized(const lm_errctx *ctx, int state);
static inline int lm_check_init(const lm_errctx *ctx)
{
    int state = lm_initialized_state();
    return state == LM_STATE_INITIALIZED ? MPI_SUCCESS : lm_raise_not_initialized(ctx, state);
}

static inline int lm_check_ptr(const lm_errctx *ctx, const void *p, const char *name)
{
    return p ? MPI_SUCCESS : lm_raise(ctx, MPI_ERR_ARG, "argument %s is a NULL pointer", name);
}

/* A live object of kind: predefined with an index below the kind's count, or
 * a live dynamic object. */
static inline int lm_handle_valid(int h, enum lm_kind kind, unsigned npredef)
{
    if (LM_HANDLE_KIND(h) != (unsigned)kind) return 0;
    if (LM_HANDLE_TIER(h) == LM_TIER_BUILTIN) return LM_HANDLE_INDEX(h) < npredef;
    return LM_HANDLE_TIER(h) == LM_TIER_DYNAMIC && lm_object_lookup(h, kind) != NULL;
}

static inline int lm_check_handle(const lm_errctx *ctx, int h, enum lm_kind kind, unsigned npredef, int null_ok,
                                  int errclass, const char *what, const char *name)
{
    if (null_ok && h == LM_NULL_HANDLE(kind)) return MPI_SUCCESS;
    if (lm_handle_valid(h, kind, npredef)) return MPI_SUCCESS;
    return lm_raise(ctx, errclass, "argument %s is not a valid %s%s", name, what,
                    h == LM_NULL_HANDLE(kind) ? " (it is the null handle)" : "");
}

static inline int lm_check_not_predefined(const lm_errctx *ctx, int h, const char *name, int errclass)
{
    return LM_HANDLE_TIER(h) == LM_TIER_BUILTIN
               ? lm_raise(ctx, errclass, "argument %s is a predefined object and cannot be freed", name)
               : MPI_SUCCESS;
}

static inline int lm_check_comm(const lm_errctx *ctx, MPI_Comm comm, const char *name, lm_comm **out)
{
    lm_comm *c = lm_comm_get(comm);
    if (!c)
        return lm_raise(ctx, MPI_ERR_COMM, "argument %s is not a valid communicator%s", name,
                        comm == MPI_COMM_NULL ? " (it is MPI_COMM_NULL)" : "");
    if (out) *out = c;
    return MPI_SUCCESS;
}

static inline int lm_check_datatype(const lm_errctx *ctx, MPI_Datatype t, const char *name, int need_commit)
{
    lm_datatype *d = lm_datatype_get(t);
    if (!d)
        return lm_raise(ctx, MPI_ERR_TYPE, "argument %s is not a valid datatype%s", name,
                        t == MPI_DATATYPE_NULL ? " (it is MPI_DATATYPE_NULL)" : "");
    if (need_commit && !d->committed) return lm_raise(ctx, MPI_ERR_TYPE, "datatype %s has not been committed", name);
    return MPI_SUCCESS;
}

static inline int lm_check_group(const lm_errctx *ctx, MPI_Group g, const char *name, int null_ok)
{
    if ((null_ok && g == MPI_GROUP_NULL) || lm_group_get(g)) return MPI_SUCCESS;
    return lm_raise(ctx, MPI_ERR_GROUP, "argument %s is not a valid group", name);
}

#define LM_HANDLE_CHECK(fname, ctype, kind, count, cls, what)                             \
    static inline int fname(const lm_errctx *ctx, ctype h, const char *name, int null_ok) \
    {                                                                                     \
        return lm_check_handle(ctx, h, kind, count, null_ok, cls, what, name);            \
    }
LM_HANDLE_CHECK(lm_check_op, MPI_Op, LM_KIND_OP, LM_PREDEFINED_COUNT_OP, MPI_ERR_OP, "operation")
LM_HANDLE_CHECK(lm_check_info, MPI_Info, LM_KIND_INFO, LM_PREDEFINED_COUNT_INFO, MPI_ERR_INFO, "info object")
LM_HANDLE_CHECK(lm_check_errhandler, MPI_Errhandler, LM_KIND_ERRHANDLER, LM_PREDEFINED_COUNT_ERRHANDLER, MPI_ERR_ARG,
                "error handler")
LM_HANDLE_CHECK(lm_check_win, MPI_Win, LM_KIND_WIN, LM_PREDEFINED_COUNT_WIN, MPI_ERR_WIN, "window")
LM_HANDLE_CHECK(lm_check_file, MPI_File, LM_KIND_FILE, LM_PREDEFINED_COUNT_FILE, MPI_ERR_FILE, "file")
LM_HANDLE_CHECK(lm_check_session, MPI_Session, LM_KIND_SESSION, LM_PREDEFINED_COUNT_SESSION, MPI_ERR_SESSION, "session")
LM_HANDLE_CHECK(lm_check_message, MPI_Message, LM_KIND_MESSAGE, LM_PREDEFINED_COUNT_MESSAGE, MPI_ERR_REQUEST, "message")
LM_HANDLE_CHECK(lm_check_request, MPI_Request, LM_KIND_REQUEST, LM_PREDEFINED_COUNT_REQUEST, MPI_ERR_REQUEST, "request")
#undef LM_HANDLE_CHECK

/* Point-to-point ranks: a rank of c's peer group (the remote group of an
 * intercommunicator), MPI_PROC_NULL, and MPI_ANY_SOURCE where allowed.
 * Without a communicator (windows, groups) only the sign is checked. */
static inline int lm_check_rank(const lm_errctx *ctx, const lm_comm *c, int r, const char *name, int allow_any)
{
    if (r == MPI_PROC_NULL || (allow_any && r == MPI_ANY_SOURCE)) return MPI_SUCCESS;
    if (r >= 0 && (!c || r < lm_comm_peer_size(c))) {
        if (lm_world_simulated && c && lm_comm_world_rank(c, r) >= lm_world_size())
            return lm_raise(ctx, MPI_ERR_RANK,
                            "argument %s = %d is a simulated rank (mpirun --simulate-world-size): no process runs it",
                            name, r);
        return MPI_SUCCESS;
    }
    if (c)
        return lm_raise(ctx, MPI_ERR_RANK, "argument %s = %d is not a rank in [0, %d)", name, r, lm_comm_peer_size(c));
    return lm_raise(ctx, MPI_ERR_RANK, "argument %s = %d is not a valid rank", name, r);
}

/* Collective roots: a local rank, or on an intercommunicator MPI_ROOT,
 * MPI_PROC_NULL or a rank of the remote group. */
static inline int lm_check_root(const lm_errctx *ctx, const lm_comm *c, int root, const char *name)
{
    if (c->is_inter && (root == MPI_ROOT || root == MPI_PROC_NULL)) return MPI_SUCCESS;
    if (root >= 0 && root < lm_comm_peer_size(c)) return MPI_SUCCESS;
    return lm_raise(ctx, MPI_ERR_ROOT, "argument %s = %d is not a valid root", name, root);
}

/* Whether root-only arguments are significant in this process. */
static inline int lm_root_side(const lm_comm *c, int root) { return c->is_inter ? root == MPI_ROOT : root == c->rank; }

/* Whether the other buffer arguments are significant in this process. */
static inline int lm_leaf_side(const lm_comm *c, int root) { return !c->is_inter || root >= 0; }

/* Whether arguments used by the root and the others alike are significant:
 * everywhere but at MPI_PROC_NULL in an intercommunicator's root group. */
static inline int lm_any_side(const lm_comm *c, int root) { return !c->is_inter || root != MPI_PROC_NULL; }

static inline int lm_check_tag(const lm_errctx *ctx, int tag, const char *name, int allow_any)
{
    if ((tag >= 0 && tag <= LM_TAG_UB) || (allow_any && tag == MPI_ANY_TAG)) return MPI_SUCCESS;
    return lm_raise(ctx, MPI_ERR_TAG, "argument %s = %d is not a valid tag (0..%d)", name, tag, LM_TAG_UB);
}

static inline int lm_check_count(const lm_errctx *ctx, MPI_Count v, const char *name, int errclass, MPI_Count min)
{
    if (v >= min) return MPI_SUCCESS;
    return lm_raise(ctx, errclass, "argument %s = %lld is less than %lld", name, (long long)v, (long long)min);
}

/* An array whose length another argument gives: NULL only when that
 * length leaves nothing to read or write. */
static inline int lm_check_array(const lm_errctx *ctx, const void *p, MPI_Count len, const char *name,
                                 const char *len_name)
{
    if (p || len <= 0) return MPI_SUCCESS;
    return lm_raise(ctx, MPI_ERR_ARG, "argument %s is a NULL pointer but %s = %lld", name, len_name, (long long)len);
}

/* A NULL buffer is only meaningful with a derived datatype, whose
 * displacements may be absolute addresses (MPI_BOTTOM). */
static inline int lm_check_buffer(const lm_errctx *ctx, const void *buf, MPI_Count count, MPI_Datatype t,
                                  const char *name, int inplace_ok)
{
    if (buf == MPI_IN_PLACE)
        return inplace_ok ? MPI_SUCCESS
                          : lm_raise(ctx, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed for argument %s", name);
    if (buf == NULL && count > 0 && LM_HANDLE_TIER(t) == LM_TIER_BUILTIN)
        return lm_raise(ctx, MPI_ERR_BUFFER, "argument %s is NULL with count %lld of a predefined datatype", name,
                        (long long)count);
    return MPI_SUCCESS;
}

static inline int lm_check_string(const lm_errctx *ctx, const char *s, const char *name, int errclass)
{
    return s ? MPI_SUCCESS : lm_raise(ctx, errclass, "argument %s is a NULL string", name);
}

static inline int lm_check_status_in(const lm_errctx *ctx, const MPI_Status *s, const char *name)
{
    if (s && s != MPI_STATUS_IGNORE) return MPI_SUCCESS;
    return lm_raise(ctx, MPI_ERR_ARG, "argument %s must be a status, not %s", name, s ? "MPI_STATUS_IGNORE" : "NULL");
}

static inline int lm_check_lock_type(const lm_errctx *ctx, int lock_type, const char *name)
{
    if (lock_type == MPI_LOCK_EXCLUSIVE || lock_type == MPI_LOCK_SHARED) return MPI_SUCCESS;
    return lm_raise(ctx, MPI_ERR_LOCKTYPE, "argument %s = %d is not a lock type", name, lock_type);
}

static inline int lm_check_color(const lm_errctx *ctx, int color, const char *name)
{
    if (color >= 0 || color == MPI_UNDEFINED) return MPI_SUCCESS;
    return lm_raise(ctx, MPI_ERR_ARG, "argument %s = %d must be non-negative or MPI_UNDEFINED", name, color);
}

#endif
