/* Raising errors and describing them. An error code is its error class here
 * (user-added classes and codes come later); the detailed text of the most
 * recent error is kept per thread and printed by the fatal handlers. */
#include "core/lm_error.h"
#include "core/errhandler.h"
#include "core/lm_state.h"
#include "core/user_errors.h"
#include "core/session.h"
#include "comm/comm.h"
#include "rma/win.h"
#include "boot/boot.h"
#include "binding/impl_gen.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_message[512];

static const struct { int cls; const char *text; } class_text[] = {
    {MPI_SUCCESS, "no error"},
    {MPI_ERR_BUFFER, "invalid buffer pointer"},
    {MPI_ERR_COUNT, "invalid count argument"},
    {MPI_ERR_TYPE, "invalid datatype"},
    {MPI_ERR_TAG, "invalid tag"},
    {MPI_ERR_COMM, "invalid communicator"},
    {MPI_ERR_RANK, "invalid rank"},
    {MPI_ERR_REQUEST, "invalid request"},
    {MPI_ERR_ROOT, "invalid root"},
    {MPI_ERR_GROUP, "invalid group"},
    {MPI_ERR_OP, "invalid operation"},
    {MPI_ERR_TOPOLOGY, "invalid topology"},
    {MPI_ERR_DIMS, "invalid dimension argument"},
    {MPI_ERR_ARG, "invalid argument"},
    {MPI_ERR_UNKNOWN, "unknown error"},
    {MPI_ERR_TRUNCATE, "message truncated"},
    {MPI_ERR_OTHER, "other error"},
    {MPI_ERR_INTERN, "internal error"},
    {MPI_ERR_IN_STATUS, "error code is in status"},
    {MPI_ERR_PENDING, "pending request"},
    {MPI_ERR_KEYVAL, "invalid keyval"},
    {MPI_ERR_NO_MEM, "out of memory"},
    {MPI_ERR_BASE, "invalid base"},
    {MPI_ERR_INFO_KEY, "info key too long"},
    {MPI_ERR_INFO_VALUE, "info value too long"},
    {MPI_ERR_INFO_NOKEY, "info key not defined"},
    {MPI_ERR_SPAWN, "error spawning processes"},
    {MPI_ERR_PORT, "invalid port name"},
    {MPI_ERR_SERVICE, "invalid service name"},
    {MPI_ERR_NAME, "invalid service name in lookup"},
    {MPI_ERR_WIN, "invalid window"},
    {MPI_ERR_SIZE, "invalid size"},
    {MPI_ERR_DISP, "invalid displacement"},
    {MPI_ERR_INFO, "invalid info object"},
    {MPI_ERR_LOCKTYPE, "invalid lock type"},
    {MPI_ERR_ASSERT, "invalid assert"},
    {MPI_ERR_RMA_CONFLICT, "conflicting accesses to a window"},
    {MPI_ERR_RMA_SYNC, "wrong RMA synchronization"},
    {MPI_ERR_RMA_RANGE, "target memory out of window range"},
    {MPI_ERR_RMA_ATTACH, "memory cannot be attached"},
    {MPI_ERR_RMA_SHARED, "memory cannot be shared"},
    {MPI_ERR_RMA_FLAVOR, "wrong window flavor"},
    {MPI_ERR_FILE, "invalid file handle"},
    {MPI_ERR_NOT_SAME, "collective argument not identical on all processes"},
    {MPI_ERR_AMODE, "invalid access mode"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "unsupported data representation"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "unsupported operation"},
    {MPI_ERR_NO_SUCH_FILE, "no such file"},
    {MPI_ERR_FILE_EXISTS, "file exists"},
    {MPI_ERR_BAD_FILE, "invalid file name"},
    {MPI_ERR_ACCESS, "permission denied"},
    {MPI_ERR_NO_SPACE, "not enough space"},
    {MPI_ERR_QUOTA, "quota exceeded"},
    {MPI_ERR_READ_ONLY, "read-only file or file system"},
    {MPI_ERR_FILE_IN_USE, "file in use"},
    {MPI_ERR_DUP_DATAREP, "data representation already defined"},
    {MPI_ERR_CONVERSION, "error in a data conversion function"},
    {MPI_ERR_IO, "I/O error"},
    {MPI_ERR_SESSION, "invalid session"},
    {MPI_ERR_PROC_ABORTED, "a process aborted"},
    {MPI_ERR_VALUE_TOO_LARGE, "value too large for the output argument"},
    {MPI_ERR_ERRHANDLER, "invalid error handler"},
    {MPI_ERR_LASTCODE, "last error code"},
};

const char *lm_error_class_text(int cls)
{
    for (size_t i = 0; i < sizeof class_text / sizeof class_text[0]; i++)
        if (class_text[i].cls == cls) return class_text[i].text;
    return NULL;
}

static const char *class_name(int cls)
{
    static const struct { int cls; const char *name; } names[] = {
#define N(x) {x, #x}
        N(MPI_ERR_BUFFER), N(MPI_ERR_COUNT), N(MPI_ERR_TYPE), N(MPI_ERR_TAG), N(MPI_ERR_COMM),
        N(MPI_ERR_RANK), N(MPI_ERR_REQUEST), N(MPI_ERR_ROOT), N(MPI_ERR_GROUP), N(MPI_ERR_OP),
        N(MPI_ERR_ARG), N(MPI_ERR_TRUNCATE), N(MPI_ERR_OTHER), N(MPI_ERR_INTERN), N(MPI_ERR_NO_MEM),
        N(MPI_ERR_INFO), N(MPI_ERR_WIN), N(MPI_ERR_SIZE), N(MPI_ERR_DISP), N(MPI_ERR_BASE),
        N(MPI_ERR_RMA_FLAVOR), N(MPI_ERR_RMA_ATTACH), N(MPI_ERR_RMA_SHARED), N(MPI_ERR_FILE), N(MPI_ERR_SESSION),
        N(MPI_ERR_UNSUPPORTED_OPERATION), N(MPI_ERR_IN_STATUS), N(MPI_ERR_PENDING), N(MPI_ERR_KEYVAL),
#undef N
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].cls == cls) return names[i].name;
    return "MPI_ERR";
}

const char *lm_err_last_message(void) { return last_message; }

static void format(int cls, const char *fname, const char *fmt, va_list ap)
{
    int n = snprintf(last_message, sizeof last_message, "%s: ", fname);
    if (n < 0 || (size_t)n >= sizeof last_message) return;
    int m = vsnprintf(last_message + n, sizeof last_message - (size_t)n, fmt, ap);
    if (m < 0) return;
    n += m;
    if ((size_t)n < sizeof last_message)
        snprintf(last_message + n, sizeof last_message - (size_t)n, " (%s: %s)", class_name(cls),
                 lm_error_class_text(cls) ? lm_error_class_text(cls) : "error");
}

static int raise_on(MPI_Errhandler e, int target, int obj, int cls)
{
    if (lm_initialized_state() != LM_STATE_INITIALIZED) return cls;
    return lm_errhandler_invoke(e, target, obj, cls, last_message);
}

int lm_err_comm(MPI_Comm comm, int cls, const char *fname, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format(cls, fname, fmt, ap);
    va_end(ap);
    lm_comm *c = lm_comm_get(comm);
    /* An invalid communicator argument is reported on MPI_COMM_WORLD, as users
     * who set a handler usually set it there. */
    if (!c) c = lm_comm_get(MPI_COMM_WORLD);
    if (!c) return cls;
    return raise_on(c->errhandler, LM_ERRH_COMM, c->obj.handle, cls);
}

int lm_err_noobj(int cls, const char *fname, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format(cls, fname, fmt, ap);
    va_end(ap);
    lm_comm *c = lm_comm_get(MPI_COMM_SELF);
    if (!c) return cls;
    return raise_on(c->errhandler, LM_ERRH_COMM, c->obj.handle, cls);
}

/* Files have their own handlers once those objects exist; until then such
 * errors go where object-less errors go. */
#define FORWARD_TO_NOOBJ(name, type)                                                    \
    int name(type obj, int cls, const char *fname, const char *fmt, ...)                \
    {                                                                                   \
        (void)obj;                                                                      \
        va_list ap;                                                                     \
        va_start(ap, fmt);                                                              \
        format(cls, fname, fmt, ap);                                                    \
        va_end(ap);                                                                     \
        lm_comm *c = lm_comm_get(MPI_COMM_SELF);                                        \
        if (!c) return cls;                                                             \
        return raise_on(c->errhandler, LM_ERRH_COMM, c->obj.handle, cls);               \
    }
FORWARD_TO_NOOBJ(lm_err_file, MPI_File)

/* A live window's own handler; an invalid window is an object-less error
 * (MPI-4.1 section 9.3). */
int lm_err_win(MPI_Win obj, int cls, const char *fname, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format(cls, fname, fmt, ap);
    va_end(ap);
    MPI_Errhandler e;
    if (lm_win_errhandler(obj, &e)) return raise_on(e, LM_ERRH_WIN, obj, cls);
    lm_comm *c = lm_comm_get(MPI_COMM_SELF);
    if (!c) return cls;
    return raise_on(c->errhandler, LM_ERRH_COMM, c->obj.handle, cls);
}

/* A live session's own handler; an invalid session is an object-less error. */
int lm_err_session(MPI_Session obj, int cls, const char *fname, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format(cls, fname, fmt, ap);
    va_end(ap);
    MPI_Errhandler e;
    if (lm_session_errhandler(obj, &e)) return raise_on(e, LM_ERRH_SESSION, obj, cls);
    lm_comm *c = lm_comm_get(MPI_COMM_SELF);
    if (!c) return cls;
    return raise_on(c->errhandler, LM_ERRH_COMM, c->obj.handle, cls);
}

int lm_err_unsupported(const char *fname)
{
    return lm_err_noobj(MPI_ERR_UNSUPPORTED_OPERATION, fname, "%s is not implemented in this version of LeanMPI", fname);
}

void lm_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    fprintf(stderr, "LeanMPI: rank %d: fatal: %s\n", lm_world_rank(), last_message);
    lm_boot_abort(1, last_message);
}

int impl_MPI_Error_class(int errorcode, int *errorclass)
{
    if (errorcode >= MPI_SUCCESS && errorcode <= MPI_ERR_LASTCODE) {
        *errorclass = errorcode;
        return MPI_SUCCESS;
    }
    int cls = lm_user_error_class(errorcode);
    if (cls < 0)
        return lm_err_noobj(MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d", errorcode);
    *errorclass = cls;
    return MPI_SUCCESS;
}

int impl_MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    const char *t = lm_error_class_text(errorcode);
    if (!t && errorcode > MPI_ERR_LASTCODE) {
        if (lm_user_error_class(errorcode) < 0)
            return lm_err_noobj(MPI_ERR_ARG, "MPI_Error_string", "invalid error code %d", errorcode);
        t = lm_user_error_string(errorcode); /* the empty string until one is added */
        if (!t) t = "";
    } else if (!t) {
        if (errorcode < MPI_SUCCESS)
            return lm_err_noobj(MPI_ERR_ARG, "MPI_Error_string", "invalid error code %d", errorcode);
        t = "error";
    }
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", t);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
