/* Errors: recorded where they are found, raised at the MPI boundary.
 *
 * An implementation that finds an error calls one of the lm_err_* functions
 * below: they write the message (naming the MPI function) and the object
 * whose error handler is to report it in a per-thread record, and return the
 * error class, which the implementation returns. Nothing runs a user error
 * handler down here: the generated entry point that the program called sees
 * the code come back and raises it on the recorded object
 * (src/binding/raise.c). So an MPI function the library calls internally
 * never triggers a handler, and an error is reported once, on the way out.
 *
 * Status convention (docs/STYLE.md): an internal function returns
 * MPI_SUCCESS (0) or a positive MPI error class, nothing else; an outcome
 * that is not an error ("sent now" or "queued", "found" or "not found") goes
 * through an out-parameter or a return type of its own, never through the
 * int that carries errors. */
#ifndef LM_ERROR_H
#define LM_ERROR_H
#include "mpi.h"

#if defined(__GNUC__)
#define LM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define LM_NORETURN __attribute__((noreturn))
#else
#define LM_PRINTF(a, b)
#define LM_NORETURN
#endif

/* The object an error is raised on. */
enum lm_err_on {
    LM_ERR_ON_NOTHING, /* MPI_COMM_SELF's handler (MPI-4.1 section 9.3) */
    LM_ERR_ON_COMM,    /* the communicator's; MPI_COMM_WORLD's if it is invalid */
    LM_ERR_ON_WIN,     /* the window's; MPI_COMM_SELF's if it is invalid */
    LM_ERR_ON_SESSION, /* the session's; MPI_COMM_SELF's if it is invalid */
    LM_ERR_ON_HANDLER, /* a given handler, for an object that does not exist yet */
};

typedef struct lm_err_record {
    int cls; /* the class or code returned */
    enum lm_err_on on;
    int handle;     /* the communicator, window or session */
    int errhandler; /* LM_ERR_ON_HANDLER: the handler ... */
    int errh_kind;  /* ... and the kind of object it is for (obj/errhandler.h) */
} lm_err_record;

/* fname: the MPI function name, e.g. "MPI_Send"; fmt: what was wrong.
 * Each records the error and returns errclass. */
int lm_err_comm(MPI_Comm comm, int errclass, const char *fname, const char *fmt, ...) LM_PRINTF(4, 5);
int lm_err_win(MPI_Win win, int errclass, const char *fname, const char *fmt, ...) LM_PRINTF(4, 5);
int lm_err_file(MPI_File file, int errclass, const char *fname, const char *fmt, ...) LM_PRINTF(4, 5);
int lm_err_session(MPI_Session s, int errclass, const char *fname, const char *fmt, ...) LM_PRINTF(4, 5);
/* Errors not associated with an object: raised on MPI_COMM_SELF (MPI-4). */
int lm_err_noobj(int errclass, const char *fname, const char *fmt, ...) LM_PRINTF(3, 4);
/* Errors of a call that creates an object, reported by the handler given
 * for it (errh_kind: LM_ERRH_SESSION, ...). */
int lm_err_handler(int errhandler, int errh_kind, int errclass, const char *fname, const char *fmt, ...)
    LM_PRINTF(5, 6);
/* For functions that are not implemented yet. */
int lm_err_unsupported(const char *fname);

/* The record of the error being returned, taken once by the entry point:
 * 1 and *out filled when the last error recorded by this thread has class
 * code; 0 otherwise (the code came from somewhere that recorded nothing,
 * or the record is stale). The record is cleared either way. */
int lm_err_take(int code, lm_err_record *out);
/* Record an error with no object and a message of its own, for a code that
 * came back without one. */
void lm_err_note(int errclass, const char *fname, const char *fmt, ...) LM_PRINTF(3, 4);

/* Fatal internal condition: print, then end the whole job through the exit
 * function set below (the bootstrap's abort), or _exit(1) before there is one. */
void lm_fatal(const char *fmt, ...) LM_PRINTF(1, 2) LM_NORETURN;
void lm_fatal_set_exit(void (*exit_fn)(int code, const char *message));

/* The message of the most recent error recorded by this thread (for the
 * error handlers and for tests). */
const char *lm_err_last_message(void);
/* The error string of a predefined class, or NULL. */
const char *lm_error_class_text(int errclass);

#endif
