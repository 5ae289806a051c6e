/* Predefined reductions, dispatched on (op, type class, size). MINLOC and
 * MAXLOC work on the pair types: the value is compared, ties keep the lower
 * index. */
#include "coll/op.h"
#include "datatype/builtin_types_gen.h"
#include "datatype/typemap.h"
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum {
    OP_MAX,
    OP_MIN,
    OP_SUM,
    OP_PROD,
    OP_LAND,
    OP_BAND,
    OP_LOR,
    OP_BOR,
    OP_LXOR,
    OP_BXOR,
    OP_MINLOC,
    OP_MAXLOC,
    OP_REPLACE,
    OP_NO_OP,
    OP_COUNT
};

/* A predefined op's index, or -1 (a user op, or no op at all). */
static inline int builtin_index(MPI_Op op)
{
    if (LM_HANDLE_KIND(op) != LM_KIND_OP || LM_HANDLE_TIER(op) != LM_TIER_BUILTIN || LM_HANDLE_INDEX(op) >= OP_COUNT)
        return -1;
    return (int)LM_HANDLE_INDEX(op);
}

int lm_op_valid(MPI_Op op) { return builtin_index(op) >= 0 || lm_op_user_get(op); }

/* One loop per op, the op chosen outside it: a loop with nothing but the
 * element operation inside is what the compiler vectorizes (op.c is built
 * with -ftree-vectorize), and SUM on 1 MiB of doubles then takes about a
 * third of the time of a loop that switches on the op at every element. */
#define EACH(body) \
    for (size_t i = 0; i < n; i++) body
#define ARITH(T)                                                    \
    static void arith_##T(int op, const T *a, T *b, size_t n)       \
    {                                                               \
        switch (op) {                                               \
        case OP_MAX: EACH(b[i] = a[i] > b[i] ? a[i] : b[i];) break; \
        case OP_MIN: EACH(b[i] = a[i] < b[i] ? a[i] : b[i];) break; \
        case OP_SUM: EACH(b[i] = a[i] + b[i];) break;               \
        case OP_PROD: EACH(b[i] = a[i] * b[i];) break;              \
        case OP_LAND: EACH(b[i] = (a[i] && b[i]);) break;           \
        case OP_LOR: EACH(b[i] = (a[i] || b[i]);) break;            \
        case OP_LXOR: EACH(b[i] = (!a[i] != !b[i]);) break;         \
        }                                                           \
    }
#define BITS(T)                                              \
    static void bits_##T(int op, const T *a, T *b, size_t n) \
    {                                                        \
        switch (op) {                                        \
        case OP_BAND: EACH(b[i] &= a[i];) break;             \
        case OP_BOR: EACH(b[i] |= a[i];) break;              \
        case OP_BXOR: EACH(b[i] ^= a[i];) break;             \
        }                                                    \
    }
#define CPLX(T)                                              \
    static void cplx_##T(int op, const T *a, T *b, size_t n) \
    {                                                        \
        if (op == OP_SUM) EACH(b[i] = a[i] + b[i];)          \
        else EACH(b[i] = a[i] * b[i];)                       \
    }

typedef long double ldouble;
typedef float _Complex fcomplex;
typedef double _Complex dcomplex;
typedef long double _Complex lcomplex;
/* clang-format off */
ARITH(int8_t) ARITH(int16_t) ARITH(int32_t) ARITH(int64_t)
ARITH(uint8_t) ARITH(uint16_t) ARITH(uint32_t) ARITH(uint64_t)
ARITH(float) ARITH(double) ARITH(ldouble)
BITS(uint8_t) BITS(uint16_t) BITS(uint32_t) BITS(uint64_t)
CPLX(fcomplex) CPLX(dcomplex) CPLX(lcomplex)
/* clang-format on */

static int is_arith(int op) { return op <= OP_PROD || op == OP_LAND || op == OP_LOR || op == OP_LXOR; }
static int is_bits(int op) { return op == OP_BAND || op == OP_BOR || op == OP_BXOR; }

static int apply_basic(int op, int kind, int size, const void *a, void *b, size_t n)
{
    switch (kind) {
    case LM_TK_INT:
    case LM_TK_CHAR:
        if (is_bits(op)) goto bits;
        if (!is_arith(op)) return 0;
        switch (size) {
        case 1: arith_int8_t(op, a, b, n); return 1;
        case 2: arith_int16_t(op, a, b, n); return 1;
        case 4: arith_int32_t(op, a, b, n); return 1;
        case 8: arith_int64_t(op, a, b, n); return 1;
        }
        return 0;
    case LM_TK_UINT:
        if (is_bits(op)) goto bits;
        if (!is_arith(op)) return 0;
        switch (size) {
        case 1: arith_uint8_t(op, a, b, n); return 1;
        case 2: arith_uint16_t(op, a, b, n); return 1;
        case 4: arith_uint32_t(op, a, b, n); return 1;
        case 8: arith_uint64_t(op, a, b, n); return 1;
        }
        return 0;
    case LM_TK_BYTE:
        if (is_bits(op)) goto bits;
        return 0;
    case LM_TK_FLOAT:
        if (op > OP_PROD) return 0;
        if (size == sizeof(float)) arith_float(op, a, b, n);
        else if (size == sizeof(double)) arith_double(op, a, b, n);
        else if (size == sizeof(ldouble)) arith_ldouble(op, a, b, n);
        else return 0;
        return 1;
    case LM_TK_COMPLEX:
        if (op != OP_SUM && op != OP_PROD) return 0;
        if (size == sizeof(fcomplex)) cplx_fcomplex(op, a, b, n);
        else if (size == sizeof(dcomplex)) cplx_dcomplex(op, a, b, n);
        else if (size == sizeof(lcomplex)) cplx_lcomplex(op, a, b, n);
        else return 0;
        return 1;
    case LM_TK_BOOL:
    case LM_TK_LOGICAL:
        if (op != OP_LAND && op != OP_LOR && op != OP_LXOR) return 0;
        if (size == 1) arith_uint8_t(op, a, b, n);
        else if (size == 4) arith_uint32_t(op, a, b, n);
        else return 0;
        return 1;
    default: return 0;
    }
bits:
    switch (size) {
    case 1: bits_uint8_t(op, a, b, n); return 1;
    case 2: bits_uint16_t(op, a, b, n); return 1;
    case 4: bits_uint32_t(op, a, b, n); return 1;
    case 8: bits_uint64_t(op, a, b, n); return 1;
    }
    return 0;
}

/* -1, 0, 1 comparing two values of a basic type */
static int compare(int kind, int size, const void *x, const void *y)
{
#define CMP(T)                     \
    {                              \
        T a, b;                    \
        memcpy(&a, x, sizeof a);   \
        memcpy(&b, y, sizeof b);   \
        return a < b ? -1 : a > b; \
    }
    if (kind == LM_TK_FLOAT) {
        if (size == sizeof(float)) CMP(float)
        if (size == sizeof(double)) CMP(double)
        CMP(ldouble)
    }
    if (kind == LM_TK_UINT) {
        if (size == 8) CMP(uint64_t)
        if (size == 4) CMP(uint32_t)
        if (size == 2) CMP(uint16_t)
        CMP(uint8_t)
    }
    if (size == 8) CMP(int64_t)
    if (size == 4) CMP(int32_t)
    if (size == 2) CMP(int16_t)
    CMP(int8_t)
#undef CMP
}

static int apply_loc(int op, const struct lm_builtin_type *p, const char *a, char *b, size_t n)
{
    const struct lm_builtin_type *v = &lm_builtin_types[p->pair_first];
    for (size_t i = 0; i < n; i++, a += p->extent, b += p->extent) {
        int c = compare(v->kind, v->size, a, b);
        int ia, ib;
        memcpy(&ia, a + p->pair_offset, sizeof ia);
        memcpy(&ib, b + p->pair_offset, sizeof ib);
        int take = op == OP_MINLOC ? c < 0 : c > 0;
        if (take) memcpy(b, a, (size_t)p->extent);
        else if (c == 0 && ia < ib) memcpy(b + p->pair_offset, &ia, sizeof ia);
    }
    return 1;
}

/* One predefined op on n elements of predefined type `basic`, laid out at
 * the type's extent. dry: only say whether the op applies. */
static int apply_builtin(int op, int basic, const void *in, void *inout, size_t n, int dry)
{
    const struct lm_builtin_type *b = &lm_builtin_types[basic];
    if (op == OP_REPLACE) {
        if (!dry) memcpy(inout, in, n * (size_t)b->extent);
        return 1;
    }
    if (op == OP_NO_OP) return 1;
    if (b->kind == LM_TK_PAIR) {
        if (op != OP_MINLOC && op != OP_MAXLOC) return 0;
        return dry ? 1 : apply_loc(op, b, in, inout, n);
    }
    if (op == OP_MINLOC || op == OP_MAXLOC) return 0;
    if (dry) {
        char x[64] = {0}, y[64] = {0};
        return b->size <= 32 ? apply_basic(op, b->kind, b->size, x, y, 1) : 0;
    }
    return apply_basic(op, b->kind, b->size, in, inout, n);
}

/* A derived type made of one basic type throughout (MPI 6.9.2: predefined
 * ops apply to such types element by element): the op runs over each run
 * of each element. Pair types appear as their two members in a derived
 * layout, so only the predefined pair itself takes MINLOC/MAXLOC. */
typedef struct derived_apply {
    int op;
    const char *in;
    char *inout;
    size_t bsize;
} derived_apply;

static void apply_leaf(void *arg, MPI_Aint disp, MPI_Count size, int basic, MPI_Count reps, MPI_Aint stride)
{
    derived_apply *d = arg;
    for (MPI_Count k = 0; k < reps; k++) {
        MPI_Aint at = disp + (MPI_Aint)k * stride;
        apply_builtin(d->op, basic, d->in + at, d->inout + at, (size_t)size / d->bsize, 0);
    }
}

static int apply_derived(int op, const char *in, char *inout, size_t count, const lm_datatype *t, int dry)
{
    if (t->size == 0) return 1;
    int basic = t->layout->basic;
    if (basic < 0) return 0;
    if (dry || !apply_builtin(op, basic, NULL, NULL, 0, 1)) return apply_builtin(op, basic, NULL, NULL, 0, 1);
    derived_apply d = {op, in, inout, (size_t)lm_builtin_types[basic].size};
    lm_typemap_walk(t, (MPI_Count)count, apply_leaf, &d);
    return 1;
}

static int apply(int op, const void *in, void *inout, size_t count, const lm_datatype *t, int dry)
{
    if (t->predefined) return apply_builtin(op, t->basic_id, in, inout, count, dry);
    return apply_derived(op, in, inout, count, t, dry);
}

int lm_op_valid_for(MPI_Op op, const lm_datatype *t)
{
    int i = builtin_index(op);
    if (i < 0) return lm_op_user_get(op) != NULL;
    if (i == OP_REPLACE || i == OP_NO_OP) return 0;
    /* every reduction asks: predefined pairs are answered once (1 + answer) */
    static uint8_t known[OP_COUNT][LM_BT_COUNT];
    int b = t->predefined ? t->basic_id : -1;
    if (b >= 0 && b < LM_BT_COUNT && known[i][b]) return known[i][b] - 1;
    int valid = apply(i, NULL, NULL, 0, t, 1) == 1;
    if (b >= 0 && b < LM_BT_COUNT) known[i][b] = (uint8_t)(1 + valid);
    return valid;
}

int lm_op_apply(MPI_Op op, const void *in, void *inout, size_t count, const lm_datatype *t)
{
    int i = builtin_index(op);
    if (i >= 0) return apply(i, in, inout, count, t, 0) == 1 ? MPI_SUCCESS : MPI_ERR_OP;
    lm_user_op *u = lm_op_user_get(op);
    return u ? lm_op_user_apply(u, in, inout, count, t) : MPI_ERR_OP;
}

int lm_op_commutative(MPI_Op op)
{
    lm_user_op *u = lm_op_user_get(op);
    return u ? u->commute : 1;
}
