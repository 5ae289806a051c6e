/* Recording errors and describing them (lm_error.h). An error code is its
 * error class here, or a user-added code; the detailed text of the most
 * recent error is kept per thread, with the object to raise it on. */
#include "util/lm_error.h"
#include "util/lm_state.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static _Thread_local char last_message[512];
static _Thread_local lm_err_record record;
static _Thread_local int record_pending;
static void (*fatal_exit)(int code, const char *message);

/* Every predefined class: its name (for messages) and its error string. */
static const struct {
    int cls;
    const char *name, *text;
} classes[] = {
#define C(cls, text)    \
    {                   \
        cls, #cls, text \
    }
    C(MPI_SUCCESS, "no error"),
    C(MPI_ERR_BUFFER, "invalid buffer pointer"),
    C(MPI_ERR_COUNT, "invalid count argument"),
    C(MPI_ERR_TYPE, "invalid datatype"),
    C(MPI_ERR_TAG, "invalid tag"),
    C(MPI_ERR_COMM, "invalid communicator"),
    C(MPI_ERR_RANK, "invalid rank"),
    C(MPI_ERR_REQUEST, "invalid request"),
    C(MPI_ERR_ROOT, "invalid root"),
    C(MPI_ERR_GROUP, "invalid group"),
    C(MPI_ERR_OP, "invalid operation"),
    C(MPI_ERR_TOPOLOGY, "invalid topology"),
    C(MPI_ERR_DIMS, "invalid dimension argument"),
    C(MPI_ERR_ARG, "invalid argument"),
    C(MPI_ERR_UNKNOWN, "unknown error"),
    C(MPI_ERR_TRUNCATE, "message truncated"),
    C(MPI_ERR_OTHER, "other error"),
    C(MPI_ERR_INTERN, "internal error"),
    C(MPI_ERR_IN_STATUS, "error code is in status"),
    C(MPI_ERR_PENDING, "pending request"),
    C(MPI_ERR_KEYVAL, "invalid keyval"),
    C(MPI_ERR_NO_MEM, "out of memory"),
    C(MPI_ERR_BASE, "invalid base"),
    C(MPI_ERR_INFO_KEY, "info key too long"),
    C(MPI_ERR_INFO_VALUE, "info value too long"),
    C(MPI_ERR_INFO_NOKEY, "info key not defined"),
    C(MPI_ERR_SPAWN, "error spawning processes"),
    C(MPI_ERR_PORT, "invalid port name"),
    C(MPI_ERR_SERVICE, "invalid service name"),
    C(MPI_ERR_NAME, "invalid service name in lookup"),
    C(MPI_ERR_WIN, "invalid window"),
    C(MPI_ERR_SIZE, "invalid size"),
    C(MPI_ERR_DISP, "invalid displacement"),
    C(MPI_ERR_INFO, "invalid info object"),
    C(MPI_ERR_LOCKTYPE, "invalid lock type"),
    C(MPI_ERR_ASSERT, "invalid assert"),
    C(MPI_ERR_RMA_CONFLICT, "conflicting accesses to a window"),
    C(MPI_ERR_RMA_SYNC, "wrong RMA synchronization"),
    C(MPI_ERR_RMA_RANGE, "target memory out of window range"),
    C(MPI_ERR_RMA_ATTACH, "memory cannot be attached"),
    C(MPI_ERR_RMA_SHARED, "memory cannot be shared"),
    C(MPI_ERR_RMA_FLAVOR, "wrong window flavor"),
    C(MPI_ERR_FILE, "invalid file handle"),
    C(MPI_ERR_NOT_SAME, "collective argument not identical on all processes"),
    C(MPI_ERR_AMODE, "invalid access mode"),
    C(MPI_ERR_UNSUPPORTED_DATAREP, "unsupported data representation"),
    C(MPI_ERR_UNSUPPORTED_OPERATION, "unsupported operation"),
    C(MPI_ERR_NO_SUCH_FILE, "no such file"),
    C(MPI_ERR_FILE_EXISTS, "file exists"),
    C(MPI_ERR_BAD_FILE, "invalid file name"),
    C(MPI_ERR_ACCESS, "permission denied"),
    C(MPI_ERR_NO_SPACE, "not enough space"),
    C(MPI_ERR_QUOTA, "quota exceeded"),
    C(MPI_ERR_READ_ONLY, "read-only file or file system"),
    C(MPI_ERR_FILE_IN_USE, "file in use"),
    C(MPI_ERR_DUP_DATAREP, "data representation already defined"),
    C(MPI_ERR_CONVERSION, "error in a data conversion function"),
    C(MPI_ERR_IO, "I/O error"),
    C(MPI_ERR_SESSION, "invalid session"),
    C(MPI_ERR_PROC_ABORTED, "a process aborted"),
    C(MPI_ERR_VALUE_TOO_LARGE, "value too large for the output argument"),
    C(MPI_ERR_ERRHANDLER, "invalid error handler"),
    C(MPI_ERR_LASTCODE, "last error code"),
#undef C
};

static int class_index(int cls)
{
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (classes[i].cls == cls) return (int)i;
    return -1;
}

const char *lm_error_class_text(int cls)
{
    int i = class_index(cls);
    return i < 0 ? NULL : classes[i].text;
}

static const char *class_name(int cls)
{
    int i = class_index(cls);
    return i < 0 ? "user-defined class" : classes[i].name;
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

static void record_error(int cls, enum lm_err_on on, int handle, const char *fname, const char *fmt, va_list ap)
{
    format(cls, fname, fmt, ap);
    record = (lm_err_record){.cls = cls, .on = on, .handle = handle};
    record_pending = 1;
}

#define LM_RECORD(cls, on, handle)                     \
    do {                                               \
        va_list ap;                                    \
        va_start(ap, fmt);                             \
        record_error(cls, on, handle, fname, fmt, ap); \
        va_end(ap);                                    \
    } while (0)

int lm_err_comm(MPI_Comm comm, int cls, const char *fname, const char *fmt, ...)
{
    LM_RECORD(cls, LM_ERR_ON_COMM, comm);
    return cls;
}

int lm_err_noobj(int cls, const char *fname, const char *fmt, ...)
{
    LM_RECORD(cls, LM_ERR_ON_NOTHING, 0);
    return cls;
}

void lm_err_note(int cls, const char *fname, const char *fmt, ...) { LM_RECORD(cls, LM_ERR_ON_NOTHING, 0); }

/* Files have their own handlers once those objects exist; until then such
 * errors go where object-less errors go. */
int lm_err_file(MPI_File file, int cls, const char *fname, const char *fmt, ...)
{
    (void)file;
    LM_RECORD(cls, LM_ERR_ON_NOTHING, 0);
    return cls;
}

int lm_err_win(MPI_Win win, int cls, const char *fname, const char *fmt, ...)
{
    LM_RECORD(cls, LM_ERR_ON_WIN, win);
    return cls;
}

int lm_err_session(MPI_Session s, int cls, const char *fname, const char *fmt, ...)
{
    LM_RECORD(cls, LM_ERR_ON_SESSION, s);
    return cls;
}

int lm_err_handler(int errhandler, int errh_kind, int cls, const char *fname, const char *fmt, ...)
{
    LM_RECORD(cls, LM_ERR_ON_HANDLER, 0);
    record.errhandler = errhandler;
    record.errh_kind = errh_kind;
    return cls;
}

int lm_err_unsupported(const char *fname)
{
    return lm_err_noobj(MPI_ERR_UNSUPPORTED_OPERATION, fname, "%s is not implemented in this version of LeanMPI",
                        fname);
}

int lm_err_take(int code, lm_err_record *out)
{
    int match = record_pending && record.cls == code;
    if (match) *out = record;
    record_pending = 0;
    return match;
}

void lm_fatal_set_exit(void (*exit_fn)(int code, const char *message)) { fatal_exit = exit_fn; }

void lm_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    fprintf(stderr, "LeanMPI: rank %d: fatal: %s\n", lm_world_rank(), last_message);
    if (fatal_exit) fatal_exit(1, last_message);
    _exit(1);
}
