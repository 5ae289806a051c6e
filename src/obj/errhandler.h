/* Error handlers: the three predefined ones and user-defined handlers for
 * communicators, windows, files and sessions. */
#ifndef LM_ERRHANDLER_H
#define LM_ERRHANDLER_H
#include "mpi.h"
#include "util/lm_handle.h"

enum lm_errh_target { LM_ERRH_COMM, LM_ERRH_WIN, LM_ERRH_FILE, LM_ERRH_SESSION };

typedef struct lm_errhandler {
    lm_object obj;
    int target;       /* enum lm_errh_target */
    void (*fn)(void); /* the user function, called through its real type */
} lm_errhandler;

#define LM_ERRH_FATAL_INDEX 0
#define LM_ERRH_RETURN_INDEX 1
#define LM_ERRH_ABORT_INDEX 2
#define LM_ERRH_PREDEFINED_COUNT 3

/* Valid errhandler handle (predefined or live user one)? */
int lm_errhandler_valid(MPI_Errhandler e);
/* Valid for objects of target (enum lm_errh_target): a predefined handler,
 * or a user one created for that kind of object (MPI-4.1 section 9.3). */
int lm_errhandler_fits(MPI_Errhandler e, int target);
/* Run handler e for an error of class/code `code` raised on the object whose
 * handle is obj_handle (a communicator, window, file or session, by target).
 * Returns the code the MPI function returns. */
int lm_errhandler_invoke(MPI_Errhandler e, int target, int obj_handle, int code, const char *message);
void lm_errhandler_retain(MPI_Errhandler e);
void lm_errhandler_release(MPI_Errhandler e);

#endif
