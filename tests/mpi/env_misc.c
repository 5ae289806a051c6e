/* Environment calls: MPI_Get_address of the buffer sentinels, removal of
 * user error classes, codes and strings (a class or code goes only once
 * its string and codes have gone), and MPI_Get_hw_resource_info. */
#include "mpitest.h"

#define MPI41 (MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1))

static void addresses(void)
{
    MPI_Aint a = -1;
    /* any address is a location, MPI_BOTTOM and MPI_IN_PLACE included */
    CHECK_MPI(MPI_Get_address(MPI_BOTTOM, &a));
    CHECK_EQ(a, (MPI_Aint)(size_t)MPI_BOTTOM);
    CHECK_MPI(MPI_Get_address(MPI_IN_PLACE, &a));
    CHECK_EQ(a, (MPI_Aint)(size_t)MPI_IN_PLACE);
    int x;
    CHECK_MPI(MPI_Get_address(&x, &a));
    CHECK_EQ(a, (MPI_Aint)(size_t)&x);
}

#if MPI41
static void remove_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, code1, code2, len;
    char s[MPI_MAX_ERROR_STRING];
    CHECK_MPI(MPI_Add_error_class(&cls));
    CHECK_MPI(MPI_Add_error_string(cls, "class"));
    CHECK_MPI(MPI_Add_error_code(cls, &code1));
    CHECK_MPI(MPI_Add_error_code(cls, &code2));
    CHECK_MPI(MPI_Add_error_string(code2, "code 2"));

    CHECK(MPI_Remove_error_class(cls) != MPI_SUCCESS, "a class with codes cannot go");
    CHECK(MPI_Remove_error_code(code2) != MPI_SUCCESS, "a code with a string cannot go");
    CHECK_MPI(MPI_Remove_error_string(code2));
    CHECK_MPI(MPI_Error_string(code2, s, &len));
    CHECK_EQ(len, 0);
    CHECK_MPI(MPI_Remove_error_code(code2));
    CHECK(MPI_Remove_error_code(code2) != MPI_SUCCESS, "a code goes only once");
    CHECK_MPI(MPI_Remove_error_code(code1)); /* never had a string */
    CHECK(MPI_Remove_error_class(cls) != MPI_SUCCESS, "a class with a string cannot go");
    CHECK_MPI(MPI_Remove_error_string(cls));
    CHECK_MPI(MPI_Remove_error_class(cls));
    CHECK(MPI_Remove_error_class(cls) != MPI_SUCCESS, "a class goes only once");
    CHECK(MPI_Remove_error_class(MPI_ERR_OTHER) != MPI_SUCCESS, "predefined classes stay");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void hw_info(void)
{
    MPI_Info info = MPI_INFO_NULL;
    CHECK_MPI(MPI_Get_hw_resource_info(&info));
    CHECK(info != MPI_INFO_NULL, "a new info object");
    int nkeys = -1;
    CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys >= 0, "nkeys %d", nkeys);
    /* a new object every time: freeing one leaves the other */
    MPI_Info again;
    CHECK_MPI(MPI_Get_hw_resource_info(&again));
    CHECK(again != info, "two calls, two objects");
    CHECK_MPI(MPI_Info_free(&info));
    CHECK_MPI(MPI_Info_get_nkeys(again, &nkeys));
    CHECK_MPI(MPI_Info_free(&again));
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    addresses();
#if MPI41
    remove_errors();
    hw_info();
#endif
    mt_pass("env_misc: Get_address of sentinels, removal of user errors, Get_hw_resource_info");
    MPI_Finalize();
    return 0;
}
