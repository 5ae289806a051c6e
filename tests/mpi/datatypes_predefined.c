/* Size, extent, true extent and name of every predefined C datatype. */
#include "mpitest.h"
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

typedef struct {
    float v;
    int i;
} float_int_t;
typedef struct {
    double v;
    int i;
} double_int_t;
typedef struct {
    long v;
    int i;
} long_int_t;
typedef struct {
    int v;
    int i;
} two_int_t;
typedef struct {
    short v;
    int i;
} short_int_t;
typedef struct {
    long double v;
    int i;
} long_double_int_t;

struct t {
    MPI_Datatype type;
    const char *name, *alt_name; /* alt: the other name of an alias */
    size_t size, extent, true_extent;
};
#define B(MT, CT)                                         \
    {                                                     \
        MT, #MT, NULL, sizeof(CT), sizeof(CT), sizeof(CT) \
    }
#define A(MT, CT, ALT)                                   \
    {                                                    \
        MT, #MT, ALT, sizeof(CT), sizeof(CT), sizeof(CT) \
    }
#define P(MT, ST, VT)                                                                      \
    {                                                                                      \
        MT, #MT, NULL, sizeof(VT) + sizeof(int), sizeof(ST), offsetof(ST, i) + sizeof(int) \
    }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const struct t types[] = {
        B(MPI_CHAR, char),
        B(MPI_SHORT, short),
        B(MPI_INT, int),
        B(MPI_LONG, long),
        A(MPI_LONG_LONG_INT, long long, "MPI_LONG_LONG"),
        A(MPI_LONG_LONG, long long, "MPI_LONG_LONG_INT"),
        B(MPI_SIGNED_CHAR, signed char),
        B(MPI_UNSIGNED_CHAR, unsigned char),
        B(MPI_UNSIGNED_SHORT, unsigned short),
        B(MPI_UNSIGNED, unsigned),
        B(MPI_UNSIGNED_LONG, unsigned long),
        B(MPI_UNSIGNED_LONG_LONG, unsigned long long),
        B(MPI_FLOAT, float),
        B(MPI_DOUBLE, double),
        B(MPI_LONG_DOUBLE, long double),
        B(MPI_WCHAR, wchar_t),
        B(MPI_C_BOOL, _Bool),
        B(MPI_INT8_T, int8_t),
        B(MPI_INT16_T, int16_t),
        B(MPI_INT32_T, int32_t),
        B(MPI_INT64_T, int64_t),
        B(MPI_UINT8_T, uint8_t),
        B(MPI_UINT16_T, uint16_t),
        B(MPI_UINT32_T, uint32_t),
        B(MPI_UINT64_T, uint64_t),
        A(MPI_C_COMPLEX, float _Complex, "MPI_C_FLOAT_COMPLEX"),
        A(MPI_C_FLOAT_COMPLEX, float _Complex, "MPI_C_COMPLEX"),
        B(MPI_C_DOUBLE_COMPLEX, double _Complex),
        B(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
        B(MPI_BYTE, char),
        B(MPI_PACKED, char),
        B(MPI_AINT, MPI_Aint),
        B(MPI_OFFSET, MPI_Offset),
        B(MPI_COUNT, MPI_Count),
        P(MPI_FLOAT_INT, float_int_t, float),
        P(MPI_DOUBLE_INT, double_int_t, double),
        P(MPI_LONG_INT, long_int_t, long),
        P(MPI_2INT, two_int_t, int),
        P(MPI_SHORT_INT, short_int_t, short),
        P(MPI_LONG_DOUBLE_INT, long_double_int_t, long double),
    };
    const int n = (int)(sizeof types / sizeof types[0]);
    for (int k = 0; k < n; k++) {
        const struct t *t = &types[k];
        int sz = -1;
        MPI_Aint lb = -1, ext = -1, tlb = -1, text = -1;
        MPI_Count szx = -1, lbx = -1, extx = -1;
        CHECK(t->type != MPI_DATATYPE_NULL, "%s is MPI_DATATYPE_NULL", t->name);
        CHECK_MPI(MPI_Type_size(t->type, &sz));
        CHECK(sz == (int)t->size, "%s: MPI_Type_size %d, expected %zu", t->name, sz, t->size);
        CHECK_MPI(MPI_Type_size_x(t->type, &szx));
        CHECK(szx == (MPI_Count)t->size, "%s: MPI_Type_size_x %lld", t->name, (long long)szx);
        CHECK_MPI(MPI_Type_get_extent(t->type, &lb, &ext));
        CHECK(lb == 0, "%s: lb %ld", t->name, (long)lb);
        CHECK(ext == (MPI_Aint)t->extent, "%s: extent %ld, expected %zu", t->name, (long)ext, t->extent);
        CHECK_MPI(MPI_Type_get_extent_x(t->type, &lbx, &extx));
        CHECK(lbx == 0 && extx == (MPI_Count)t->extent, "%s: extent_x %lld/%lld", t->name, (long long)lbx,
              (long long)extx);
        CHECK_MPI(MPI_Type_get_true_extent(t->type, &tlb, &text));
        CHECK(tlb == 0, "%s: true lb %ld", t->name, (long)tlb);
        CHECK(text == (MPI_Aint)t->true_extent, "%s: true extent %ld, expected %zu", t->name, (long)text,
              t->true_extent);
        int ni = -1, na = -1, nd = -1, comb = -1;
        CHECK_MPI(MPI_Type_get_envelope(t->type, &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_NAMED, "%s: combiner %d is not MPI_COMBINER_NAMED", t->name, comb);
        char name[MPI_MAX_OBJECT_NAME + 1];
        int len = -1;
        CHECK_MPI(MPI_Type_get_name(t->type, name, &len));
        CHECK(len == (int)strlen(name), "%s: name length %d for '%s'", t->name, len, name);
        CHECK(strcmp(name, t->name) == 0 || (t->alt_name && strcmp(name, t->alt_name) == 0),
              "%s: MPI_Type_get_name gives '%s'", t->name, name);
    }
    mt_pass("datatypes_predefined: size, extent, true extent, envelope, name of every predefined C type");

    /* Commit of a predefined type is allowed and changes nothing. */
    MPI_Datatype d = MPI_DOUBLE;
    CHECK_MPI(MPI_Type_commit(&d));
    CHECK(d == MPI_DOUBLE, "committing MPI_DOUBLE changed the handle");
    /* A duplicate of a predefined type has the same size and extent. */
    MPI_Datatype dup;
    MPI_Aint lb, ext;
    int sz;
    CHECK_MPI(MPI_Type_dup(MPI_DOUBLE_INT, &dup));
    CHECK_MPI(MPI_Type_size(dup, &sz));
    CHECK_EQ(sz, sizeof(double) + sizeof(int));
    CHECK_MPI(MPI_Type_get_extent(dup, &lb, &ext));
    CHECK_EQ(ext, sizeof(double_int_t));
    CHECK_MPI(MPI_Type_free(&dup));
    CHECK(dup == MPI_DATATYPE_NULL, "Type_free sets MPI_DATATYPE_NULL");
    mt_pass("datatypes_predefined: commit of predefined, Type_dup of a pair type");

    /* Names can be set on predefined and derived types. */
    char nm[MPI_MAX_OBJECT_NAME + 1];
    int nlen = -1;
    CHECK_MPI(MPI_Type_set_name(MPI_INT, "my int"));
    CHECK_MPI(MPI_Type_get_name(MPI_INT, nm, &nlen));
    CHECK(strcmp(nm, "my int") == 0 && nlen == 6, "renamed MPI_INT: '%s' (%d)", nm, nlen);
    CHECK_MPI(MPI_Type_set_name(MPI_INT, "MPI_INT"));
    MPI_Datatype vec, vdup;
    CHECK_MPI(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_set_name(vec, "first"));
    CHECK_MPI(MPI_Type_set_name(vec, "second"));
    CHECK_MPI(MPI_Type_get_name(vec, nm, &nlen));
    CHECK(strcmp(nm, "second") == 0, "renamed vector: '%s'", nm);
    /* the duplicate's name is the library's choice; renaming it leaves the original */
    CHECK_MPI(MPI_Type_dup(vec, &vdup));
    CHECK_MPI(MPI_Type_set_name(vdup, "third"));
    CHECK_MPI(MPI_Type_get_name(vec, nm, &nlen));
    CHECK(strcmp(nm, "second") == 0, "vector after renaming its dup: '%s'", nm);
    CHECK_MPI(MPI_Type_free(&vdup));
    CHECK_MPI(MPI_Type_free(&vec));

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    /* The null handle has a name too (as in MPICH 4.1 and Open MPI 5). */
    char name[MPI_MAX_OBJECT_NAME + 1];
    int len = -1;
    CHECK_MPI(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    CHECK(strcmp(name, "MPI_DATATYPE_NULL") == 0 && len == (int)strlen(name), "name of the null type '%s'", name);
    /* MPI-4.1: the predefined value-index pairs, and none for other pairs */
    const MPI_Datatype vi[][3] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},     {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},       {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},     {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_INT, MPI_FLOAT, MPI_DATATYPE_NULL}, {MPI_DOUBLE, MPI_LONG, MPI_DATATYPE_NULL},
        {MPI_CHAR, MPI_INT, MPI_DATATYPE_NULL},
    };
    for (size_t i = 0; i < sizeof vi / sizeof vi[0]; i++) {
        MPI_Datatype pair = MPI_BYTE;
        CHECK_MPI(MPI_Type_get_value_index(vi[i][0], vi[i][1], &pair));
        CHECK(pair == vi[i][2], "value-index pair %zu", i);
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype pair;
    int cls, rc = MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &pair);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_TYPE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
#endif
    mt_pass("datatypes_predefined: name of MPI_DATATYPE_NULL, value-index pairs");
    MPI_Finalize();
    return 0;
}
