/* Derived datatype constructors, MPI_Type_get_envelope/get_contents and
 * MPI_Get_address. Each constructor lays out copies of its old types
 * through the typemap builder (typemap.h): regular repetitions (vector,
 * contiguous, subarray and darray dimensions) as one repeated piece each,
 * so that a type's layout stays as small as the calls that made it. The arguments are kept as
 * given, in the standard's order, for get_contents; the old types they name
 * are held by reference so that freeing them early changes nothing. */
#include "datatype/datatype.h"
#include "datatype/typemap.h"
#include "datatype/builtin_types_gen.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <stdint.h>
#include <string.h>

void lm_datatype_release(lm_datatype *t)
{
    if (!t || t->predefined) return;
    if (--t->obj.refcount > 0) return;
    lm_layout_release(t->layout);
    lm_free(LM_MEM_DATATYPE, t->args);
    for (MPI_Count i = 0; i < t->ntypes; i++) lm_datatype_release(lm_datatype_get(t->types[i]));
    lm_free(LM_MEM_DATATYPE, t->types);
    lm_free(LM_MEM_DATATYPE, t->set_name);
    lm_object_free(t);
}

static void retain(lm_datatype *t)
{
    if (!t->predefined) t->obj.refcount++;
}

/* Keep the constructor's arguments and hold its old types. */
static int set_contents(lm_datatype *t, bool large, MPI_Count nargs, const MPI_Count *args, MPI_Count ntypes,
                        const MPI_Datatype *types)
{
    t->args = nargs ? lm_malloc(LM_MEM_DATATYPE, (size_t)nargs * sizeof *args) : NULL;
    t->types = lm_malloc(LM_MEM_DATATYPE, (size_t)(ntypes ? ntypes : 1) * sizeof *types);
    if ((nargs && !t->args) || !t->types) return MPI_ERR_NO_MEM;
    if (nargs) memcpy(t->args, args, (size_t)nargs * sizeof *args);
    memcpy(t->types, types, (size_t)ntypes * sizeof *types);
    t->nargs = nargs;
    t->ntypes = ntypes;
    t->large_args = large;
    for (MPI_Count i = 0; i < ntypes; i++) retain(lm_datatype_get(types[i]));
    return MPI_SUCCESS;
}

int lm_datatype_dup_layout(lm_datatype *t, lm_datatype *o)
{
    t->args = NULL;
    t->types = NULL;
    t->nargs = t->ntypes = 0;
    t->large_args = false;
    t->layout = o->layout; /* shared: layouts never change once made */
    lm_layout_retain(t->layout);
    t->basic_id = -1;
    MPI_Datatype h = o->obj.handle;
    return set_contents(t, false, 0, NULL, 1, &h);
}

static lm_datatype *old_type(MPI_Datatype h, const char *fname, int *rc)
{
    lm_datatype *t = lm_datatype_get(h);
    *rc = t ? MPI_SUCCESS : lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    return t;
}

/* The new type from a builder, its arguments and old types. */
static int make(const char *fname, int combiner, lm_tm_builder *b, bool large, MPI_Count nargs, const MPI_Count *args,
                MPI_Count ntypes, const MPI_Datatype *types, bool is_struct, MPI_Datatype *newtype)
{
    lm_datatype *t = lm_object_alloc(LM_KIND_DATATYPE, sizeof *t);
    if (!t) {
        lm_tm_discard(b);
        return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    }
    t->obj.refcount = 1;
    int rc = lm_tm_finish(b, t);
    if (rc == MPI_SUCCESS) rc = set_contents(t, large, nargs, args, ntypes, types);
    if (rc != MPI_SUCCESS) {
        lm_datatype_release(t);
        return lm_err_noobj(rc, fname, "out of memory");
    }
    /* a struct's extent is padded to the strictest alignment inside, as a C
     * struct is, unless bounds were set explicitly */
    if (is_struct && !t->explicit_bounds && t->align > 1 && t->extent % t->align)
        t->extent += t->align - t->extent % t->align;
    t->combiner = combiner;
    t->basic_id = -1;
    t->basic_size = t->layout->basic >= 0 ? (int)lm_builtin_types[t->layout->basic].size : 0;
    t->contiguous = t->size == t->extent && (t->size == 0 || t->layout->dense);
    t->committed = false;
    *newtype = t->obj.handle;
    return MPI_SUCCESS;
}

/* ---- the layouts -------------------------------------------------------- */

/* count blocks of old: block i has bl[i] (or bl0) copies at byte
 * displacement disp[i] (or i * stride). Equal blocks at equal distances
 * are one block repeated, however many there are. */
static void lay_blocks(lm_tm_builder *b, const lm_datatype *old, MPI_Count count, const MPI_Count *bl, MPI_Count bl0,
                       const MPI_Aint *disp, MPI_Aint stride)
{
    if (disp || bl) {
        for (MPI_Count i = 0; i < count && !b->failed; i++)
            lm_tm_add(b, old, disp ? disp[i] : (MPI_Aint)i * stride, bl ? bl[i] : bl0);
        return;
    }
    lm_tm_builder one = {0};
    lm_tm_add(&one, old, 0, bl0);
    lm_tm_piece block;
    if (lm_tm_seal(&one, &block)) {
        b->failed = true;
        return;
    }
    lm_tm_add_piece(b, &block, 0, count, stride);
    lm_tm_piece_release(&block);
}

static int check_counts(const char *fname, MPI_Count n, const MPI_Count *v)
{
    for (MPI_Count i = 0; i < n; i++)
        if (v[i] < 0) return lm_err_noobj(MPI_ERR_ARG, fname, "negative block length");
    return MPI_SUCCESS;
}

/* Arguments arrive as int, MPI_Aint or MPI_Count arrays; they are widened
 * into one MPI_Count list in the standard's order. */
typedef struct arglist {
    MPI_Count *v;
    MPI_Count n;
} arglist;

static int args_alloc(arglist *a, MPI_Count n)
{
    a->n = 0;
    a->v = lm_malloc(LM_MEM_DATATYPE, (size_t)(n ? n : 1) * sizeof *a->v);
    return a->v ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}
#define ARGS_PUSH_ARRAY(list_, arr_, len_)                                                          \
    do {                                                                                            \
        for (MPI_Count i_ = 0; i_ < (len_); i_++) (list_)->v[(list_)->n++] = (MPI_Count)(arr_)[i_]; \
    } while (0)

/* The general engine behind vector, indexed and their h- and block forms:
 * args already hold the arguments; bl, disp point into them. */
static int blocks_type(const char *fname, int combiner, bool large, arglist *a, MPI_Count count, const MPI_Count *bl,
                       MPI_Count bl0, const MPI_Count *disp, MPI_Aint stride, bool disp_in_elements,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int rc;
    lm_datatype *old = old_type(oldtype, fname, &rc);
    if (!old) goto out;
    if (bl0 < 0 || (bl && (rc = check_counts(fname, count, bl)) != MPI_SUCCESS)) {
        if (rc == MPI_SUCCESS) rc = lm_err_noobj(MPI_ERR_ARG, fname, "negative block length");
        goto out;
    }
    MPI_Aint *d = NULL;
    if (disp) {
        d = lm_malloc(LM_MEM_DATATYPE, (size_t)(count ? count : 1) * sizeof *d);
        if (!d) {
            rc = lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
            goto out;
        }
        for (MPI_Count i = 0; i < count; i++) d[i] = (MPI_Aint)disp[i] * (disp_in_elements ? old->extent : 1);
    }
    lm_tm_builder b = {0};
    lay_blocks(&b, old, count, bl, bl0, d, stride);
    lm_free(LM_MEM_DATATYPE, d);
    rc = make(fname, combiner, &b, large, a->n, a->v, 1, &oldtype, false, newtype);
out:
    lm_free(LM_MEM_DATATYPE, a->v);
    return rc;
}

/* ---- contiguous, vector, hvector ---------------------------------------- */

static int contiguous(const char *fname, bool large, MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    arglist a;
    if (args_alloc(&a, 1)) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    a.v[a.n++] = count;
    return blocks_type(fname, MPI_COMBINER_CONTIGUOUS, large, &a, 1, NULL, count, NULL, 0, false, oldtype, newtype);
}

int impl_MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return contiguous("MPI_Type_contiguous", false, count, oldtype, newtype);
}

int impl_MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return contiguous("MPI_Type_contiguous_c", true, count, oldtype, newtype);
}

static int vector(const char *fname, int combiner, bool large, MPI_Count count, MPI_Count bl, MPI_Count stride,
                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int rc;
    lm_datatype *old = old_type(oldtype, fname, &rc);
    if (!old) return rc;
    arglist a;
    if (args_alloc(&a, 3)) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    a.v[a.n++] = count;
    a.v[a.n++] = bl;
    a.v[a.n++] = stride;
    MPI_Aint s = combiner == MPI_COMBINER_VECTOR ? (MPI_Aint)stride * old->extent : (MPI_Aint)stride;
    return blocks_type(fname, combiner, large, &a, count, NULL, bl, NULL, s, false, oldtype, newtype);
}

int impl_MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return vector("MPI_Type_vector", MPI_COMBINER_VECTOR, false, count, blocklength, stride, oldtype, newtype);
}

int impl_MPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    return vector("MPI_Type_vector_c", MPI_COMBINER_VECTOR, true, count, blocklength, stride, oldtype, newtype);
}

int impl_MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                 MPI_Datatype *newtype)
{
    return vector("MPI_Type_create_hvector", MPI_COMBINER_HVECTOR, false, count, blocklength, stride, oldtype, newtype);
}

int impl_MPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                                   MPI_Datatype *newtype)
{
    return vector("MPI_Type_create_hvector_c", MPI_COMBINER_HVECTOR, true, count, blocklength, stride, oldtype,
                  newtype);
}

/* ---- indexed, hindexed (arguments: count, lengths..., displacements...) -- */

#define INDEXED(NAME, COMBINER, LARGE, CT, BT, DT, IN_ELEMENTS)                                                   \
    int impl_MPI_##NAME(CT count, const BT blocklengths[], const DT displacements[], MPI_Datatype oldtype,        \
                        MPI_Datatype *newtype)                                                                    \
    {                                                                                                             \
        arglist a;                                                                                                \
        if (args_alloc(&a, 2 * (MPI_Count)count + 1))                                                             \
            return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_" #NAME, "out of memory");                                   \
        a.v[a.n++] = count;                                                                                       \
        ARGS_PUSH_ARRAY(&a, blocklengths, count);                                                                 \
        ARGS_PUSH_ARRAY(&a, displacements, count);                                                                \
        return blocks_type("MPI_" #NAME, COMBINER, LARGE, &a, count, a.v + 1, 0, a.v + 1 + count, 0, IN_ELEMENTS, \
                           oldtype, newtype);                                                                     \
    }
INDEXED(Type_indexed, MPI_COMBINER_INDEXED, false, int, int, int, true)
INDEXED(Type_indexed_c, MPI_COMBINER_INDEXED, true, MPI_Count, MPI_Count, MPI_Count, true)
INDEXED(Type_create_hindexed, MPI_COMBINER_HINDEXED, false, int, int, MPI_Aint, false)
INDEXED(Type_create_hindexed_c, MPI_COMBINER_HINDEXED, true, MPI_Count, MPI_Count, MPI_Count, false)

/* ---- indexed_block, hindexed_block (count, length, displacements...) ---- */

#define INDEXED_BLOCK(NAME, COMBINER, LARGE, CT, DT, IN_ELEMENTS)                                                     \
    int impl_MPI_##NAME(CT count, CT blocklength, const DT displacements[], MPI_Datatype oldtype,                     \
                        MPI_Datatype *newtype)                                                                        \
    {                                                                                                                 \
        arglist a;                                                                                                    \
        if (args_alloc(&a, (MPI_Count)count + 2)) return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_" #NAME, "out of memory"); \
        a.v[a.n++] = count;                                                                                           \
        a.v[a.n++] = blocklength;                                                                                     \
        ARGS_PUSH_ARRAY(&a, displacements, count);                                                                    \
        return blocks_type("MPI_" #NAME, COMBINER, LARGE, &a, count, NULL, blocklength, a.v + 2, 0, IN_ELEMENTS,      \
                           oldtype, newtype);                                                                         \
    }
INDEXED_BLOCK(Type_create_indexed_block, MPI_COMBINER_INDEXED_BLOCK, false, int, int, true)
INDEXED_BLOCK(Type_create_indexed_block_c, MPI_COMBINER_INDEXED_BLOCK, true, MPI_Count, MPI_Count, true)
INDEXED_BLOCK(Type_create_hindexed_block, MPI_COMBINER_HINDEXED_BLOCK, false, int, MPI_Aint, false)
INDEXED_BLOCK(Type_create_hindexed_block_c, MPI_COMBINER_HINDEXED_BLOCK, true, MPI_Count, MPI_Count, false)

/* ---- struct ------------------------------------------------------------- */

static int struct_type(const char *fname, bool large, arglist *a, MPI_Count count, const MPI_Datatype types[],
                       MPI_Datatype *newtype)
{
    int rc = check_counts(fname, count, a->v + 1);
    lm_tm_builder b = {0};
    for (MPI_Count i = 0; rc == MPI_SUCCESS && i < count; i++) {
        lm_datatype *old = old_type(types[i], fname, &rc);
        if (old) lm_tm_add(&b, old, (MPI_Aint)a->v[1 + count + i], a->v[1 + i]);
    }
    if (rc == MPI_SUCCESS) rc = make(fname, MPI_COMBINER_STRUCT, &b, large, a->n, a->v, count, types, true, newtype);
    else lm_tm_discard(&b);
    lm_free(LM_MEM_DATATYPE, a->v);
    return rc;
}

#define STRUCT(NAME, LARGE, CT, BT, DT)                                                                          \
    int impl_MPI_##NAME(CT count, const BT blocklengths[], const DT displacements[], const MPI_Datatype types[], \
                        MPI_Datatype *newtype)                                                                   \
    {                                                                                                            \
        arglist a;                                                                                               \
        if (args_alloc(&a, 2 * (MPI_Count)count + 1))                                                            \
            return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_" #NAME, "out of memory");                                  \
        a.v[a.n++] = count;                                                                                      \
        ARGS_PUSH_ARRAY(&a, blocklengths, count);                                                                \
        ARGS_PUSH_ARRAY(&a, displacements, count);                                                               \
        return struct_type("MPI_" #NAME, LARGE, &a, count, types, newtype);                                      \
    }
STRUCT(Type_create_struct, false, int, int, MPI_Aint)
STRUCT(Type_create_struct_c, true, MPI_Count, MPI_Count, MPI_Count)

/* ---- subarray ----------------------------------------------------------- */

/* The subarray from dimension d on (slowest first), as a piece: sub[d]
 * copies of dimension d + 1's piece, stride[d] apart from start[d]. */
static int subarray_piece(const lm_datatype *old, int nd, const MPI_Count *sub, const MPI_Count *start,
                          const MPI_Aint *stride, int d, lm_tm_piece *out)
{
    lm_tm_piece inner = lm_tm_piece_of(old), owned = {0};
    if (d < nd - 1) {
        int rc = subarray_piece(old, nd, sub, start, stride, d + 1, &owned);
        if (rc) return rc;
        inner = owned;
    }
    lm_tm_builder b = {0};
    lm_tm_add_piece(&b, &inner, (MPI_Aint)start[d] * stride[d], sub[d], stride[d]);
    lm_tm_piece_release(&owned);
    return lm_tm_seal(&b, out);
}

static int subarray(const char *fname, bool large, arglist *a, int nd, int order, MPI_Datatype oldtype,
                    MPI_Datatype *newtype)
{
    int rc;
    lm_datatype *old = old_type(oldtype, fname, &rc);
    MPI_Count sizes[nd > 0 ? nd : 1], sub[nd > 0 ? nd : 1], start[nd > 0 ? nd : 1];
    MPI_Aint stride[nd > 0 ? nd : 1];
    if (!old) goto out;
    if (nd <= 0 || (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)) {
        rc = lm_err_noobj(MPI_ERR_ARG, fname, nd <= 0 ? "ndims must be positive" : "invalid order");
        goto out;
    }
    /* slowest dimension first, whatever the order */
    for (int i = 0; i < nd; i++) {
        int j = order == MPI_ORDER_C ? i : nd - 1 - i;
        sizes[i] = a->v[1 + j];
        sub[i] = a->v[1 + nd + j];
        start[i] = a->v[1 + 2 * nd + j];
        if (sizes[i] <= 0 || sub[i] <= 0 || start[i] < 0 || start[i] + sub[i] > sizes[i]) {
            rc = lm_err_noobj(MPI_ERR_ARG, fname, "dimension %d: size %lld, subsize %lld, start %lld do not fit", j,
                              (long long)sizes[i], (long long)sub[i], (long long)start[i]);
            goto out;
        }
    }
    MPI_Aint full = old->extent;
    for (int i = nd - 1; i >= 0; i--) {
        stride[i] = full;
        full *= (MPI_Aint)sizes[i];
    }
    lm_tm_piece whole;
    if ((rc = subarray_piece(old, nd, sub, start, stride, 0, &whole)) != MPI_SUCCESS) {
        rc = lm_err_noobj(rc, fname, "out of memory");
        goto out;
    }
    lm_tm_builder b = {0};
    lm_tm_add_piece(&b, &whole, 0, 1, 0);
    lm_tm_piece_release(&whole);
    /* the type spans the whole array, as MPI_Type_create_resized(0, full) would */
    b.any = true;
    b.lb = 0;
    b.ub = full;
    b.explicit_bounds = true;
    rc = make(fname, MPI_COMBINER_SUBARRAY, &b, large, a->n, a->v, 1, &oldtype, false, newtype);
out:
    lm_free(LM_MEM_DATATYPE, a->v);
    return rc;
}

#define SUBARRAY(NAME, LARGE, AT)                                                                                      \
    int impl_MPI_##NAME(int ndims, const AT sizes[], const AT subsizes[], const AT starts[], int order,                \
                        MPI_Datatype oldtype, MPI_Datatype *newtype)                                                   \
    {                                                                                                                  \
        arglist a;                                                                                                     \
        int nd = ndims > 0 ? ndims : 0;                                                                                \
        if (args_alloc(&a, 3 * (MPI_Count)nd + 2)) return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_" #NAME, "out of memory"); \
        a.v[a.n++] = ndims;                                                                                            \
        ARGS_PUSH_ARRAY(&a, sizes, nd);                                                                                \
        ARGS_PUSH_ARRAY(&a, subsizes, nd);                                                                             \
        ARGS_PUSH_ARRAY(&a, starts, nd);                                                                               \
        a.v[a.n++] = order;                                                                                            \
        return subarray("MPI_" #NAME, LARGE, &a, ndims, order, oldtype, newtype);                                      \
    }
SUBARRAY(Type_create_subarray, false, int)
SUBARRAY(Type_create_subarray_c, true, MPI_Count)

/* ---- darray ------------------------------------------------------------- */

/* One dimension of a distributed array as this process owns it. */
typedef struct dim_share {
    int distrib;
    MPI_Count g;    /* global size */
    MPI_Count darg; /* block (BLOCK) or cycle block (CYCLIC) length */
    int p, coord;   /* processes in the dimension, this one's coordinate */
} dim_share;

/* Check a dimension's distribution, settling the default argument. */
static int share_valid(dim_share *s)
{
    if (s->g <= 0) return 0;
    if (s->distrib == MPI_DISTRIBUTE_NONE) return s->p == 1;
    if (s->distrib == MPI_DISTRIBUTE_BLOCK) {
        if (s->darg == MPI_DISTRIBUTE_DFLT_DARG) s->darg = (s->g + s->p - 1) / s->p;
        return s->darg > 0 && s->darg * s->p >= s->g;
    }
    if (s->distrib == MPI_DISTRIBUTE_CYCLIC) {
        if (s->darg == MPI_DISTRIBUTE_DFLT_DARG) s->darg = 1;
        return s->darg > 0;
    }
    return 0;
}

/* The indices s owns of copies of `inner` (stride apart, index i at
 * i * stride): one run for NONE and BLOCK; for CYCLIC the full blocks as
 * one block repeated every darg * p indices, then the last, shorter one. */
static void lay_share(lm_tm_builder *b, const dim_share *s, const lm_tm_piece *inner, MPI_Aint stride)
{
    if (s->distrib == MPI_DISTRIBUTE_NONE) {
        lm_tm_add_piece(b, inner, 0, s->g, stride);
        return;
    }
    MPI_Count first = s->coord * s->darg;
    if (s->distrib == MPI_DISTRIBUTE_BLOCK) {
        MPI_Count end = first + s->darg < s->g ? first + s->darg : s->g;
        if (first < end) lm_tm_add_piece(b, inner, (MPI_Aint)first * stride, end - first, stride);
        return;
    }
    MPI_Count cycle = s->darg * s->p, full = first + s->darg <= s->g ? (s->g - first - s->darg) / cycle + 1 : 0;
    if (full) {
        lm_tm_builder one = {0};
        lm_tm_add_piece(&one, inner, 0, s->darg, stride);
        lm_tm_piece block;
        if (lm_tm_seal(&one, &block)) {
            b->failed = true;
            return;
        }
        lm_tm_add_piece(b, &block, (MPI_Aint)first * stride, full, (MPI_Aint)cycle * stride);
        lm_tm_piece_release(&block);
    }
    MPI_Count last = first + full * cycle;
    if (last < s->g) lm_tm_add_piece(b, inner, (MPI_Aint)last * stride, s->g - last, stride);
}

/* Level lv (slowest first) onwards of the local block, as a piece; perm
 * maps levels to dimensions. */
static int darray_piece(const lm_datatype *old, int nd, const int *perm, const dim_share *sh, const MPI_Aint *stride,
                        int lv, lm_tm_piece *out)
{
    lm_tm_piece inner = lm_tm_piece_of(old), owned = {0};
    if (lv < nd - 1) {
        int rc = darray_piece(old, nd, perm, sh, stride, lv + 1, &owned);
        if (rc) return rc;
        inner = owned;
    }
    lm_tm_builder b = {0};
    lay_share(&b, &sh[perm[lv]], &inner, stride[perm[lv]]);
    lm_tm_piece_release(&owned);
    return lm_tm_seal(&b, out);
}

static int darray(const char *fname, bool large, arglist *a, int size, int rank, int nd, int order,
                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int rc;
    lm_datatype *old = old_type(oldtype, fname, &rc);
    int n1 = nd > 0 ? nd : 1;
    int perm[n1];
    dim_share sh[n1];
    MPI_Aint stride[n1];
    if (!old) goto out;
    if (nd <= 0 || size <= 0 || rank < 0 || rank >= size || (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)) {
        rc = lm_err_noobj(MPI_ERR_ARG, fname, "invalid ndims, size, rank or order");
        goto out;
    }
    const MPI_Count *gs = a->v + 3, *dist = a->v + 3 + nd, *darg = a->v + 3 + 2 * nd, *ps = a->v + 3 + 3 * nd;
    MPI_Count procs = 1;
    for (int d = 0; d < nd; d++) procs = ps[d] > 0 && procs > 0 ? procs * ps[d] : -1;
    if (procs != size) {
        rc = lm_err_noobj(MPI_ERR_ARG, fname, "the process grid has %lld processes, not %d", (long long)procs, size);
        goto out;
    }
    /* the process grid is row-major whatever the array order */
    for (int d = nd - 1, r = rank; d >= 0; d--) {
        sh[d] = (dim_share){(int)dist[d], gs[d], darg[d], (int)ps[d], r % (int)ps[d]};
        r /= (int)ps[d];
        if (!share_valid(&sh[d])) {
            rc = lm_err_noobj(MPI_ERR_ARG, fname, "dimension %d: invalid size, distribution or argument", d);
            goto out;
        }
    }
    MPI_Aint full = old->extent;
    for (int l = nd - 1; l >= 0; l--) {
        int d = order == MPI_ORDER_C ? l : nd - 1 - l;
        perm[l] = d;
        stride[d] = full;
        full *= (MPI_Aint)gs[d];
    }
    lm_tm_piece local;
    if ((rc = darray_piece(old, nd, perm, sh, stride, 0, &local)) != MPI_SUCCESS) {
        rc = lm_err_noobj(rc, fname, "out of memory");
        goto out;
    }
    lm_tm_builder b = {0};
    lm_tm_add_piece(&b, &local, 0, 1, 0);
    lm_tm_piece_release(&local);
    b.any = true;
    b.lb = 0;
    b.ub = full;
    b.explicit_bounds = true;
    rc = make(fname, MPI_COMBINER_DARRAY, &b, large, a->n, a->v, 1, &oldtype, false, newtype);
out:
    lm_free(LM_MEM_DATATYPE, a->v);
    return rc;
}

#define DARRAY(NAME, LARGE, GT)                                                                                        \
    int impl_MPI_##NAME(int size, int rank, int ndims, const GT gsizes[], const int distribs[], const int dargs[],     \
                        const int psizes[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)                    \
    {                                                                                                                  \
        arglist a;                                                                                                     \
        int nd = ndims > 0 ? ndims : 0;                                                                                \
        if (args_alloc(&a, 4 * (MPI_Count)nd + 4)) return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_" #NAME, "out of memory"); \
        a.v[a.n++] = size;                                                                                             \
        a.v[a.n++] = rank;                                                                                             \
        a.v[a.n++] = ndims;                                                                                            \
        ARGS_PUSH_ARRAY(&a, gsizes, nd);                                                                               \
        ARGS_PUSH_ARRAY(&a, distribs, nd);                                                                             \
        ARGS_PUSH_ARRAY(&a, dargs, nd);                                                                                \
        ARGS_PUSH_ARRAY(&a, psizes, nd);                                                                               \
        a.v[a.n++] = order;                                                                                            \
        return darray("MPI_" #NAME, LARGE, &a, size, rank, ndims, order, oldtype, newtype);                            \
    }
DARRAY(Type_create_darray, false, int)
DARRAY(Type_create_darray_c, true, MPI_Count)

/* ---- resized ------------------------------------------------------------ */

static int resized(const char *fname, bool large, MPI_Count lb, MPI_Count extent, MPI_Datatype oldtype,
                   MPI_Datatype *newtype)
{
    int rc;
    lm_datatype *old = old_type(oldtype, fname, &rc);
    if (!old) return rc;
    lm_tm_builder b = {0};
    lm_tm_add(&b, old, 0, 1);
    b.any = true;
    b.lb = (MPI_Aint)lb;
    b.ub = (MPI_Aint)(lb + extent);
    b.explicit_bounds = true;
    MPI_Count args[2] = {lb, extent};
    return make(fname, MPI_COMBINER_RESIZED, &b, large, 2, args, 1, &oldtype, false, newtype);
}

int impl_MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    return resized("MPI_Type_create_resized", false, lb, extent, oldtype, newtype);
}

int impl_MPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype)
{
    return resized("MPI_Type_create_resized_c", true, lb, extent, oldtype, newtype);
}

/* ---- envelope and contents ---------------------------------------------- */

/* How the kept numbers split into integers, addresses and large counts. */
static void envelope(const lm_datatype *t, MPI_Count *ni, MPI_Count *na, MPI_Count *nc, MPI_Count *nt)
{
    MPI_Count n = t->nargs, c = n ? t->args[0] : 0;
    *ni = *na = *nc = 0;
    *nt = t->combiner == MPI_COMBINER_NAMED ? 0 : t->ntypes;
    if (t->large_args) {
        if (t->combiner == MPI_COMBINER_SUBARRAY) {
            *ni = 2;
            *nc = n - 2;
        } else if (t->combiner == MPI_COMBINER_DARRAY) {
            /* only the global sizes are large counts */
            *nc = t->args[2];
            *ni = n - *nc;
        } else {
            *nc = n;
        }
        return;
    }
    switch (t->combiner) {
    case MPI_COMBINER_HVECTOR: *ni = 2, *na = 1; break;
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT: *ni = c + 1, *na = c; break;
    case MPI_COMBINER_HINDEXED_BLOCK: *ni = 2, *na = c; break;
    case MPI_COMBINER_RESIZED: *na = 2; break;
    default: *ni = n; break;
    }
}

int impl_MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
                               int *combiner)
{
    lm_datatype *t = lm_datatype_get(datatype);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, "MPI_Type_get_envelope", "invalid datatype");
    MPI_Count ni, na, nc, nt;
    envelope(t, &ni, &na, &nc, &nt);
    if (nc)
        return lm_err_noobj(MPI_ERR_TYPE, "MPI_Type_get_envelope",
                            "the type was made with large counts: use MPI_Type_get_envelope_c");
    *num_integers = (int)ni;
    *num_addresses = (int)na;
    *num_datatypes = (int)nt;
    *combiner = t->combiner;
    return MPI_SUCCESS;
}

int impl_MPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
                                 MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner)
{
    lm_datatype *t = lm_datatype_get(datatype);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, "MPI_Type_get_envelope_c", "invalid datatype");
    envelope(t, num_integers, num_addresses, num_large_counts, num_datatypes);
    *combiner = t->combiner;
    return MPI_SUCCESS;
}

static int contents(const char *fname, MPI_Datatype datatype, MPI_Count max_i, MPI_Count max_a, MPI_Count max_c,
                    MPI_Count max_t, int ints[], MPI_Aint aints[], MPI_Count counts[], MPI_Datatype types[])
{
    lm_datatype *t = lm_datatype_get(datatype);
    if (!t) return lm_err_noobj(MPI_ERR_TYPE, fname, "invalid datatype");
    if (t->combiner == MPI_COMBINER_NAMED)
        return lm_err_noobj(MPI_ERR_TYPE, fname, "a predefined datatype has no contents");
    MPI_Count ni, na, nc, nt;
    envelope(t, &ni, &na, &nc, &nt);
    if (max_i < ni || max_a < na || max_c < nc || max_t < nt)
        return lm_err_noobj(MPI_ERR_ARG, fname, "arrays too short for the type's contents");
    const MPI_Count *v = t->args;
    if (t->large_args && t->combiner == MPI_COMBINER_SUBARRAY) {
        ints[0] = (int)v[0];
        ints[1] = (int)v[t->nargs - 1];
        for (MPI_Count i = 0; i < nc; i++) counts[i] = v[1 + i];
    } else if (t->large_args && t->combiner == MPI_COMBINER_DARRAY) {
        /* size, rank, ndims, distribs, dargs, psizes, order; gsizes large */
        MPI_Count k = 0;
        for (MPI_Count i = 0; i < t->nargs; i++) {
            if (i >= 3 && i < 3 + nc) counts[i - 3] = v[i];
            else ints[k++] = (int)v[i];
        }
    } else {
        for (MPI_Count i = 0; i < ni; i++) ints[i] = (int)v[i];
        for (MPI_Count i = 0; i < na; i++) aints[i] = (MPI_Aint)v[ni + i];
        for (MPI_Count i = 0; i < nc; i++) counts[i] = v[i];
    }
    /* derived types come back as new references the caller frees */
    for (MPI_Count i = 0; i < nt; i++) {
        types[i] = t->types[i];
        lm_datatype *o = lm_datatype_get(t->types[i]);
        if (o) retain(o);
    }
    return MPI_SUCCESS;
}

int impl_MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                               int array_of_integers[], MPI_Aint array_of_addresses[],
                               MPI_Datatype array_of_datatypes[])
{
    lm_datatype *t = lm_datatype_get(datatype);
    if (t && t->large_args)
        return lm_err_noobj(MPI_ERR_TYPE, "MPI_Type_get_contents",
                            "the type was made with large counts: use MPI_Type_get_contents_c");
    return contents("MPI_Type_get_contents", datatype, max_integers, max_addresses, 0, max_datatypes, array_of_integers,
                    array_of_addresses, NULL, array_of_datatypes);
}

int impl_MPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                                 MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                                 MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                                 MPI_Datatype array_of_datatypes[])
{
    return contents("MPI_Type_get_contents_c", datatype, max_integers, max_addresses, max_large_counts, max_datatypes,
                    array_of_integers, array_of_addresses, array_of_large_counts, array_of_datatypes);
}

int impl_MPI_Get_address(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
