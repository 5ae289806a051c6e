/* LMTEST-LEANMPI-ONLY: checks classes for erroneous window calls (stale
 * handles, overlapping attachments) that the standard leaves open, and
 * that one-sided calls outside an epoch are refused.
 *
 * Bad input to the window functions under MPI_ERRORS_RETURN: the right
 * error class, no crash, no hang, and the window still usable after. */
#include "mpitest.h"

static int is_leanmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(v, &len);
    return !strncmp(v, "LeanMPI", 7);
}

static int failed;

static int fail_once(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)win;
    (void)keyval;
    (void)val;
    (void)extra;
    return failed++ ? MPI_SUCCESS : MPI_ERR_OTHER;
}

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);
    char buf[64];
    char *base;
    MPI_Aint sz;
    int du, flag;
    void *val;
    MPI_Win win = MPI_WIN_NULL;

    /* creation arguments (every rank makes the same bad call) */
    CHECK_ERRCLASS(MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE);
    CHECK_ERRCLASS(MPI_Win_create(buf, 8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
    CHECK_ERRCLASS(MPI_Win_create_c(buf, 8, -4, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
    CHECK_ERRCLASS(MPI_Win_create(buf, 8, 1, MPI_INFO_NULL, MPI_COMM_NULL, &win), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Win_allocate(-8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_SIZE);
    CHECK_ERRCLASS(MPI_Win_allocate_c(8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_DISP);
    CHECK_ERRCLASS(MPI_Win_allocate_shared(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_SIZE);
    CHECK_ERRCLASS(MPI_Win_allocate_shared_c(8, -1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_DISP);
    CHECK_ERRCLASS(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_NULL, &win), MPI_ERR_COMM);
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    MPI_Info stale = info;
    CHECK_MPI(MPI_Info_free(&info));
    CHECK_ERRCLASS(MPI_Win_create(buf, 8, 1, stale, MPI_COMM_WORLD, &win), MPI_ERR_INFO);
    CHECK_ERRCLASS(MPI_Win_create_dynamic(stale, MPI_COMM_WORLD, &win), MPI_ERR_INFO);
    CHECK(win == MPI_WIN_NULL, "no window came out of a failed creation");
    if (size >= 2) {
        /* windows live on intracommunicators only */
        MPI_Comm half, inter;
        int color = rank % 2;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half));
        CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7, &inter));
        CHECK_ERRCLASS(MPI_Win_create_dynamic(MPI_INFO_NULL, inter, &win), MPI_ERR_COMM);
        CHECK_ERRCLASS(MPI_Win_allocate(8, 1, MPI_INFO_NULL, inter, &base, &win), MPI_ERR_COMM);
        CHECK_MPI(MPI_Comm_free(&inter));
        CHECK_MPI(MPI_Comm_free(&half));
    }
    mt_pass("creation arguments");

    /* invalid and freed windows: MPI_ERR_WIN */
    CHECK_ERRCLASS(MPI_Win_get_attr(MPI_WIN_NULL, MPI_WIN_BASE, &val, &flag), MPI_ERR_WIN);
    CHECK_ERRCLASS(MPI_Win_set_name(MPI_WIN_NULL, "x"), MPI_ERR_WIN);
    CHECK_ERRCLASS(MPI_Win_free(&win), MPI_ERR_WIN);
    MPI_Group g;
    CHECK_ERRCLASS(MPI_Win_get_group(MPI_WIN_NULL, &g), MPI_ERR_WIN);
    CHECK_ERRCLASS(MPI_Win_get_group((MPI_Win)MPI_COMM_WORLD, &g), MPI_ERR_WIN);
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Win freed = win;
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_ERRCLASS(MPI_Win_get_attr(freed, MPI_WIN_SIZE, &val, &flag), MPI_ERR_WIN);
    CHECK_ERRCLASS(MPI_Win_free(&freed), MPI_ERR_WIN);
    CHECK_ERRCLASS(MPI_Win_attach(freed, buf, 8), MPI_ERR_WIN);
    CHECK_ERRCLASS(MPI_Win_shared_query(freed, 0, &sz, &du, &base), MPI_ERR_WIN);
    MPI_Errhandler eh;
    CHECK_ERRCLASS(MPI_Win_get_errhandler(freed, &eh), MPI_ERR_WIN);
    int kv;
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kv, NULL));
    CHECK_ERRCLASS(MPI_Win_set_attr(freed, kv, buf), MPI_ERR_WIN);
    CHECK_ERRCLASS(MPI_Win_delete_attr(freed, kv), MPI_ERR_WIN);
    mt_pass("invalid and freed windows");

    /* flavor rules */
    CHECK_MPI(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_ERRCLASS(MPI_Win_attach(win, buf, 8), MPI_ERR_RMA_FLAVOR);
    CHECK_ERRCLASS(MPI_Win_detach(win, buf), MPI_ERR_RMA_FLAVOR);
    CHECK_ERRCLASS(MPI_Win_shared_query(win, size, &sz, &du, &base), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Win_shared_query(win, -5, &sz, &du, &base), MPI_ERR_RANK);
    /* keyvals: predefined ones are read-only, others' kinds do not apply */
    CHECK_ERRCLASS(MPI_Win_set_attr(win, MPI_WIN_BASE, buf), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Win_delete_attr(win, MPI_WIN_SIZE), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Win_get_attr(win, MPI_TAG_UB, &val, &flag), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Win_delete_attr(win, kv), MPI_ERR_KEYVAL); /* not set */
    int ckv;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckv, NULL));
    CHECK_ERRCLASS(MPI_Win_set_attr(win, ckv, buf), MPI_ERR_KEYVAL);
    CHECK_MPI(MPI_Comm_free_keyval(&ckv));
    /* a communicator's error handler does not fit a window */
    MPI_Errhandler ceh;
    CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &ceh)); /* predefined: fits */
    CHECK_MPI(MPI_Win_set_errhandler(win, ceh));
    CHECK_ERRCLASS(MPI_Win_set_errhandler(win, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    MPI_Comm_create_errhandler(comm_handler, &ceh);
    CHECK_ERRCLASS(MPI_Win_set_errhandler(win, ceh), MPI_ERR_ARG);
    CHECK_MPI(MPI_Errhandler_free(&ceh));
    /* one-sided calls outside any epoch are refused */
    if (is_leanmpi()) {
        int x = 0;
        CHECK_ERRCLASS(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Get(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Accumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
        CHECK_ERRCLASS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    }
    /* the window still works after all that */
    int *dup;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &dup, &flag));
    CHECK(flag && *dup == 1, "disp_unit still 1");
    CHECK_MPI(MPI_Win_free(&win));

    /* dynamic windows: overlaps and unknown regions */
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_ERRCLASS(MPI_Win_shared_query(win, 0, &sz, &du, &base), MPI_ERR_RMA_FLAVOR);
    CHECK_MPI(MPI_Win_attach(win, buf + 16, 16));
    CHECK_ERRCLASS(MPI_Win_attach(win, buf + 16, 16), MPI_ERR_RMA_ATTACH); /* the same */
    CHECK_ERRCLASS(MPI_Win_attach(win, buf + 8, 16), MPI_ERR_RMA_ATTACH);  /* overlaps its start */
    CHECK_ERRCLASS(MPI_Win_attach(win, buf + 24, 16), MPI_ERR_RMA_ATTACH); /* overlaps its end */
    CHECK_ERRCLASS(MPI_Win_attach(win, buf, 64), MPI_ERR_RMA_ATTACH);      /* contains it */
    CHECK_ERRCLASS(MPI_Win_attach(win, buf + 20, 4), MPI_ERR_RMA_ATTACH);  /* inside it */
    CHECK_ERRCLASS(MPI_Win_attach(win, buf, -1), MPI_ERR_SIZE);
    CHECK_MPI(MPI_Win_attach(win, buf, 16));      /* right before: fine */
    CHECK_MPI(MPI_Win_attach(win, buf + 32, 16)); /* right after: fine */
    CHECK_ERRCLASS(MPI_Win_detach(win, buf + 1), MPI_ERR_BASE);
    CHECK_ERRCLASS(MPI_Win_detach(win, buf + 48), MPI_ERR_BASE);
    CHECK_MPI(MPI_Win_detach(win, buf + 16));
    CHECK_ERRCLASS(MPI_Win_detach(win, buf + 16), MPI_ERR_BASE); /* twice */
    CHECK_MPI(MPI_Win_detach(win, buf));
    CHECK_MPI(MPI_Win_detach(win, buf + 32));
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Win_free_keyval(&kv));
    mt_pass("flavor rules, keyvals, attach and detach");

    /* a delete callback that fails keeps the window alive */
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, fail_once, &kv, NULL));
    CHECK_MPI(MPI_Win_allocate(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Win_set_attr(win, kv, buf));
    MPI_Win kept = win;
    CHECK_ERRCLASS(MPI_Win_free(&win), MPI_ERR_OTHER);
    CHECK(win == kept, "the handle is left as it was");
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &val, &flag));
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Win_free_keyval(&kv));
    mt_pass("a failing delete callback");
    CHECK_MPI(MPI_Finalize());
    return 0;
}
