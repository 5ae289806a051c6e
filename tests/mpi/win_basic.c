/* Window objects without communication: every creation flavor with its
 * predefined attributes checked against what was passed, user attributes
 * and their delete callbacks, the group, names, hints, error handlers and
 * dynamic attach/detach. */
#include "mpitest.h"
#include <stdint.h>

static int deletes, last_deleted_value;

static int count_delete(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)win;
    (void)keyval;
    CHECK(extra == &deletes, "extra_state is passed to the delete callback");
    deletes++;
    last_deleted_value = *(int *)val;
    return MPI_SUCCESS;
}

/* The predefined attributes must describe what was passed. */
static void check_attrs(MPI_Win win, void *base, MPI_Aint size, int disp_unit, int flavor)
{
    int flag = 0;
    void *b = (void *)1;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(flag, "MPI_WIN_BASE is set");
    CHECK(b == base, "MPI_WIN_BASE %p, expected %p", b, base);
    MPI_Aint *sz = NULL;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK(flag && sz, "MPI_WIN_SIZE is set");
    CHECK_EQ(*sz, size);
    int *du = NULL;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    CHECK(flag && du, "MPI_WIN_DISP_UNIT is set");
    CHECK_EQ(*du, disp_unit);
    int *fl = NULL;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    CHECK(flag && fl, "MPI_WIN_CREATE_FLAVOR is set");
    CHECK_EQ(*fl, flavor);
    int *model = NULL;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && model, "MPI_WIN_MODEL is set");
    CHECK(*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE, "model %d", *model);
}

static void check_group(MPI_Win win, MPI_Comm comm)
{
    MPI_Group wg, cg;
    int result = -1;
    CHECK_MPI(MPI_Win_get_group(win, &wg));
    CHECK_MPI(MPI_Comm_group(comm, &cg));
    CHECK_MPI(MPI_Group_compare(wg, cg, &result));
    CHECK_EQ(result, MPI_IDENT);
    int r = -1;
    CHECK_MPI(MPI_Group_rank(wg, &r));
    CHECK_EQ(r, mt_rank(comm));
    CHECK_MPI(MPI_Group_free(&wg));
    CHECK_MPI(MPI_Group_free(&cg));
}

static void test_create(MPI_Comm comm)
{
    int rank = mt_rank(comm);
    /* a different size and unit on every rank */
    int n = 3 + rank;
    double *mem = malloc(sizeof(double) * (size_t)n);
    MPI_Win win;
    CHECK_MPI(MPI_Win_create(mem, (MPI_Aint)(n * sizeof(double)), sizeof(double), MPI_INFO_NULL, comm, &win));
    check_attrs(win, mem, (MPI_Aint)(n * sizeof(double)), (int)sizeof(double), MPI_WIN_FLAVOR_CREATE);
    check_group(win, comm);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free sets the handle to MPI_WIN_NULL");

    /* a process may give no memory */
    CHECK_MPI(MPI_Win_create(rank % 2 ? NULL : mem, rank % 2 ? 0 : 8, 1, MPI_INFO_NULL, comm, &win));
    MPI_Aint *sz;
    int flag;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK_EQ(*sz, rank % 2 ? 0 : 8);
    CHECK_MPI(MPI_Win_free(&win));

#if MPI_VERSION >= 4
    /* the large-count form */
    CHECK_MPI(MPI_Win_create_c(mem, 16, 4, MPI_INFO_NULL, comm, &win));
    check_attrs(win, mem, 16, 4, MPI_WIN_FLAVOR_CREATE);
    CHECK_MPI(MPI_Win_free(&win));
#endif
    free(mem);
    mt_pass("MPI_Win_create");
}

static void test_allocate(MPI_Comm comm)
{
    int rank = mt_rank(comm);
    MPI_Aint size = 100 + 8 * rank;
    char *base = NULL;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(size, 2, MPI_INFO_NULL, comm, &base, &win));
    CHECK(base != NULL, "MPI_Win_allocate returns memory");
    /* the memory is the caller's to use */
    for (MPI_Aint i = 0; i < size; i++) base[i] = (char)(i + rank);
    for (MPI_Aint i = 0; i < size; i++) CHECK_EQ(base[i], (char)(i + rank));
    check_attrs(win, base, size, 2, MPI_WIN_FLAVOR_ALLOCATE);
    check_group(win, comm);
    CHECK_MPI(MPI_Win_free(&win));

#if MPI_VERSION >= 4
    CHECK_MPI(MPI_Win_allocate_c(64, 8, MPI_INFO_NULL, comm, &base, &win));
    check_attrs(win, base, 64, 8, MPI_WIN_FLAVOR_ALLOCATE);
    CHECK_MPI(MPI_Win_free(&win));
#endif
    mt_pass("MPI_Win_allocate");
}

static void test_dynamic(MPI_Comm comm)
{
    MPI_Win win;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win));
    int flag;
    void *b = (void *)1;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(flag && b == MPI_BOTTOM, "a dynamic window's base is MPI_BOTTOM");
    MPI_Aint *sz;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK_EQ(*sz, 0);
    int *fl;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    CHECK_EQ(*fl, MPI_WIN_FLAVOR_DYNAMIC);
    check_group(win, comm);

    char *mem = malloc(256);
    /* disjoint regions, attached out of order, detached in another order */
    CHECK_MPI(MPI_Win_attach(win, mem + 128, 64));
    CHECK_MPI(MPI_Win_attach(win, mem, 32));
    CHECK_MPI(MPI_Win_attach(win, mem + 64, 64)); /* adjacent to the one at 128 */
    CHECK_MPI(MPI_Win_detach(win, mem));
    CHECK_MPI(MPI_Win_detach(win, mem + 128));
    CHECK_MPI(MPI_Win_attach(win, mem, 64)); /* adjacent to the one at 64 */
    CHECK_MPI(MPI_Win_detach(win, mem + 64));
    CHECK_MPI(MPI_Win_detach(win, mem));
    /* everything detached: the same memory can be attached again */
    CHECK_MPI(MPI_Win_attach(win, mem, 256));
    CHECK_MPI(MPI_Win_detach(win, mem));
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
    mt_pass("MPI_Win_create_dynamic, attach, detach");
}

static void test_user_attrs(MPI_Comm comm)
{
    int kv1, kv2;
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &kv1, &deletes));
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &kv2, &deletes));
    MPI_Win win;
    char *base;
    CHECK_MPI(MPI_Win_allocate(16, 1, MPI_INFO_NULL, comm, &base, &win));
    static int v1 = 11, v2 = 22, v3 = 33;
    int flag = 1;
    int *got = NULL;
    CHECK_MPI(MPI_Win_get_attr(win, kv1, &got, &flag));
    CHECK(!flag, "no attribute before one is set");

    deletes = 0;
    CHECK_MPI(MPI_Win_set_attr(win, kv1, &v1));
    CHECK_MPI(MPI_Win_set_attr(win, kv2, &v2));
    CHECK_MPI(MPI_Win_get_attr(win, kv1, &got, &flag));
    CHECK(flag && got == &v1, "kv1 holds &v1");
    CHECK_MPI(MPI_Win_get_attr(win, kv2, &got, &flag));
    CHECK(flag && got == &v2, "kv2 holds &v2");
    /* replacing a value runs the delete callback on the old one */
    CHECK_MPI(MPI_Win_set_attr(win, kv2, &v3));
    CHECK_EQ(deletes, 1);
    CHECK_EQ(last_deleted_value, 22);
    CHECK_MPI(MPI_Win_get_attr(win, kv2, &got, &flag));
    CHECK(flag && got == &v3, "kv2 now holds &v3");
    /* delete_attr runs it too and removes the attribute */
    CHECK_MPI(MPI_Win_delete_attr(win, kv1));
    CHECK_EQ(deletes, 2);
    CHECK_EQ(last_deleted_value, 11);
    CHECK_MPI(MPI_Win_get_attr(win, kv1, &got, &flag));
    CHECK(!flag, "kv1 was deleted");
    CHECK_MPI(MPI_Win_set_attr(win, kv1, &v1));
    /* a keyval freed while in use keeps working for the attribute */
    CHECK_MPI(MPI_Win_free_keyval(&kv1));
    CHECK(kv1 == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval resets the keyval");
    /* freeing the window deletes the remaining two */
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_EQ(deletes, 4);

    /* attributes of one window are not those of another */
    MPI_Win w1, w2;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w1));
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w2));
    CHECK_MPI(MPI_Win_set_attr(w1, kv2, &v1));
    CHECK_MPI(MPI_Win_get_attr(w2, kv2, &got, &flag));
    CHECK(!flag, "an attribute belongs to its window");
    CHECK_MPI(MPI_Win_free(&w2));
    CHECK_EQ(deletes, 4);
    CHECK_MPI(MPI_Win_free(&w1));
    CHECK_EQ(deletes, 5);
    CHECK_EQ(last_deleted_value, 11);
    CHECK_MPI(MPI_Win_free_keyval(&kv2));
    mt_pass("window attributes and delete callbacks");
}

static void test_names(MPI_Comm comm)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    CHECK_MPI(MPI_Get_library_version(lib, &len));
    if (!strncmp(lib, "LeanMPI", 7)) {
        /* MPI-4.1 names the null handles; of the peers, MPICH 4.1 does so
         * for communicators and datatypes but not windows */
        CHECK_MPI(MPI_Win_get_name(MPI_WIN_NULL, name, &len));
        CHECK(!strcmp(name, "MPI_WIN_NULL"), "%s", name);
        CHECK_EQ(len, strlen(name));
    }
    MPI_Win win;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win));
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECK_EQ(len, 0);
    /* the Fortran handle converts back to the same window */
    CHECK(MPI_Win_f2c(MPI_Win_c2f(win)) == win, "MPI_Win_f2c(MPI_Win_c2f(win)) is win");
    CHECK_MPI(MPI_Win_set_name(win, "halo window"));
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECK(!strcmp(name, "halo window"), "%s", name);
    CHECK_EQ(len, strlen("halo window"));
    char longname[2 * MPI_MAX_OBJECT_NAME];
    memset(longname, 'w', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK_MPI(MPI_Win_set_name(win, longname));
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECK_EQ(len, MPI_MAX_OBJECT_NAME - 1);
    CHECK_EQ(strlen(name), MPI_MAX_OBJECT_NAME - 1);
    CHECK_MPI(MPI_Win_free(&win));
    mt_pass("window names");
}

static void info_expect(MPI_Info info, const char *key, const char *value)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    CHECK_MPI(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag, "hint %s is reported", key);
    CHECK(!strcmp(v, value), "hint %s = '%.64s', expected '%s'", key, v, value);
}

static void test_info(MPI_Comm comm)
{
    MPI_Info in, used;
    CHECK_MPI(MPI_Info_create(&in));
    CHECK_MPI(MPI_Info_set(in, "no_locks", "true"));
    CHECK_MPI(MPI_Info_set(in, "accumulate_ordering", "none"));
    MPI_Win win;
    char *base;
    CHECK_MPI(MPI_Win_allocate(8, 1, in, comm, &base, &win));
    /* changing the program's object afterwards changes nothing */
    CHECK_MPI(MPI_Info_set(in, "no_locks", "false"));
    CHECK_MPI(MPI_Win_get_info(win, &used));
    info_expect(used, "no_locks", "true");
    info_expect(used, "accumulate_ordering", "none");
    CHECK_MPI(MPI_Info_free(&used));
    /* set_info replaces the values given and keeps the others */
    CHECK_MPI(MPI_Info_free(&in));
    CHECK_MPI(MPI_Info_create(&in));
    CHECK_MPI(MPI_Info_set(in, "same_size", "true"));
    CHECK_MPI(MPI_Info_set(in, "accumulate_ordering", "rar,waw"));
    CHECK_MPI(MPI_Win_set_info(win, in));
    CHECK_MPI(MPI_Win_get_info(win, &used));
    info_expect(used, "no_locks", "true");
    info_expect(used, "accumulate_ordering", "rar,waw");
    info_expect(used, "same_size", "true");
    CHECK_MPI(MPI_Info_free(&used));
    CHECK_MPI(MPI_Info_free(&in));
    CHECK_MPI(MPI_Win_set_info(win, MPI_INFO_NULL));
    CHECK_MPI(MPI_Win_free(&win));
    mt_pass("window hints");
}

static int handler_calls, handler_code;
static MPI_Win handler_win;

static void win_handler(MPI_Win *win, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_win = *win;
}

static void test_errhandler(MPI_Comm comm)
{
    MPI_Win win;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win));
    MPI_Errhandler eh;
    /* windows start with MPI_ERRORS_ARE_FATAL */
    CHECK_MPI(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "the initial window error handler is MPI_ERRORS_ARE_FATAL");
    CHECK_MPI(MPI_Errhandler_free(&eh));

    MPI_Errhandler mine;
    CHECK_MPI(MPI_Win_create_errhandler(win_handler, &mine));
    CHECK_MPI(MPI_Win_set_errhandler(win, mine));
    CHECK_MPI(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == mine, "get_errhandler returns the handler set");
    CHECK_MPI(MPI_Errhandler_free(&eh));
    CHECK_MPI(MPI_Errhandler_free(&mine)); /* the window keeps its reference */

    handler_calls = 0;
    CHECK_MPI(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK_EQ(handler_calls, 1);
    CHECK_EQ(handler_code, MPI_ERR_OTHER);
    CHECK(handler_win == win, "the handler gets the window");

    /* an error in a window function goes to the window's handler: detaching
     * memory that was never attached */
    int x;
    handler_calls = 0;
    int rc = MPI_Win_detach(win, &x);
    CHECK(rc != MPI_SUCCESS, "detaching unknown memory fails");
    CHECK_EQ(handler_calls, 1);
    CHECK_EQ(handler_code, rc);
    CHECK(handler_win == win, "the handler gets the window");

    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    handler_calls = 0;
    CHECK(MPI_Win_detach(win, &x) != MPI_SUCCESS, "detaching unknown memory fails");
    CHECK_EQ(handler_calls, 0);
    CHECK_MPI(MPI_Win_free(&win));
    mt_pass("window error handlers");
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    for (int i = 0; i < 2; i++) {
        test_create(comms[i]);
        test_allocate(comms[i]);
        test_dynamic(comms[i]);
    }
    /* over a split: the window's group is the subgroup */
    MPI_Comm half;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, mt_rank(MPI_COMM_WORLD) % 2, -mt_rank(MPI_COMM_WORLD), &half));
    test_create(half);
    test_allocate(half);
    /* windows on a communicator and traffic on it do not interfere */
    MPI_Win win;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, half, &win));
    int v = mt_rank(half), sum = -1;
    CHECK_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, half));
    int n = mt_size(half);
    CHECK_EQ(sum, n * (n - 1) / 2);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Comm_free(&half));

    test_user_attrs(MPI_COMM_WORLD);
    test_names(MPI_COMM_WORLD);
    test_info(MPI_COMM_WORLD);
    test_errhandler(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
