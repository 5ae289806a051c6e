/* Status queries. The count is kept in bytes; it is converted to elements
 * of the datatype the caller asks about. */
#include "pt2pt/request.h"
#include "datatype/datatype.h"
#include "util/lm_error.h"
#include "api/impl_gen.h"

static MPI_Count status_bytes(const MPI_Status *st)
{
    return (MPI_Count)(unsigned)st->count_lo | ((MPI_Count)(st->count_hi_and_cancelled & 0x7fffffff) << 32);
}

static int count_of(const char *fname, const MPI_Status *st, MPI_Datatype dt, MPI_Count *out)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    MPI_Count bytes = status_bytes(st);
    /* dense data moves as extent-sized elements, any other as its packed
     * stream of size bytes per element */
    MPI_Count unit = lm_datatype_dense(t) ? t->extent : t->size;
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
    MPI_Count c = 0;
    int rc = count_of("MPI_Get_count", status, datatype, &c);
    return rc ? rc : store_int("MPI_Get_count", c, count);
}

int impl_MPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return count_of("MPI_Get_count_c", status, datatype, count);
}

/* Basic elements in the received bytes, a partly received element
 * included (the type's runs of basic elements in packed order). */
static int elements_of(const char *fname, const MPI_Status *st, MPI_Datatype dt, MPI_Count *out)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    MPI_Count bytes = status_bytes(st);
    if (t->size == 0) {
        *out = 0;
        return MPI_SUCCESS;
    }
    MPI_Count n = lm_typemap_elements(t, bytes);
    *out = n < 0 ? MPI_UNDEFINED : n;
    return MPI_SUCCESS;
}

int impl_MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count c = 0;
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

static int set_elements(const char *fname, MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    lm_datatype *t = lm_datatype_get(datatype);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    /* the bytes that hold count basic elements of the type's stream */
    int cancelled = (status->count_hi_and_cancelled & (int)0x80000000u) != 0;
    lm_status_set(status, status->MPI_SOURCE, status->MPI_TAG, status->MPI_ERROR, lm_typemap_element_bytes(t, count),
                  cancelled);
    return MPI_SUCCESS;
}

int impl_MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return set_elements("MPI_Status_set_elements", status, datatype, count);
}

int impl_MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_x", status, datatype, count);
}

int impl_MPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_c", status, datatype, count);
}

/* The MPI-4.1 accessors of the public status fields. */
int impl_MPI_Status_get_source(const MPI_Status *status, int *source)
{
    *source = status->MPI_SOURCE;
    return MPI_SUCCESS;
}

int impl_MPI_Status_get_tag(const MPI_Status *status, int *tag)
{
    *tag = status->MPI_TAG;
    return MPI_SUCCESS;
}

int impl_MPI_Status_get_error(const MPI_Status *status, int *err)
{
    *err = status->MPI_ERROR;
    return MPI_SUCCESS;
}

int impl_MPI_Status_set_source(MPI_Status *status, int source)
{
    status->MPI_SOURCE = source;
    return MPI_SUCCESS;
}

int impl_MPI_Status_set_tag(MPI_Status *status, int tag)
{
    status->MPI_TAG = tag;
    return MPI_SUCCESS;
}

int impl_MPI_Status_set_error(MPI_Status *status, int err)
{
    status->MPI_ERROR = err;
    return MPI_SUCCESS;
}

int impl_MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & 0x7fffffff) | (flag ? (int)0x80000000u : 0);
    return MPI_SUCCESS;
}
