/* Status queries. The count is kept in bytes; it is converted to elements
 * of the datatype the caller asks about. */
#include "pt2pt/request.h"
#include "datatype/datatype.h"
#include "core/lm_error.h"
#include "binding/impl_gen.h"

static MPI_Count status_bytes(const MPI_Status *st)
{
    return (MPI_Count)(unsigned)st->count_lo | ((MPI_Count)(st->count_hi_and_cancelled & 0x7fffffff) << 32);
}

static int count_of(const char *fname, const MPI_Status *st, MPI_Datatype dt, MPI_Count *out)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    MPI_Count bytes = status_bytes(st);
    /* data moves as extent-sized elements (padding of pair types included) */
    MPI_Count unit = t->extent;
    if (unit == 0) *out = bytes == 0 ? 0 : MPI_UNDEFINED;
    else *out = bytes % unit ? MPI_UNDEFINED : bytes / unit;
    return MPI_SUCCESS;
}

static int store_int(const char *fname, MPI_Count v, int *out)
{
    if (v > 2147483647) {
        *out = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    (void)fname;
    *out = (int)v;
    return MPI_SUCCESS;
}

int impl_MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count c;
    int rc = count_of("MPI_Get_count", status, datatype, &c);
    return rc ? rc : store_int("MPI_Get_count", c, count);
}

int impl_MPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return count_of("MPI_Get_count_c", status, datatype, count);
}

/* Elements of predefined types: for the types of this version (predefined
 * and contiguous derivations of them) that is bytes / basic size. */
static int elements_of(const char *fname, const MPI_Status *st, MPI_Datatype dt, MPI_Count *out)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    MPI_Count bytes = status_bytes(st);
    MPI_Count basic = t->basic_size > 0 ? t->basic_size : 1;
    if (t->extent != t->size && t->extent > 0) {
        /* pair types: two basic elements per extent-sized element */
        MPI_Count whole = bytes / t->extent, rest = bytes % t->extent;
        *out = whole * 2 + (rest ? 1 : 0);
        return MPI_SUCCESS;
    }
    *out = bytes % basic ? MPI_UNDEFINED : bytes / basic;
    return MPI_SUCCESS;
}

int impl_MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count c;
    int rc = elements_of("MPI_Get_elements", status, datatype, &c);
    return rc ? rc : store_int("MPI_Get_elements", c, count);
}

int impl_MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return elements_of("MPI_Get_elements_x", status, datatype, count);
}

int impl_MPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return elements_of("MPI_Get_elements_c", status, datatype, count);
}

int impl_MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    lm_datatype *t = lm_datatype_get(datatype);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, "MPI_Status_set_elements", "invalid datatype");
    MPI_Count basic = t->basic_size > 0 ? t->basic_size : 1;
    int cancelled = (status->count_hi_and_cancelled & (int)0x80000000u) != 0;
    lm_status_set(status, status->MPI_SOURCE, status->MPI_TAG, status->MPI_ERROR, (MPI_Count)count * basic, cancelled);
    return MPI_SUCCESS;
}

int impl_MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    lm_datatype *t = lm_datatype_get(datatype);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, "MPI_Status_set_elements_x", "invalid datatype");
    MPI_Count basic = t->basic_size > 0 ? t->basic_size : 1;
    int cancelled = (status->count_hi_and_cancelled & (int)0x80000000u) != 0;
    lm_status_set(status, status->MPI_SOURCE, status->MPI_TAG, status->MPI_ERROR, count * basic, cancelled);
    return MPI_SUCCESS;
}

int impl_MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & 0x7fffffff) | (flag ? (int)0x80000000u : 0);
    return MPI_SUCCESS;
}
