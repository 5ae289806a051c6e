/* Error raising. Every detected error goes through one of these, which calls
 * the error handler attached to the object (communicator, window, file or,
 * for errors tied to no object, MPI_COMM_SELF) and returns the code that the
 * MPI function must return (under MPI_ERRORS_RETURN). */
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

/* fname: the MPI function name, e.g. "MPI_Send"; fmt: what was wrong. */
int lm_err_comm(MPI_Comm comm, int errclass, const char *fname, const char *fmt, ...) LM_PRINTF(4, 5);
int lm_err_win(MPI_Win win, int errclass, const char *fname, const char *fmt, ...) LM_PRINTF(4, 5);
int lm_err_file(MPI_File file, int errclass, const char *fname, const char *fmt, ...) LM_PRINTF(4, 5);
int lm_err_session(MPI_Session s, int errclass, const char *fname, const char *fmt, ...) LM_PRINTF(4, 5);
/* Errors not associated with an object: raised on MPI_COMM_SELF (MPI-4). */
int lm_err_noobj(int errclass, const char *fname, const char *fmt, ...) LM_PRINTF(3, 4);
/* For functions that are not implemented yet. */
int lm_err_unsupported(const char *fname);

/* Fatal internal condition: print, then end the whole job. */
void lm_fatal(const char *fmt, ...) LM_PRINTF(1, 2) LM_NORETURN;

/* The message of the most recent error raised by this thread (for tests and
 * for MPI_Error_string of the codes this library creates). */
const char *lm_err_last_message(void);

#endif
