/* Types chosen by property: MPI_Type_create_f90_{integer,real,complex},
 * MPI_Type_match_size, MPI_Type_get_value_index, and MPI_Get_hw_resource_info. */
#include "mpitest.h"

static int is_leanmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(v, &len);
    return !strncmp(v, "LeanMPI", 7);
}

/* No type fits: MPI_ERR_ARG here; MPICH 4.0 says MPI_ERR_OTHER. */
#define CHECK_NO_TYPE(call)                                 \
    do {                                                    \
        int rc_ = (call);                                   \
        if (is_leanmpi()) CHECK_ERRCLASS(rc_, MPI_ERR_ARG); \
        else CHECK(rc_ != MPI_SUCCESS, "%s fails", #call);  \
    } while (0)

static int type_size(MPI_Datatype t)
{
    int s = -1;
    CHECK_MPI(MPI_Type_size(t, &s));
    return s;
}

/* The type moves values: a ring exchange of count elements of size bytes. */
static void check_moves(MPI_Datatype t)
{
    int size = mt_size(MPI_COMM_WORLD), rank = mt_rank(MPI_COMM_WORLD), ts = type_size(t);
    unsigned char out[4 * 32], in[4 * 32];
    for (int i = 0; i < 4 * ts; i++) out[i] = (unsigned char)(rank * 31 + i);
    memset(in, 0, sizeof in);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    CHECK_MPI(MPI_Sendrecv(out, 4, t, right, 1, in, 4, t, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4 * ts; i++) CHECK(in[i] == (unsigned char)(left * 31 + i), "byte %d", i);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Datatype t;

    /* integers: the smallest size whose range covers r decimal digits */
    static const int ranges[][2] = {{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 4}, {9, 4}, {10, 8}, {18, 8}};
    for (int i = 0; i < 8; i++) {
        CHECK_MPI(MPI_Type_create_f90_integer(ranges[i][0], &t));
        CHECK(type_size(t) == ranges[i][1], "range %d: size %d", ranges[i][0], type_size(t));
        check_moves(t);
    }
    CHECK_NO_TYPE(MPI_Type_create_f90_integer(100, &t));

    /* a parameterized type: its envelope and contents give (p, r) back,
     * the same arguments give the same handle, and it computes */
    int ni, na, nd, combiner, ints[2];
    MPI_Datatype again, real8;
    CHECK_MPI(MPI_Type_create_f90_integer(9, &t));
    CHECK_MPI(MPI_Type_create_f90_integer(9, &again));
    CHECK(t == again, "the same handle for the same range");
    CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner));
    CHECK_EQ(combiner, MPI_COMBINER_F90_INTEGER);
    CHECK_EQ(ni, 1);
    CHECK_EQ(na + nd, 0);
    CHECK_MPI(MPI_Type_get_contents(t, 1, 0, 0, ints, NULL, NULL));
    CHECK_EQ(ints[0], 9);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);
    int isum = -1;
    CHECK_MPI(MPI_Allreduce(&rank, &isum, 1, t, MPI_SUM, MPI_COMM_WORLD));
    CHECK_EQ(isum, size * (size - 1) / 2);
    CHECK_MPI(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &real8));
    CHECK_MPI(MPI_Type_get_envelope(real8, &ni, &na, &nd, &combiner));
    CHECK_EQ(combiner, MPI_COMBINER_F90_REAL);
    CHECK_EQ(ni, 2);
    CHECK_MPI(MPI_Type_get_contents(real8, 2, 0, 0, ints, NULL, NULL));
    CHECK_EQ(ints[0], 15);
    CHECK_EQ(ints[1], MPI_UNDEFINED);
    double x = 0.5 + rank, dsum = -1;
    CHECK_MPI(MPI_Allreduce(&x, &dsum, 1, real8, MPI_SUM, MPI_COMM_WORLD));
    CHECK(dsum == 0.5 * size + size * (size - 1) / 2.0, "sum %g", dsum);
    /* derived types build on it */
    MPI_Datatype two;
    CHECK_MPI(MPI_Type_contiguous(2, real8, &two));
    CHECK_MPI(MPI_Type_commit(&two));
    CHECK_EQ(type_size(two), 16);
    check_moves(two);
    CHECK_MPI(MPI_Type_free(&two));
    if (is_leanmpi()) CHECK_ERRCLASS(MPI_Type_free(&t), MPI_ERR_TYPE); /* predefined */

    /* reals: precision p and range r, either MPI_UNDEFINED */
    static const int reals[][3] = {{6, MPI_UNDEFINED, 4}, {MPI_UNDEFINED, 37, 4}, {3, 10, 4}, {7, MPI_UNDEFINED, 8},
                                   {15, 307, 8},          {MPI_UNDEFINED, 38, 8}, {6, 300, 8}};
    for (int i = 0; i < 7; i++) {
        CHECK_MPI(MPI_Type_create_f90_real(reals[i][0], reals[i][1], &t));
        CHECK(type_size(t) == reals[i][2], "real(%d,%d): size %d", reals[i][0], reals[i][1], type_size(t));
        check_moves(t);
        CHECK_MPI(MPI_Type_create_f90_complex(reals[i][0], reals[i][1], &t));
        CHECK(type_size(t) == 2 * reals[i][2], "complex(%d,%d): size %d", reals[i][0], reals[i][1], type_size(t));
        check_moves(t);
    }
    CHECK_NO_TYPE(MPI_Type_create_f90_real(1000, MPI_UNDEFINED, &t));
    CHECK_NO_TYPE(MPI_Type_create_f90_real(MPI_UNDEFINED, 100000, &t));
    CHECK_NO_TYPE(MPI_Type_create_f90_complex(1000, 10, &t));

    /* by size within a class */
    static const int matches[][2] = {{MPI_TYPECLASS_INTEGER, 1}, {MPI_TYPECLASS_INTEGER, 2}, {MPI_TYPECLASS_INTEGER, 4},
                                     {MPI_TYPECLASS_INTEGER, 8}, {MPI_TYPECLASS_REAL, 4},    {MPI_TYPECLASS_REAL, 8},
                                     {MPI_TYPECLASS_COMPLEX, 8}, {MPI_TYPECLASS_COMPLEX, 16}};
    for (int i = 0; i < 8; i++) {
        CHECK_MPI(MPI_Type_match_size(matches[i][0], matches[i][1], &t));
        CHECK_EQ(type_size(t), matches[i][1]);
        check_moves(t);
    }
    CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
    CHECK(t == MPI_DOUBLE || t == MPI_REAL8 || t == MPI_DOUBLE_PRECISION, "an 8-byte real is a named real type");
    CHECK_ERRCLASS(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 7, &t), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_match_size(99, 4, &t), MPI_ERR_ARG);

    /* names of what came back */
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t));
    CHECK_MPI(MPI_Type_get_name(t, name, &len));
    CHECK(len > 0 && (int)strlen(name) == len, "a named type, '%s'", name);

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    /* MPI-4.1 */
    MPI_Datatype pair;
    CHECK_MPI(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pair));
    CHECK(pair == MPI_DOUBLE_INT, "double/int");
    CHECK_MPI(MPI_Type_get_value_index(MPI_INT, MPI_INT, &pair));
    CHECK(pair == MPI_2INT, "int/int");
    CHECK_MPI(MPI_Type_get_value_index(MPI_FLOAT, MPI_INT, &pair));
    CHECK(pair == MPI_FLOAT_INT, "float/int");
    CHECK_MPI(MPI_Type_get_value_index(MPI_SHORT, MPI_INT, &pair));
    CHECK(pair == MPI_SHORT_INT, "short/int");
    CHECK_MPI(MPI_Type_get_value_index(MPI_LONG, MPI_INT, &pair));
    CHECK(pair == MPI_LONG_INT, "long/int");
    CHECK_MPI(MPI_Type_get_value_index(MPI_LONG_DOUBLE, MPI_INT, &pair));
    CHECK(pair == MPI_LONG_DOUBLE_INT, "long double/int");
    CHECK_MPI(MPI_Type_get_value_index(MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, &pair));
    CHECK(pair == MPI_2DOUBLE_PRECISION, "2 double precision");
    CHECK_MPI(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &pair));
    CHECK(pair == MPI_DATATYPE_NULL, "no pair type for char/int");
    CHECK_MPI(MPI_Type_get_value_index(MPI_INT, MPI_DOUBLE, &pair));
    CHECK(pair == MPI_DATATYPE_NULL, "no pair type for int/double");
    CHECK_ERRCLASS(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &pair), MPI_ERR_TYPE);

    MPI_Info hw;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    len = (int)sizeof val;
    CHECK_MPI(MPI_Get_hw_resource_info(&hw));
    CHECK_MPI(MPI_Info_get_string(hw, "mpi_hw_resource_type", &len, val, &flag));
    CHECK(flag && len > 1, "mpi_hw_resource_type is set");
    CHECK_MPI(MPI_Info_free(&hw));
#endif

    mt_pass("types by property");
    CHECK_MPI(MPI_Finalize());
    return 0;
}
