/* Names of communicators and datatypes: predefined names, names set and
 * replaced, names not passed on by duplication, truncation, the names of
 * the null handles (MPI-4.1), and bad handles. */
#include "mpitest.h"

static const char *type_name(MPI_Datatype t)
{
    static char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_MPI(MPI_Type_get_name(t, name, &len));
    CHECK_EQ(len, strlen(name));
    return name;
}

static const char *comm_name(MPI_Comm c)
{
    static char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_MPI(MPI_Comm_get_name(c, name, &len));
    CHECK_EQ(len, strlen(name));
    return name;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* communicators */
    CHECK(!strcmp(comm_name(MPI_COMM_WORLD), "MPI_COMM_WORLD"), "%s", comm_name(MPI_COMM_WORLD));
    CHECK(!strcmp(comm_name(MPI_COMM_SELF), "MPI_COMM_SELF"), "%s", comm_name(MPI_COMM_SELF));
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(!strcmp(comm_name(dup), ""), "a duplicate has no name: '%s'", comm_name(dup));
    CHECK_MPI(MPI_Comm_set_name(dup, "first"));
    CHECK(!strcmp(comm_name(dup), "first"), "%s", comm_name(dup));
    CHECK_MPI(MPI_Comm_set_name(dup, "second name"));
    CHECK(!strcmp(comm_name(dup), "second name"), "%s", comm_name(dup));
    CHECK_MPI(MPI_Comm_free(&dup));

    /* datatypes */
    CHECK(!strcmp(type_name(MPI_INT), "MPI_INT"), "%s", type_name(MPI_INT));
    CHECK(!strcmp(type_name(MPI_DOUBLE_INT), "MPI_DOUBLE_INT"), "%s", type_name(MPI_DOUBLE_INT));
    MPI_Datatype vec, vdup;
    CHECK_MPI(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
    CHECK(!strcmp(type_name(vec), ""), "a new type has no name");
    CHECK_MPI(MPI_Type_set_name(vec, "vector of ints"));
    CHECK(!strcmp(type_name(vec), "vector of ints"), "%s", type_name(vec));
    CHECK_MPI(MPI_Type_dup(vec, &vdup));
    /* the name is not passed on (Open MPI gives duplicates a name of its own) */
    CHECK(strcmp(type_name(vdup), "vector of ints"), "a duplicate has its own name: '%s'", type_name(vdup));
    CHECK_MPI(MPI_Type_set_name(vec, "renamed"));
    CHECK(!strcmp(type_name(vec), "renamed"), "%s", type_name(vec));
    /* too long a name is cut to MPI_MAX_OBJECT_NAME - 1 characters */
    char longname[2 * MPI_MAX_OBJECT_NAME];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK_MPI(MPI_Type_set_name(vdup, longname));
    CHECK_EQ(strlen(type_name(vdup)), MPI_MAX_OBJECT_NAME - 1);
    CHECK_MPI(MPI_Type_free(&vdup));
    CHECK_MPI(MPI_Type_free(&vec));
    /* a predefined type may be renamed */
    CHECK_MPI(MPI_Type_set_name(MPI_SHORT, "short integer"));
    CHECK(!strcmp(type_name(MPI_SHORT), "short integer"), "%s", type_name(MPI_SHORT));
    CHECK_MPI(MPI_Type_set_name(MPI_SHORT, "MPI_SHORT"));

    /* bad handles */
    CHECK_ERRCLASS(MPI_Comm_set_name(MPI_COMM_NULL, "x"), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Type_set_name(MPI_DATATYPE_NULL, "x"), MPI_ERR_TYPE);
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    /* MPI-4.1: the null handles have names */
    CHECK(!strcmp(comm_name(MPI_COMM_NULL), "MPI_COMM_NULL"), "%s", comm_name(MPI_COMM_NULL));
    CHECK(!strcmp(type_name(MPI_DATATYPE_NULL), "MPI_DATATYPE_NULL"), "%s", type_name(MPI_DATATYPE_NULL));
#endif
    mt_pass("object names");
    CHECK_MPI(MPI_Finalize());
    return 0;
}
