/* Predefined datatypes (from the generated table), the queries common to
 * all types, commit, free and dup; derived types are built in
 * constructors.c. */
#include "datatype/datatype.h"
#include "datatype/builtin_types_gen.h"
#include "datatype/typemap.h"
#include "obj/attr.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <stdio.h>
#include <string.h>

lm_datatype *lm_datatype_builtin;
unsigned lm_datatype_nbuiltin;
/* a layout and two segments per predefined type (pair types have two members) */
static lm_layout *builtin_layouts;
static lm_seg *builtin_segs;

/* A predefined type's layout: one leaf, or a pair's two members (the
 * padding between or after them is not data). */
static void builtin_layout(lm_datatype *t, const struct lm_builtin_type *b, int i)
{
    lm_layout *l = &builtin_layouts[i];
    int pair = b->kind == LM_TK_PAIR && b->pair_first >= 0 && b->pair_second >= 0;
    lm_layout_builtin(l, &builtin_segs[2 * i], i, b->size, pair ? b->pair_first : -1, pair ? b->pair_second : -1,
                      pair ? b->pair_offset : 0);
    t->layout = l;
    t->align = b->align;
    t->nelems = l->nelems;
}

static struct lm_attr_list **attr_list_of(int handle)
{
    lm_datatype *t = lm_datatype_get(handle);
    return t ? &t->attrs : NULL;
}

int lm_datatype_init_builtin(void)
{
    if (lm_datatype_builtin) return MPI_SUCCESS;
    lm_attr_register_kind(LM_KIND_DATATYPE, attr_list_of);
    lm_datatype_builtin = lm_calloc(LM_MEM_DATATYPE, (size_t)lm_builtin_type_count, sizeof *lm_datatype_builtin);
    builtin_layouts = lm_calloc(LM_MEM_DATATYPE, (size_t)lm_builtin_type_count, sizeof *builtin_layouts);
    builtin_segs = lm_calloc(LM_MEM_DATATYPE, 2 * (size_t)lm_builtin_type_count, sizeof *builtin_segs);
    if (!lm_datatype_builtin || !builtin_layouts || !builtin_segs) return MPI_ERR_NO_MEM;
    for (int i = 0; i < lm_builtin_type_count; i++) {
        const struct lm_builtin_type *b = &lm_builtin_types[i];
        lm_datatype *t = &lm_datatype_builtin[i];
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
        t->basic_size = b->kind == LM_TK_PAIR ? (b->pair_first >= 0 ? lm_builtin_types[b->pair_first].size : 0)
                                              : b->size;
        t->name = b->name;
        t->combiner = MPI_COMBINER_NAMED;
        builtin_layout(t, b, i);
    }
    lm_datatype_nbuiltin = (unsigned)lm_builtin_type_count;
    return MPI_SUCCESS;
}

void lm_datatype_finalize(void)
{
    lm_f90_types_finalize();
    for (int i = 0; lm_datatype_builtin && i < lm_builtin_type_count; i++) {
        lm_attr_discard(&lm_datatype_builtin[i].attrs);
        lm_free(LM_MEM_DATATYPE, lm_datatype_builtin[i].set_name);
    }
    lm_datatype_nbuiltin = 0;
    lm_free(LM_MEM_DATATYPE, lm_datatype_builtin);
    lm_free(LM_MEM_DATATYPE, builtin_layouts);
    lm_free(LM_MEM_DATATYPE, builtin_segs);
    lm_datatype_builtin = NULL;
    builtin_layouts = NULL;
    builtin_segs = NULL;
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

#define EXTENT_FN(NAME, T, LB, EXT)                              \
    int impl_MPI_##NAME(MPI_Datatype datatype, T *lb, T *extent) \
    {                                                            \
        int rc;                                                  \
        lm_datatype *t = get(datatype, "MPI_" #NAME, &rc);       \
        if (!t) return rc;                                       \
        *lb = (T)t->LB;                                          \
        *extent = (T)t->EXT;                                     \
        return MPI_SUCCESS;                                      \
    }
EXTENT_FN(Type_get_extent, MPI_Aint, lb, extent)
EXTENT_FN(Type_get_extent_x, MPI_Count, lb, extent)
EXTENT_FN(Type_get_extent_c, MPI_Count, lb, extent)
EXTENT_FN(Type_get_true_extent, MPI_Aint, true_lb, true_extent)
EXTENT_FN(Type_get_true_extent_x, MPI_Count, true_lb, true_extent)
EXTENT_FN(Type_get_true_extent_c, MPI_Count, true_lb, true_extent)

int impl_MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    /* a null handle has a name too (MPI-4.1 section 7.8) */
    if (datatype == MPI_DATATYPE_NULL) {
        *resultlen = snprintf(type_name, MPI_MAX_OBJECT_NAME, "MPI_DATATYPE_NULL");
        return MPI_SUCCESS;
    }
    int rc;
    lm_datatype *t = get(datatype, "MPI_Type_get_name", &rc);
    if (!t) return rc;
    const char *n = t->set_name ? t->set_name : t->name ? t->name : "";
    *resultlen = snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", n);
    if (*resultlen >= MPI_MAX_OBJECT_NAME) *resultlen = MPI_MAX_OBJECT_NAME - 1;
    return MPI_SUCCESS;
}

/* Any type may be renamed, predefined ones included; the name is kept
 * truncated to MPI_MAX_OBJECT_NAME - 1 characters. */
int impl_MPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    int rc;
    lm_datatype *t = get(datatype, "MPI_Type_set_name", &rc);
    if (!t) return rc;
    size_t n = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1);
    char *copy = lm_malloc(LM_MEM_DATATYPE, n + 1);
    if (!copy) return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_Type_set_name", "out of memory");
    memcpy(copy, type_name, n);
    copy[n] = '\0';
    lm_free(LM_MEM_DATATYPE, t->set_name);
    t->set_name = copy;
    return MPI_SUCCESS;
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
    int rc = lm_attr_delete_all(LM_KIND_DATATYPE, *datatype, &t->attrs);
    if (rc) return lm_err_noobj(rc, "MPI_Type_free", "an attribute delete callback failed");
    /* requests in flight and types built on it keep their own references */
    lm_datatype_release(t);
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
    t->set_name = NULL;
    t->attrs = NULL;
    rc = lm_datatype_dup_layout(t, o);
    if (rc) {
        lm_object_free(t);
        return lm_err_noobj(rc, "MPI_Type_dup", "out of memory");
    }
    rc = lm_attr_copy(LM_KIND_DATATYPE, oldtype, o->attrs, t->obj.handle, &t->attrs);
    if (rc) {
        lm_datatype_release(t);
        *newtype = MPI_DATATYPE_NULL; /* no type: not a handle that dangles */
        return lm_err_noobj(rc, "MPI_Type_dup", "an attribute copy callback failed");
    }
    *newtype = t->obj.handle;
    return MPI_SUCCESS;
}
