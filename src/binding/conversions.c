/* Handle and status conversions between C and Fortran. Handles are ints in
 * both languages, so converting a handle is the identity. */
#include "mpi.h"
#include "util/lm_error.h"
#include "util/lm_cs.h"

#define LM_DIRECT(name) extern __typeof__(P##name) name __attribute__((weak, alias("P" #name)))

#define LM_HANDLE_CONVERSIONS(Name, ctype)                      \
    MPI_Fint PMPI_##Name##_c2f(ctype h) { return (MPI_Fint)h; } \
    ctype PMPI_##Name##_f2c(MPI_Fint h) { return (ctype)h; }    \
    LM_DIRECT(MPI_##Name##_c2f);                                \
    LM_DIRECT(MPI_##Name##_f2c);

LM_HANDLE_CONVERSIONS(Comm, MPI_Comm)
LM_HANDLE_CONVERSIONS(Errhandler, MPI_Errhandler)
LM_HANDLE_CONVERSIONS(File, MPI_File)
LM_HANDLE_CONVERSIONS(Group, MPI_Group)
LM_HANDLE_CONVERSIONS(Info, MPI_Info)
LM_HANDLE_CONVERSIONS(Message, MPI_Message)
LM_HANDLE_CONVERSIONS(Op, MPI_Op)
LM_HANDLE_CONVERSIONS(Request, MPI_Request)
LM_HANDLE_CONVERSIONS(Session, MPI_Session)
LM_HANDLE_CONVERSIONS(Type, MPI_Datatype)
LM_HANDLE_CONVERSIONS(Win, MPI_Win)

/* A Fortran status is MPI_F_STATUS_SIZE integers laid out like MPI_Status. */
static int bad_status(const char *fn, const void *p)
{
    /* the error handler runs in the critical section, as in every other call */
    int held = lm_cs_call_enter();
    int rc = lm_err_noobj(MPI_ERR_ARG, fn, "status argument is %s", p ? "MPI_STATUS_IGNORE" : "NULL");
    lm_cs_call_exit(held);
    return rc;
}
#define IS_BAD(p) ((p) == NULL || (const void *)(p) == (const void *)1)

int PMPI_Status_c2f(const MPI_Status *c, MPI_Fint *f)
{
    if (IS_BAD(c) || IS_BAD(f)) return bad_status("MPI_Status_c2f", IS_BAD(c) ? (const void *)c : (const void *)f);
    f[MPI_F_SOURCE] = c->MPI_SOURCE;
    f[MPI_F_TAG] = c->MPI_TAG;
    f[MPI_F_ERROR] = c->MPI_ERROR;
    f[3] = c->count_lo;
    f[4] = c->count_hi_and_cancelled;
    return MPI_SUCCESS;
}

int PMPI_Status_f2c(const MPI_Fint *f, MPI_Status *c)
{
    if (IS_BAD(c) || IS_BAD(f)) return bad_status("MPI_Status_f2c", IS_BAD(f) ? (const void *)f : (const void *)c);
    c->MPI_SOURCE = f[MPI_F_SOURCE];
    c->MPI_TAG = f[MPI_F_TAG];
    c->MPI_ERROR = f[MPI_F_ERROR];
    c->count_lo = f[3];
    c->count_hi_and_cancelled = f[4];
    return MPI_SUCCESS;
}

int PMPI_Status_c2f08(const MPI_Status *c, MPI_F08_status *f)
{
    if (IS_BAD(c) || IS_BAD(f)) return bad_status("MPI_Status_c2f08", IS_BAD(c) ? (const void *)c : (const void *)f);
    f->MPI_SOURCE = c->MPI_SOURCE;
    f->MPI_TAG = c->MPI_TAG;
    f->MPI_ERROR = c->MPI_ERROR;
    f->internal[0] = c->count_lo;
    f->internal[1] = c->count_hi_and_cancelled;
    return MPI_SUCCESS;
}

int PMPI_Status_f082c(const MPI_F08_status *f, MPI_Status *c)
{
    if (IS_BAD(c) || IS_BAD(f)) return bad_status("MPI_Status_f082c", IS_BAD(f) ? (const void *)f : (const void *)c);
    c->MPI_SOURCE = f->MPI_SOURCE;
    c->MPI_TAG = f->MPI_TAG;
    c->MPI_ERROR = f->MPI_ERROR;
    c->count_lo = f->internal[0];
    c->count_hi_and_cancelled = f->internal[1];
    return MPI_SUCCESS;
}

int PMPI_Status_f2f08(const MPI_Fint *f, MPI_F08_status *f08)
{
    MPI_Status c;
    int rc = PMPI_Status_f2c(f, &c);
    return rc != MPI_SUCCESS ? rc : PMPI_Status_c2f08(&c, f08);
}

int PMPI_Status_f082f(const MPI_F08_status *f08, MPI_Fint *f)
{
    MPI_Status c;
    int rc = PMPI_Status_f082c(f08, &c);
    return rc != MPI_SUCCESS ? rc : PMPI_Status_c2f(&c, f);
}

LM_DIRECT(MPI_Status_c2f);
LM_DIRECT(MPI_Status_f2c);
LM_DIRECT(MPI_Status_c2f08);
LM_DIRECT(MPI_Status_f082c);
LM_DIRECT(MPI_Status_f2f08);
LM_DIRECT(MPI_Status_f082f);
