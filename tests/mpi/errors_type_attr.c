/* Errors tied to no communicator, window or file follow MPI-4.1 section
 * 9.3: they go to MPI_COMM_SELF's handler. A datatype attribute whose
 * delete or copy callback fails makes MPI_Type_delete_attr, MPI_Type_free
 * and MPI_Type_dup return the error under MPI_ERRORS_RETURN (no abort),
 * and a handler set on MPI_COMM_SELF sees each of them. */
#include "mpitest.h"

static int calls_on_self, last_code;

static void on_self(MPI_Comm *comm, int *code, ...)
{
    CHECK(*comm == MPI_COMM_SELF, "the handler ran on another communicator");
    calls_on_self++;
    last_code = *code;
}

static int failing_delete(MPI_Datatype t, int keyval, void *val, void *extra)
{
    (void)t, (void)keyval, (void)val, (void)extra;
    return MPI_ERR_OTHER;
}

static int failing_copy(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)keyval, (void)extra, (void)in;
    *(void **)out = NULL;
    *flag = 1; /* says "copy", and fails: the failure wins */
    return MPI_ERR_OTHER;
}

static int class_of(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int kv_del, kv_copy;
    CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, failing_delete, &kv_del, NULL));
    CHECK_MPI(MPI_Type_create_keyval(failing_copy, MPI_TYPE_NULL_DELETE_FN, &kv_copy, NULL));
    for (int with_handler = 0; with_handler < 2; with_handler++) {
        MPI_Errhandler eh = MPI_ERRORS_RETURN;
        if (with_handler) CHECK_MPI(MPI_Comm_create_errhandler(on_self, &eh));
        CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
        calls_on_self = 0;
        MPI_Datatype t, d = MPI_DATATYPE_NULL;
        CHECK_MPI(MPI_Type_dup(MPI_DOUBLE, &t));
        /* delete_attr: the callback's error comes back (the attribute may
         * stay: a failed delete leaves it to the implementation) */
        CHECK_MPI(MPI_Type_set_attr(t, kv_del, &rank));
        int rc = MPI_Type_delete_attr(t, kv_del);
        CHECK(class_of(rc) == MPI_ERR_OTHER, "MPI_Type_delete_attr returned class %d", class_of(rc));
        /* set_attr over it runs the delete callback on the old value first */
        rc = MPI_Type_set_attr(t, kv_del, &rank);
        if (rc != MPI_SUCCESS) {
            CHECK(class_of(rc) == MPI_ERR_OTHER, "MPI_Type_set_attr returned class %d", class_of(rc));
            calls_on_self--; /* counted below only where the attribute stayed */
        }
        /* free: the same */
        rc = MPI_Type_free(&t);
        CHECK(class_of(rc) == MPI_ERR_OTHER, "MPI_Type_free returned class %d", class_of(rc));
        /* dup: the copy callback's error comes back, no new type */
        MPI_Datatype u;
        CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &u));
        CHECK_MPI(MPI_Type_set_attr(u, kv_copy, &rank));
        d = MPI_INT; /* must come back as MPI_DATATYPE_NULL */
        rc = MPI_Type_dup(u, &d);
        CHECK(class_of(rc) == MPI_ERR_OTHER, "MPI_Type_dup returned class %d", class_of(rc));
        CHECK(d == MPI_DATATYPE_NULL, "a failed MPI_Type_dup made a type");
        CHECK_MPI(MPI_Type_delete_attr(u, kv_copy));
        CHECK_MPI(MPI_Type_free(&u));
        if (with_handler) {
            CHECK_EQ(calls_on_self, 3); /* delete_attr, free, dup (set_attr discounted) */
            CHECK_EQ(class_of(last_code), MPI_ERR_OTHER);
            CHECK_MPI(MPI_Errhandler_free(&eh));
        }
    }
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Type_free_keyval(&kv_del));
    CHECK_MPI(MPI_Type_free_keyval(&kv_copy));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS errors_type_attr\n");
    MPI_Finalize();
    return 0;
}
