/* Predefined datatypes (from the generated table) and the contiguous
 * derivations this version supports; general derived types come later. */
#include "datatype/datatype.h"
#include "datatype/builtin_types_gen.h"
#include "core/lm_error.h"
#include "core/lm_mem.h"
#include "binding/impl_gen.h"
#include <stdio.h>
#include <string.h>

static lm_datatype *builtin;

int lm_datatype_init_builtin(void)
{
    if (builtin) return MPI_SUCCESS;
    builtin = lm_calloc(LM_MEM_DATATYPE, (size_t)lm_builtin_type_count, sizeof *builtin);
    if (!builtin) return MPI_ERR_NO_MEM;
    for (int i = 0; i < lm_builtin_type_count; i++) {
        const struct lm_builtin_type *b = &lm_builtin_types[i];
        lm_datatype *t = &builtin[i];
        t->obj.handle = LM_HANDLE(LM_KIND_DATATYPE, LM_TIER_BUILTIN, i);
        t->obj.refcount = 1;
        t->size = b->size;
        t->lb = 0;
        t->extent = b->extent ? b->extent : b->size;
        t->true_lb = 0;
        /* a pair's true extent ends with its second member, before the
         * trailing padding that its extent includes */
        t->true_extent = b->kind == LM_TK_PAIR && b->pair_second >= 0
                             ? b->pair_offset + lm_builtin_types[b->pair_second].size
                             : t->extent;
        t->committed = true;
        /* every predefined type (pair types with their padding included) is
         * moved as extent-sized elements */
        t->contiguous = true;
        t->predefined = true;
        t->basic_id = i;
        t->basic_size = b->kind == LM_TK_PAIR ? (b->pair_first >= 0 ? lm_builtin_types[b->pair_first].size : 0) : b->size;
        t->name = b->name;
        t->combiner = MPI_COMBINER_NAMED;
    }
    return MPI_SUCCESS;
}

void lm_datatype_finalize(void)
{
    lm_free(LM_MEM_DATATYPE, builtin);
    builtin = NULL;
}

lm_datatype *lm_datatype_get(MPI_Datatype h)
{
    if (LM_HANDLE_KIND(h) != LM_KIND_DATATYPE) return NULL;
    if (LM_HANDLE_TIER(h) == LM_TIER_BUILTIN) {
        unsigned i = LM_HANDLE_INDEX(h);
        return (builtin && i < (unsigned)lm_builtin_type_count) ? &builtin[i] : NULL;
    }
    return lm_object_lookup(h, LM_KIND_DATATYPE);
}

static lm_datatype *get(MPI_Datatype h, const char *fname, int *rc)
{
    lm_datatype *t = lm_datatype_get(h);
    *rc = t ? MPI_SUCCESS : lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    return t;
}

int impl_MPI_Type_size(MPI_Datatype datatype, int *size)
{
    int rc;
    lm_datatype *t = get(datatype, "MPI_Type_size", &rc);
    if (!t) return rc;
    *size = t->size > 2147483647 ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}

int impl_MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    int rc;
    lm_datatype *t = get(datatype, "MPI_Type_size_x", &rc);
    if (!t) return rc;
    *size = t->size;
    return MPI_SUCCESS;
}

int impl_MPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    int rc;
    lm_datatype *t = get(datatype, "MPI_Type_size_c", &rc);
    if (!t) return rc;
    *size = t->size;
    return MPI_SUCCESS;
}

#define EXTENT_FN(NAME, T, LB, EXT)                                          \
    int impl_MPI_##NAME(MPI_Datatype datatype, T *lb, T *extent)             \
    {                                                                        \
        int rc;                                                              \
        lm_datatype *t = get(datatype, "MPI_" #NAME, &rc);                   \
        if (!t) return rc;                                                   \
        *lb = (T)t->LB;                                                      \
        *extent = (T)t->EXT;                                                 \
        return MPI_SUCCESS;                                                  \
    }
EXTENT_FN(Type_get_extent, MPI_Aint, lb, extent)
EXTENT_FN(Type_get_extent_x, MPI_Count, lb, extent)
EXTENT_FN(Type_get_extent_c, MPI_Count, lb, extent)
EXTENT_FN(Type_get_true_extent, MPI_Aint, true_lb, true_extent)
EXTENT_FN(Type_get_true_extent_x, MPI_Count, true_lb, true_extent)
EXTENT_FN(Type_get_true_extent_c, MPI_Count, true_lb, true_extent)

int impl_MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    int rc;
    lm_datatype *t = get(datatype, "MPI_Type_get_name", &rc);
    if (!t) return rc;
    const char *n = t->name ? t->name : "";
    *resultlen = snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", n);
    if (*resultlen >= MPI_MAX_OBJECT_NAME) *resultlen = MPI_MAX_OBJECT_NAME - 1;
    return MPI_SUCCESS;
}

static int contiguous(const char *fname, MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int rc;
    lm_datatype *o = get(oldtype, fname, &rc);
    if (!o) return rc;
    if (!o->contiguous)
        return lm_err_noobj(MPI_ERR_UNSUPPORTED_OPERATION, fname,
                            "derived types over non-contiguous types are not supported in this version");
    lm_datatype *t = lm_object_alloc(LM_KIND_DATATYPE, sizeof *t);
    if (!t) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    t->size = count * o->size;
    t->lb = 0;
    t->extent = count * o->extent;
    t->true_lb = o->true_lb;
    t->true_extent = count > 0 ? (count - 1) * o->extent + o->true_extent : 0;
    t->contiguous = true;
    t->basic_id = -1;
    t->basic_size = o->basic_size;
    t->combiner = MPI_COMBINER_CONTIGUOUS;
    t->name = NULL;
    *newtype = t->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return contiguous("MPI_Type_contiguous", count, oldtype, newtype);
}

int impl_MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return contiguous("MPI_Type_contiguous_c", count, oldtype, newtype);
}

int impl_MPI_Type_commit(MPI_Datatype *datatype)
{
    int rc;
    lm_datatype *t = get(*datatype, "MPI_Type_commit", &rc);
    if (!t) return rc;
    t->committed = true;
    return MPI_SUCCESS;
}

int impl_MPI_Type_free(MPI_Datatype *datatype)
{
    lm_datatype *t = lm_datatype_get(*datatype);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, "MPI_Type_free", "invalid datatype");
    if (t->predefined) return lm_err_noobj(MPI_ERR_TYPE, "MPI_Type_free", "cannot free a predefined datatype");
    lm_object_free(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int impl_MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int rc;
    lm_datatype *o = get(oldtype, "MPI_Type_dup", &rc);
    if (!o) return rc;
    lm_datatype *t = lm_object_alloc(LM_KIND_DATATYPE, sizeof *t);
    if (!t) return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_Type_dup", "out of memory");
    lm_object hdr = t->obj;
    *t = *o;
    t->obj = hdr;
    t->predefined = false;
    t->committed = true;
    t->combiner = MPI_COMBINER_DUP;
    t->name = NULL;
    *newtype = t->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
                               int *combiner)
{
    int rc;
    lm_datatype *t = get(datatype, "MPI_Type_get_envelope", &rc);
    if (!t) return rc;
    *combiner = t->combiner;
    *num_integers = t->combiner == MPI_COMBINER_CONTIGUOUS ? 1 : 0;
    *num_addresses = 0;
    *num_datatypes = t->combiner == MPI_COMBINER_NAMED ? 0 : 1;
    return MPI_SUCCESS;
}
