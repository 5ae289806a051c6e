/* MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size for the
 * "external32" representation: big-endian, IEEE floats, fixed sizes. The
 * data is first packed natively (typemap.c), then each basic element of the
 * type's leaves is converted in stream order; the only size that differs from
 * this machine's is MPI_LONG / MPI_UNSIGNED_LONG (4 bytes in external32).
 * Types with x87 long doubles inside have no conversion here and are
 * refused. */
#include "datatype/datatype.h"
#include "datatype/builtin_types_gen.h"
#include "datatype/typemap.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <stdint.h>
#include <string.h>

/* external32 bytes of one basic element; 0 when there is no conversion */
static MPI_Count ext_size(int basic)
{
    const struct lm_builtin_type *b = &lm_builtin_types[basic];
    if (basic == LM_BT_LONG || basic == LM_BT_UNSIGNED_LONG) return 4;
    if ((b->kind == LM_TK_FLOAT && b->size > 8) || (b->kind == LM_TK_COMPLEX && b->size > 16)) return 0;
    return b->size;
}

/* the byte-swapped unit: a complex number's halves are swapped each */
static size_t swap_unit(int basic)
{
    const struct lm_builtin_type *b = &lm_builtin_types[basic];
    return b->kind == LM_TK_COMPLEX ? (size_t)b->size / 2 : (size_t)b->size;
}

static void swap_copy(unsigned char *dst, const unsigned char *src, size_t size, size_t unit)
{
    for (size_t o = 0; o < size; o += unit)
        for (size_t i = 0; i < unit; i++) dst[o + i] = src[o + unit - 1 - i];
}

static MPI_Count leaf_ext_bytes(int basic, MPI_Count elems, void *arg)
{
    MPI_Count s = ext_size(basic);
    if (!s) {
        *(int *)arg = basic;
        return -1;
    }
    return s * elems;
}

static int check(const char *fname, const char *datarep, lm_datatype *t, MPI_Count *per_elem)
{
    if (strcmp(datarep, "external32") != 0)
        return lm_err_noobj(MPI_ERR_ARG, fname, "data representation \"%s\" is not known (only external32)", datarep);
    int refused = -1;
    MPI_Count n = lm_typemap_fold(t, leaf_ext_bytes, &refused);
    if (n < 0)
        return lm_err_noobj(MPI_ERR_UNSUPPORTED_OPERATION, fname, "%s has no external32 conversion in this version",
                            lm_builtin_types[refused].name);
    *per_elem = n;
    return MPI_SUCCESS;
}

/* Where a conversion has got to in the two streams. */
typedef struct conversion {
    unsigned char *native, *ext;
    int to_ext;
} conversion;

/* One leaf's runs, in stream order: where they lie in memory does not
 * matter here, only their type and length. */
static void convert_leaf(void *arg, MPI_Aint disp, MPI_Count size, int basic, MPI_Count reps, MPI_Aint stride)
{
    (void)disp, (void)stride;
    conversion *cv = arg;
    size_t ns = (size_t)lm_builtin_types[basic].size, es = (size_t)ext_size(basic);
    MPI_Count n = size / (MPI_Count)ns * reps;
    for (MPI_Count k = 0; k < n; k++, cv->native += ns, cv->ext += es) {
        if (ns == es) {
            if (cv->to_ext) swap_copy(cv->ext, cv->native, ns, swap_unit(basic));
            else swap_copy(cv->native, cv->ext, ns, swap_unit(basic));
            continue;
        }
        /* a 64-bit long as 32 bits: truncated out, extended back in */
        if (cv->to_ext) {
            int64_t v;
            memcpy(&v, cv->native, 8);
            uint32_t w = (uint32_t)v;
            unsigned char be[4] = {(unsigned char)(w >> 24), (unsigned char)(w >> 16), (unsigned char)(w >> 8),
                                   (unsigned char)w};
            memcpy(cv->ext, be, 4);
        } else {
            const unsigned char *e = cv->ext;
            uint32_t w = (uint32_t)e[0] << 24 | (uint32_t)e[1] << 16 | (uint32_t)e[2] << 8 | e[3];
            int64_t v = basic == LM_BT_LONG ? (int64_t)(int32_t)w : (int64_t)w;
            memcpy(cv->native, &v, 8);
        }
    }
}

/* Convert count elements between the native packed stream and external32. */
static void convert(const lm_datatype *t, MPI_Count count, unsigned char *native, unsigned char *ext, int to_ext)
{
    conversion cv = {native, ext, to_ext};
    lm_typemap_walk(t, count, convert_leaf, &cv);
}

static int pack_external(const char *fname, const char *datarep, const void *inbuf, MPI_Count incount, MPI_Datatype dt,
                         void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    MPI_Count per;
    int rc = check(fname, datarep, t, &per);
    if (rc) return rc;
    MPI_Count need = per * incount;
    if (*position < 0 || *position > outsize || need > outsize - *position)
        return lm_err_noobj(MPI_ERR_TRUNCATE, fname, "%lld bytes do not fit at position %lld of %lld", (long long)need,
                            (long long)*position, (long long)outsize);
    size_t nlen = (size_t)(incount * t->size);
    unsigned char *native = lm_malloc(LM_MEM_DATATYPE, nlen ? nlen : 1);
    if (!native) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    lm_typemap_pack(t, inbuf, incount, 0, native, nlen);
    convert(t, incount, native, (unsigned char *)outbuf + *position, 1);
    lm_free(LM_MEM_DATATYPE, native);
    *position += need;
    return MPI_SUCCESS;
}

static int unpack_external(const char *fname, const char *datarep, const void *inbuf, MPI_Count insize,
                           MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype dt)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    MPI_Count per;
    int rc = check(fname, datarep, t, &per);
    if (rc) return rc;
    MPI_Count need = per * outcount;
    if (*position < 0 || *position > insize || need > insize - *position)
        return lm_err_noobj(MPI_ERR_TRUNCATE, fname, "%lld bytes wanted at position %lld of %lld", (long long)need,
                            (long long)*position, (long long)insize);
    size_t nlen = (size_t)(outcount * t->size);
    unsigned char *native = lm_malloc(LM_MEM_DATATYPE, nlen ? nlen : 1);
    if (!native) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    convert(t, outcount, native, (unsigned char *)inbuf + *position, 0);
    lm_typemap_unpack(t, outbuf, outcount, 0, native, nlen);
    lm_free(LM_MEM_DATATYPE, native);
    *position += need;
    return MPI_SUCCESS;
}

int impl_MPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                           MPI_Aint outsize, MPI_Aint *position)
{
    MPI_Count pos = *position;
    int rc = pack_external("MPI_Pack_external", datarep, inbuf, incount, datatype, outbuf, outsize, &pos);
    if (rc == MPI_SUCCESS) *position = (MPI_Aint)pos;
    return rc;
}

int impl_MPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                             void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    return pack_external("MPI_Pack_external_c", datarep, inbuf, incount, datatype, outbuf, outsize, position);
}

int impl_MPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf,
                             int outcount, MPI_Datatype datatype)
{
    MPI_Count pos = *position;
    int rc = unpack_external("MPI_Unpack_external", datarep, inbuf, insize, &pos, outbuf, outcount, datatype);
    if (rc == MPI_SUCCESS) *position = (MPI_Aint)pos;
    return rc;
}

int impl_MPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position,
                               void *outbuf, MPI_Count outcount, MPI_Datatype datatype)
{
    return unpack_external("MPI_Unpack_external_c", datarep, inbuf, insize, position, outbuf, outcount, datatype);
}

static int external_size(const char *fname, const char *datarep, MPI_Count incount, MPI_Datatype dt, MPI_Count *size)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    MPI_Count per;
    int rc = check(fname, datarep, t, &per);
    if (rc) return rc;
    *size = per * incount;
    return MPI_SUCCESS;
}

int impl_MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    MPI_Count s = 0;
    int rc = external_size("MPI_Pack_external_size", datarep, incount, datatype, &s);
    if (rc == MPI_SUCCESS) *size = (MPI_Aint)s;
    return rc;
}

int impl_MPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype, MPI_Count *size)
{
    return external_size("MPI_Pack_external_size_c", datarep, incount, datatype, size);
}
