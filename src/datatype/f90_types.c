/* Datatypes chosen by property rather than by name: the Fortran 90
 * parameterized types (MPI_Type_create_f90_*) and MPI_Type_match_size
 * (MPI_Type_get_value_index is in value_index.c). The sizes are those of the sized Fortran types
 * (MPI_INTEGERn, MPI_REALn, MPI_COMPLEXn), picked as gfortran's
 * SELECTED_INT_KIND / SELECTED_REAL_KIND would.
 *
 * MPI_Type_match_size answers with named
 * predefined handles. A parameterized type is predefined too (it cannot be
 * freed, and one (p, r) always gives the same handle) but not named: its
 * envelope says MPI_COMBINER_F90_* with p and r as its contents (MPI-4.1
 * section 19.1.9). It is a copy of the sized type it stands for, sharing
 * that type's layout, kept until the runtime ends. */
#include "datatype/datatype.h"
#include "obj/attr.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "util/lm_state.h"
#include "api/impl_gen.h"
#include <float.h>
#include <string.h>

/* Decimal precision and exponent range of the real kinds (IEEE binary32,
 * binary64, and binary128 where the compiler has it, else long double). */
#if defined(__SIZEOF_FLOAT128__)
#define REAL16_PRECISION 33
#define REAL16_RANGE 4931
#else
#define REAL16_PRECISION LDBL_DIG
#define REAL16_RANGE LDBL_MAX_10_EXP
#endif

static const struct {
    int precision, range;
    MPI_Datatype real, complex;
} real_kinds[] = {
    {6, 37, MPI_REAL4, MPI_COMPLEX8},
    {15, 307, MPI_REAL8, MPI_COMPLEX16},
    {REAL16_PRECISION, REAL16_RANGE, MPI_REAL16, MPI_COMPLEX32},
};

static const struct {
    int range; /* decimal digits every value of that many digits fits */
    int size;
    MPI_Datatype type;
} int_kinds[] = {
    {2, 1, MPI_INTEGER1},    {4, 2, MPI_INTEGER2}, {9, 4, MPI_INTEGER4}, {18, 8, MPI_INTEGER8},
#if defined(__SIZEOF_INT128__)
    {38, 16, MPI_INTEGER16},
#endif
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The parameterized types handed out so far. */
static MPI_Datatype *made;
static int nmade, capmade;

void lm_f90_types_finalize(void)
{
    for (int i = 0; i < nmade; i++) {
        lm_datatype *t = lm_datatype_get(made[i]);
        if (!t) continue;
        lm_attr_discard(&t->attrs);
        lm_free(LM_MEM_DATATYPE, t->args);
        lm_free(LM_MEM_DATATYPE, t->types);
        lm_free(LM_MEM_DATATYPE, t->set_name);
        lm_object_free(t);
    }
    lm_free(LM_MEM_DATATYPE, made);
    made = NULL;
    nmade = capmade = 0;
}

/* The parameterized type for (combiner, p, r) standing for named type
 * `named`: the one made before, or a new one. */
static int parameterized(const char *fname, int combiner, int p, int r, MPI_Datatype named, MPI_Datatype *out)
{
    int nargs = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    MPI_Count args[2] = {nargs == 1 ? r : p, r};
    for (int i = 0; i < nmade; i++) {
        lm_datatype *t = lm_datatype_get(made[i]);
        if (t && t->combiner == combiner && t->nargs == nargs && !memcmp(t->args, args, (size_t)nargs * sizeof *args)) {
            *out = made[i];
            return MPI_SUCCESS;
        }
    }
    if (nmade == capmade) {
        int cap = capmade ? 2 * capmade : 8;
        MPI_Datatype *m = lm_realloc(LM_MEM_DATATYPE, made, (size_t)cap * sizeof *m);
        if (!m) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
        made = m;
        capmade = cap;
    }
    lm_datatype *o = lm_datatype_get(named);
    lm_datatype *t = lm_object_alloc(LM_KIND_DATATYPE, sizeof *t);
    MPI_Count *a = lm_malloc(LM_MEM_DATATYPE, sizeof args);
    MPI_Datatype *types = lm_malloc(LM_MEM_DATATYPE, sizeof *types);
    if (!o || !t || !a || !types) {
        if (t) lm_object_free(t);
        lm_free(LM_MEM_DATATYPE, a);
        lm_free(LM_MEM_DATATYPE, types);
        return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    }
    lm_object hdr = t->obj;
    *t = *o; /* size, bounds, basic element, layout (shared), name */
    t->obj = hdr;
    t->obj.refcount = 1;
    t->attrs = NULL;
    t->set_name = NULL;
    t->combiner = combiner;
    memcpy(a, args, sizeof args);
    t->args = a;
    t->nargs = nargs;
    t->types = types;
    t->ntypes = 0;
    t->large_args = false;
    made[nmade++] = t->obj.handle;
    *out = t->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    const char *fname = "MPI_Type_create_f90_integer";
    for (int i = 0; i < COUNT(int_kinds); i++)
        if ((r == MPI_UNDEFINED ? 0 : r) <= int_kinds[i].range)
            return parameterized(fname, MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, int_kinds[i].type, newtype);
    return lm_err_noobj(MPI_ERR_ARG, fname, "no integer type has a decimal range of %d", r);
}

static int real_kind(int p, int r)
{
    p = p == MPI_UNDEFINED ? 0 : p;
    r = r == MPI_UNDEFINED ? 0 : r;
    for (int i = 0; i < COUNT(real_kinds); i++)
        if (p <= real_kinds[i].precision && r <= real_kinds[i].range) return i;
    return -1;
}

int impl_MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    int k = real_kind(p, r);
    if (k < 0)
        return lm_err_noobj(MPI_ERR_ARG, "MPI_Type_create_f90_real",
                            "no real type has a precision of %d and a decimal range of %d", p, r);
    return parameterized("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, p, r, real_kinds[k].real, newtype);
}

int impl_MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    int k = real_kind(p, r);
    if (k < 0)
        return lm_err_noobj(MPI_ERR_ARG, "MPI_Type_create_f90_complex",
                            "no complex type has a precision of %d and a decimal range of %d", p, r);
    return parameterized("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, p, r, real_kinds[k].complex, newtype);
}

int impl_MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    const char *fname = "MPI_Type_match_size";
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
        for (int i = 0; i < COUNT(int_kinds); i++)
            if (int_kinds[i].size == size) {
                *datatype = int_kinds[i].type;
                return MPI_SUCCESS;
            }
        break;
    case MPI_TYPECLASS_REAL:
    case MPI_TYPECLASS_COMPLEX: {
        static const int real_sizes[] = {4, 8, 16};
        for (int i = 0; i < COUNT(real_kinds); i++) {
            int s = real_sizes[i] * (typeclass == MPI_TYPECLASS_COMPLEX ? 2 : 1);
            if (s == size) {
                *datatype = typeclass == MPI_TYPECLASS_REAL ? real_kinds[i].real : real_kinds[i].complex;
                return MPI_SUCCESS;
            }
        }
        break;
    }
    default: return lm_err_noobj(MPI_ERR_ARG, fname, "typeclass %d is not an MPI_TYPECLASS_* value", typeclass);
    }
    return lm_err_noobj(MPI_ERR_ARG, fname, "no type of this class has size %d", size);
}
