/* User-defined error classes, codes and strings (MPI_Add_error_class and
 * friends).  They are numbered above MPI_ERR_LASTCODE, classes and codes
 * from one counter, so that a code is its own class when added as a class. */
#ifndef LM_USER_ERRORS_H
#define LM_USER_ERRORS_H
#include <stdbool.h>

/* The class of a user code, or -1 when errorcode is not a live user code. */
int lm_user_error_class(int errorcode);
/* The string attached to a user code or class; NULL when none is. */
const char *lm_user_error_string(int errorcode);
/* Largest error code handed out so far (the MPI_LASTUSEDCODE attribute). */
int lm_user_error_last_used(void);
/* Releases every user class, code and string (at MPI_Finalize). */
void lm_user_errors_release(void);
#endif
