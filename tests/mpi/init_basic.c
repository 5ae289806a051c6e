/* Initialization, environment queries and finalization. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int flag = -1, provided = -1, rank, size;

    /* These two may be called before MPI_Init. */
    if (MPI_Initialized(&flag) != MPI_SUCCESS || flag != 0) {
        fprintf(stderr, "FAIL MPI_Initialized before init: flag %d\n", flag);
        return 1;
    }
    if (MPI_Finalized(&flag) != MPI_SUCCESS || flag != 0) {
        fprintf(stderr, "FAIL MPI_Finalized before init: flag %d\n", flag);
        return 1;
    }

    int rc = MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAIL MPI_Init_thread returned %d\n", rc);
        return 1;
    }
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
              MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
          "thread level constants must be monotonic");
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED || provided == MPI_THREAD_SERIALIZED ||
              provided == MPI_THREAD_MULTIPLE,
          "provided thread level %d is not a valid level", provided);
    int q = -1;
    CHECK_MPI(MPI_Query_thread(&q));
    CHECK_EQ(q, provided);
    int ismain = 0;
    CHECK_MPI(MPI_Is_thread_main(&ismain));
    CHECK(ismain, "the thread that called MPI_Init_thread must be the main thread");

    flag = 0;
    CHECK_MPI(MPI_Initialized(&flag));
    CHECK(flag, "MPI_Initialized must be true after init");
    flag = 1;
    CHECK_MPI(MPI_Finalized(&flag));
    CHECK(!flag, "MPI_Finalized must be false before finalize");
    mt_pass("init_basic: Init_thread, Query_thread, Is_thread_main, Initialized");

    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d size %d", rank, size);
    int srank = -1, ssize = -1;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_SELF, &srank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_SELF, &ssize));
    CHECK_EQ(srank, 0);
    CHECK_EQ(ssize, 1);

    /* Every rank agrees on the size, and the ranks are a permutation of 0..size-1:
     * each rank sends (rank, size) to rank 0 over point-to-point. */
    if (rank == 0) {
        char *seen = calloc((size_t)size, 1);
        for (int i = 1; i < size; i++) {
            int msg[2];
            MPI_Status st;
            CHECK_MPI(MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &st));
            CHECK_EQ(msg[0], st.MPI_SOURCE);
            CHECK_EQ(msg[1], size);
            CHECK(!seen[msg[0]], "rank %d reported twice", msg[0]);
            seen[msg[0]] = 1;
        }
        free(seen);
    } else {
        int msg[2] = {rank, size};
        CHECK_MPI(MPI_Send(msg, 2, MPI_INT, 0, 11, MPI_COMM_WORLD));
    }
    mt_pass("init_basic: COMM_WORLD and COMM_SELF rank and size");

    char name[MPI_MAX_PROCESSOR_NAME + 1];
    int len = -1;
    memset(name, 0x7f, sizeof name);
    CHECK_MPI(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len <= MPI_MAX_PROCESSOR_NAME, "processor name length %d", len);
    CHECK(name[len] == '\0' && (int)strlen(name) == len, "processor name not terminated at len %d", len);

    int ver = -1, sub = -1;
    CHECK_MPI(MPI_Get_version(&ver, &sub));
    CHECK(ver >= 3, "MPI version %d.%d is older than 3", ver, sub);
    CHECK(sub >= 0, "subversion %d", sub);
    CHECK(MPI_VERSION >= 3, "MPI_VERSION macro %d", MPI_VERSION);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    memset(lib, 0x7f, sizeof lib);
    len = -1;
    CHECK_MPI(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING, "library version length %d", len);
    /* The standard says resultlen excludes the terminating null; Open MPI 4.1
     * counts it, so one extra is tolerated. */
    CHECK((int)strlen(lib) == len || (int)strlen(lib) == len - 1, "library version strlen %d != len %d",
          (int)strlen(lib), len);
    mt_pass("init_basic: Get_processor_name, Get_version, Get_library_version");

    double tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick < 1.0, "MPI_Wtick %g", tick);
    double t0 = MPI_Wtime(), prev = t0;
    for (int i = 0; i < 100000; i++) {
        double t = MPI_Wtime();
        CHECK(t >= prev, "MPI_Wtime went backwards: %.9f after %.9f", t, prev);
        prev = t;
    }
    /* Time advances: spin (bounded) until it moves by at least 1 ms. */
    for (long i = 0; i < 2000000000L && prev - t0 < 1e-3; i++) prev = MPI_Wtime();
    CHECK(prev - t0 >= 1e-3, "MPI_Wtime did not advance");
    mt_pass("init_basic: Wtime monotonic, Wtick > 0");

    void *val = NULL;
    flag = 0;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag));
    CHECK(flag && val, "MPI_TAG_UB attribute must be set on COMM_WORLD");
    CHECK(*(int *)val >= 32767, "MPI_TAG_UB %d < 32767", *(int *)val);
    int tag_ub = *(int *)val;
    /* The largest allowed tag works. */
    int out = 42, in = 0;
    MPI_Request req;
    MPI_Status st;
    CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, rank, tag_ub, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, rank, tag_ub, MPI_COMM_WORLD, &st));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_EQ(in, 42);
    CHECK_EQ(st.MPI_TAG, tag_ub);
    flag = 0;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag));
    if (flag) CHECK(*(int *)val == 0 || *(int *)val == 1, "MPI_WTIME_IS_GLOBAL %d", *(int *)val);
    mt_pass("init_basic: MPI_TAG_UB attribute");

    CHECK_MPI(MPI_Finalize());
    flag = 0;
    if (MPI_Finalized(&flag) != MPI_SUCCESS || !flag) {
        fprintf(stderr, "FAIL MPI_Finalized after finalize: flag %d\n", flag);
        return 1;
    }
    flag = 0;
    if (MPI_Initialized(&flag) != MPI_SUCCESS || !flag) {
        fprintf(stderr, "FAIL MPI_Initialized after finalize must stay true: flag %d\n", flag);
        return 1;
    }
    if (rank == 0) printf("PASS init_basic: Finalize, Finalized\n");
    return 0;
}
