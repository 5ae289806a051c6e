/* MPI_Type_get_value_index (MPI-4.1 section 6.9.4): the predefined
 * value-index pair type for MINLOC/MAXLOC, when there is one; otherwise
 * MPI_DATATYPE_NULL. Pairs of other types are built by the user. */
#include "api/impl_gen.h"

static const struct {
    MPI_Datatype value, index, pair;
} pairs[] = {
    {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},      {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
    {MPI_LONG, MPI_INT, MPI_LONG_INT},        {MPI_INT, MPI_INT, MPI_2INT},
    {MPI_SHORT, MPI_INT, MPI_SHORT_INT},      {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
    {MPI_REAL, MPI_REAL, MPI_2REAL},          {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
    {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
};

int impl_MPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type, MPI_Datatype *pair_type)
{
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].value == value_type && pairs[i].index == index_type) *pair_type = pairs[i].pair;
    return MPI_SUCCESS;
}
