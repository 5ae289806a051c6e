/* MPI_THREAD_MULTIPLE: a user callback that takes a lock of its own, while
 * another thread holds that lock and calls MPI.
 *
 * This is what mpi4py does: a Python callback (an attribute delete or copy
 * function, a generalized request's query, free or cancel function) takes
 * the interpreter lock, and a thread that holds the interpreter lock calls
 * short MPI functions (MPI_Info_set) without releasing it.  If the library
 * kept its own lock while running the callback, the two threads would wait
 * for each other forever.  Each case here: thread A takes "the interpreter
 * lock", starts thread B, waits until B's callback is running, then calls
 * MPI; B's callback then wants the interpreter lock.  A watchdog ends the
 * test with FAIL if a case does not finish in time. */
#define _POSIX_C_SOURCE 200809L
#include "mpitest.h"
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#define CASE_LIMIT_S 30

static pthread_mutex_t interp = PTHREAD_MUTEX_INITIALIZER;
static atomic_int in_callback;
static atomic_int callbacks_run;

/* What a Python callback does first: take the interpreter lock. */
static void callback_body(void)
{
    atomic_store(&in_callback, 1);
    pthread_mutex_lock(&interp);
    atomic_fetch_add(&callbacks_run, 1);
    pthread_mutex_unlock(&interp);
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)val, (void)extra;
    callback_body();
    return MPI_SUCCESS;
}

static int copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra;
    callback_body();
    *(void **)out = in;
    *flag = 0; /* not copied: the new communicator has no attribute to delete */
    return MPI_SUCCESS;
}

static int query_fn(void *extra, MPI_Status *st)
{
    (void)extra;
    callback_body();
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra, (void)complete;
    callback_body();
    return MPI_SUCCESS;
}

static int keyval;

/* Thread B of each case: an MPI call that runs one callback. */
static void *free_with_attribute(void *arg)
{
    (void)arg;
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Comm_set_attr(c, keyval, NULL));
    CHECK_MPI(MPI_Comm_free(&c)); /* delete_fn */
    return NULL;
}

static void *dup_with_attribute(void *arg)
{
    MPI_Comm *c = arg, d;
    CHECK_MPI(MPI_Comm_dup(*c, &d)); /* copy_fn */
    CHECK_MPI(MPI_Comm_free(&d));
    return NULL;
}

static void *wait_grequest(void *arg)
{
    MPI_Request *r = arg;
    CHECK_MPI(MPI_Grequest_complete(*r));
    CHECK_MPI(MPI_Wait(r, MPI_STATUS_IGNORE)); /* query_fn */
    return NULL;
}

static void *cancel_grequest(void *arg)
{
    MPI_Request *r = arg;
    CHECK_MPI(MPI_Cancel(r)); /* cancel_fn */
    return NULL;
}

static atomic_int case_done;

static void *watchdog(void *arg)
{
    const char *volatile *name = arg;
    for (;;) {
        int seen = atomic_load(&case_done);
        struct timespec t = {0, 100 * 1000 * 1000};
        int waited = 0;
        while (atomic_load(&case_done) == seen && waited < CASE_LIMIT_S * 10) {
            nanosleep(&t, NULL);
            waited++;
        }
        if (atomic_load(&case_done) < 0) return NULL;
        if (atomic_load(&case_done) == seen) {
            /* MPI cannot be called here: the library may be the one stuck */
            fprintf(stderr, "FAIL case '%s' did not finish in %d s: a callback and an MPI call wait for each other\n",
                    *name, CASE_LIMIT_S);
            fflush(stderr);
            _exit(1);
        }
    }
}

static void run_case(void *(*thread_b)(void *), void *arg)
{
    pthread_t b;
    int before = atomic_load(&callbacks_run);
    atomic_store(&in_callback, 0);
    pthread_mutex_lock(&interp); /* thread A holds the interpreter lock */
    pthread_create(&b, NULL, thread_b, arg);
    struct timespec t = {0, 1000 * 1000};
    while (!atomic_load(&in_callback)) nanosleep(&t, NULL);
    /* a short MPI call under the interpreter lock, as mpi4py makes them */
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "soft", "1:2"));
    CHECK_MPI(MPI_Info_free(&info));
    pthread_mutex_unlock(&interp);
    pthread_join(b, NULL);
    CHECK_EQ(atomic_load(&callbacks_run), before + 1);
    atomic_fetch_add(&case_done, 1);
}

int main(int argc, char **argv)
{
    int provided;
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK_EQ(provided, MPI_THREAD_MULTIPLE);
    const char *volatile name = "start";
    pthread_t dog;
    pthread_create(&dog, NULL, watchdog, (void *)&name);

    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL));
    name = "attribute delete function (MPI_Comm_free)";
    run_case(free_with_attribute, NULL);

    int copy_keyval;
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &copy_keyval, NULL));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Comm_set_attr(c, copy_keyval, &c));
    name = "attribute copy function (MPI_Comm_dup)";
    run_case(dup_with_attribute, &c);
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK_MPI(MPI_Comm_free_keyval(&copy_keyval));
    CHECK_MPI(MPI_Comm_free_keyval(&keyval));

    MPI_Request r;
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &r));
    name = "generalized request query function (MPI_Wait)";
    run_case(wait_grequest, &r);
    CHECK(r == MPI_REQUEST_NULL, "MPI_Wait left the request");

    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &r));
    name = "generalized request cancel function (MPI_Cancel)";
    run_case(cancel_grequest, &r);
    CHECK_MPI(MPI_Grequest_complete(r));
    CHECK_MPI(MPI_Request_free(&r));

    atomic_store(&case_done, -1);
    pthread_join(dog, NULL);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank(MPI_COMM_WORLD) == 0) printf("PASS threads_callback_locks: 4 cases\n");
    MPI_Finalize();
    return 0;
}
