/* Communicator hints (MPI_Comm_set_info/get_info, copied by MPI_Comm_dup,
 * replaced by MPI_Comm_dup_with_info), the nonblocking duplicates and
 * MPI_Comm_get_parent. */
#include "mpitest.h"

static int is_leanmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(v, &len);
    return !strncmp(v, "LeanMPI", 7);
}

/* The value of key in comm's hints, or "" when absent. */
static const char *hint(MPI_Comm comm, const char *key)
{
    static char val[MPI_MAX_INFO_VAL + 1];
    MPI_Info info;
    int len = (int)sizeof val, flag = 0;
    CHECK_MPI(MPI_Comm_get_info(comm, &info));
    CHECK_MPI(MPI_Info_get_string(info, key, &len, val, &flag));
    CHECK_MPI(MPI_Info_free(&info));
    if (!flag) val[0] = '\0';
    return val;
}

static void check_sum(MPI_Comm c)
{
    int size = mt_size(c), rank = mt_rank(c), sum = -1;
    CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_EQ(sum, size * (size - 1) / 2);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    MPI_Comm base;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &base));
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    CHECK_MPI(MPI_Info_set(info, "mpi_assert_allow_overtaking", "true"));
    CHECK_MPI(MPI_Comm_set_info(base, info));
    CHECK_MPI(MPI_Info_free(&info));
    CHECK(!strcmp(hint(base, "mpi_assert_no_any_tag"), "true"), "no_any_tag = '%s'",
          hint(base, "mpi_assert_no_any_tag"));
    CHECK(!strcmp(hint(base, "mpi_assert_allow_overtaking"), "true"), "allow_overtaking");
    /* a hint never set is absent, or reported at its default */
    CHECK(!strcmp(hint(base, "mpi_assert_no_any_source"), "") ||
              !strcmp(hint(base, "mpi_assert_no_any_source"), "false"),
          "no_any_source was never set");

    /* a later call sets more hints and changes a value */
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
    CHECK_MPI(MPI_Info_set(info, "mpi_assert_allow_overtaking", "false"));
    CHECK_MPI(MPI_Comm_set_info(base, info));
    CHECK_MPI(MPI_Info_free(&info));
    CHECK(!strcmp(hint(base, "mpi_assert_no_any_source"), "true"), "no_any_source");
    CHECK(!strcmp(hint(base, "mpi_assert_allow_overtaking"), "false"), "allow_overtaking changed");
    CHECK(!strcmp(hint(base, "mpi_assert_no_any_tag"), "true"), "no_any_tag kept");

    /* MPI_Comm_dup keeps the hints (MPI-4.1 section 7.4.2; MPICH 4.0 drops them) */
    int strict = is_leanmpi();
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(base, &dup));
    if (strict) {
        CHECK(!strcmp(hint(dup, "mpi_assert_no_any_tag"), "true"), "dup: no_any_tag");
        CHECK(!strcmp(hint(dup, "mpi_assert_no_any_source"), "true"), "dup: no_any_source");
    }
    check_sum(dup);
    CHECK_MPI(MPI_Comm_free(&dup));

    /* MPI_Comm_dup_with_info replaces them */
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "mpi_assert_exact_length", "true"));
    CHECK_MPI(MPI_Comm_dup_with_info(base, info, &dup));
    CHECK(!strcmp(hint(dup, "mpi_assert_exact_length"), "true"), "dup_with_info: exact_length");
    CHECK(strcmp(hint(dup, "mpi_assert_no_any_tag"), "true"), "dup_with_info: no_any_tag gone");
    CHECK(strcmp(hint(base, "mpi_assert_exact_length"), "true"), "the parent is unchanged");
    check_sum(dup);
    CHECK_MPI(MPI_Comm_free(&dup));

    /* nonblocking duplicates are usable once their request completes */
    MPI_Request req;
    MPI_Status st;
    CHECK_MPI(MPI_Comm_idup(base, &dup, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "the request is freed");
    int result;
    CHECK_MPI(MPI_Comm_compare(dup, base, &result));
    CHECK_EQ(result, MPI_CONGRUENT);
    if (strict) CHECK(!strcmp(hint(dup, "mpi_assert_no_any_tag"), "true"), "idup: hints copied");
    check_sum(dup);
    CHECK_MPI(MPI_Comm_free(&dup));

    MPI_Comm dups[3];
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    for (int i = 0; i < 3; i++) CHECK_MPI(MPI_Comm_idup_with_info(base, info, &dups[i], &reqs[i]));
    CHECK_MPI(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++) {
        CHECK(!strcmp(hint(dups[i], "mpi_assert_exact_length"), "true"), "idup_with_info: exact_length");
        CHECK(strcmp(hint(dups[i], "mpi_assert_no_any_source"), "true"), "idup_with_info: no_any_source gone");
        for (int j = 0; j < i; j++) {
            CHECK_MPI(MPI_Comm_compare(dups[i], dups[j], &result));
            CHECK_EQ(result, MPI_CONGRUENT);
        }
        check_sum(dups[i]);
    }
    for (int i = 0; i < 3; i++) CHECK_MPI(MPI_Comm_free(&dups[i]));
    CHECK_MPI(MPI_Info_free(&info));

    /* hints on a predefined communicator */
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
    CHECK_MPI(MPI_Comm_set_info(MPI_COMM_WORLD, info));
    CHECK(!strcmp(hint(MPI_COMM_WORLD, "mpi_assert_no_any_tag"), "false"), "world hint");
    CHECK_MPI(MPI_Info_free(&info));

    MPI_Comm parent = MPI_COMM_WORLD;
    CHECK_MPI(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "not spawned: no parent");

    /* bad arguments */
    CHECK_ERRCLASS(MPI_Comm_set_info(MPI_COMM_NULL, MPI_INFO_NULL), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_get_info(MPI_COMM_NULL, &info), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_idup(MPI_COMM_NULL, &dup, &req), MPI_ERR_COMM);

    CHECK_MPI(MPI_Comm_free(&base));
    mt_pass("communicator hints, idup, get_parent");
    CHECK_MPI(MPI_Finalize());
    return 0;
}
