/* The predefined attribute copy/delete callbacks and MPI_CONVERSION_FN_NULL.
 * They are real functions (not NULL macros) so a user can pass them anywhere a
 * callback is expected and the library can call them without special cases. */
#include "mpi.h"

/* Copy callbacks receive attribute_val_out as a pointer to where the new
 * attribute value goes. */
static int dup_fn(void *in, void *out, int *flag)
{
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int null_copy_fn(int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

#define COPY_FNS(DUP, NULLCOPY, htype)                                        \
    int DUP(htype h, int k, void *extra, void *in, void *out, int *flag)      \
    {                                                                         \
        (void)h;                                                              \
        (void)k;                                                              \
        (void)extra;                                                          \
        return dup_fn(in, out, flag);                                         \
    }                                                                         \
    int NULLCOPY(htype h, int k, void *extra, void *in, void *out, int *flag) \
    {                                                                         \
        (void)h;                                                              \
        (void)k;                                                              \
        (void)extra;                                                          \
        (void)in;                                                             \
        (void)out;                                                            \
        return null_copy_fn(flag);                                            \
    }
#define DELETE_FN(NULLDELETE, htype)                       \
    int NULLDELETE(htype h, int k, void *val, void *extra) \
    {                                                      \
        (void)h;                                           \
        (void)k;                                           \
        (void)val;                                         \
        (void)extra;                                       \
        return MPI_SUCCESS;                                \
    }

COPY_FNS(MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN, MPI_Comm)
COPY_FNS(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_COPY_FN, MPI_Datatype)
COPY_FNS(MPI_WIN_DUP_FN, MPI_WIN_NULL_COPY_FN, MPI_Win)
COPY_FNS(MPI_DUP_FN, MPI_NULL_COPY_FN, MPI_Comm)
DELETE_FN(MPI_COMM_NULL_DELETE_FN, MPI_Comm)
DELETE_FN(MPI_TYPE_NULL_DELETE_FN, MPI_Datatype)
DELETE_FN(MPI_WIN_NULL_DELETE_FN, MPI_Win)
DELETE_FN(MPI_NULL_DELETE_FN, MPI_Comm)

/* Marks "no conversion" in MPI_Register_datarep; the file layer never calls
 * it, so it has nothing to convert. */
int MPI_CONVERSION_FN_NULL(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position,
                           void *extra_state)
{
    (void)userbuf;
    (void)datatype;
    (void)count;
    (void)filebuf;
    (void)position;
    (void)extra_state;
    return MPI_SUCCESS;
}

int MPI_CONVERSION_FN_NULL_C(void *userbuf, MPI_Datatype datatype, MPI_Count count, void *filebuf, MPI_Offset position,
                             void *extra_state)
{
    (void)userbuf;
    (void)datatype;
    (void)count;
    (void)filebuf;
    (void)position;
    (void)extra_state;
    return MPI_SUCCESS;
}
