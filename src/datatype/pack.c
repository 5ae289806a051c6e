/* MPI_Pack, MPI_Unpack and MPI_Pack_size: the packed form is the type's
 * packed stream (typemap.c), the same bytes point-to-point sends, so a
 * packed buffer can be sent as MPI_PACKED and received with the type. */
#include "datatype/datatype.h"
#include "util/lm_error.h"
#include "api/impl_gen.h"

static int pack(const char *fname, const void *inbuf, MPI_Count incount, MPI_Datatype dt, void *outbuf,
                MPI_Count outsize, MPI_Count *position)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    MPI_Count need = incount * t->size;
    if (*position < 0 || *position > outsize || need > outsize - *position)
        return lm_err_noobj(MPI_ERR_TRUNCATE, fname, "%lld bytes do not fit at position %lld of %lld", (long long)need,
                            (long long)*position, (long long)outsize);
    lm_typemap_pack(t, inbuf, incount, 0, (char *)outbuf + *position, (size_t)need);
    *position += need;
    return MPI_SUCCESS;
}

static int unpack(const char *fname, const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                  MPI_Count outcount, MPI_Datatype dt)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    MPI_Count need = outcount * t->size;
    if (*position < 0 || *position > insize || need > insize - *position)
        return lm_err_noobj(MPI_ERR_TRUNCATE, fname, "%lld bytes wanted at position %lld of %lld", (long long)need,
                            (long long)*position, (long long)insize);
    lm_typemap_unpack(t, outbuf, outcount, 0, (const char *)inbuf + *position, (size_t)need);
    *position += need;
    return MPI_SUCCESS;
}

int impl_MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
                  MPI_Comm comm)
{
    (void)comm;
    MPI_Count pos = *position;
    int rc = pack("MPI_Pack", inbuf, incount, datatype, outbuf, outsize, &pos);
    if (rc == MPI_SUCCESS) *position = (int)pos;
    return rc;
}

int impl_MPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                    MPI_Count *position, MPI_Comm comm)
{
    (void)comm;
    return pack("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize, position);
}

int impl_MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
                    MPI_Comm comm)
{
    (void)comm;
    MPI_Count pos = *position;
    int rc = unpack("MPI_Unpack", inbuf, insize, &pos, outbuf, outcount, datatype);
    if (rc == MPI_SUCCESS) *position = (int)pos;
    return rc;
}

int impl_MPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                      MPI_Datatype datatype, MPI_Comm comm)
{
    (void)comm;
    return unpack("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount, datatype);
}

int impl_MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    (void)comm;
    lm_datatype *t = lm_datatype_get(datatype);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, "MPI_Pack_size", "invalid datatype");
    MPI_Count n = incount * t->size;
    *size = n > 2147483647 ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}

int impl_MPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    (void)comm;
    lm_datatype *t = lm_datatype_get(datatype);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, "MPI_Pack_size_c", "invalid datatype");
    *size = incount * t->size;
    return MPI_SUCCESS;
}
