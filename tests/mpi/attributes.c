/* Attribute caching on communicators and datatypes: keyvals, set / get /
 * delete, copy callbacks on dup (flag semantics, values, errors), delete
 * callbacks on free / delete / replace, keyvals freed while in use, error
 * classes, and the deletion of MPI_COMM_SELF's attributes at the start of
 * MPI_Finalize (most recently set first). */
#include "mpitest.h"

#define MAXLOG 64

/* every callback appends (what, keyval, value) to one log */
typedef struct {
    char what;
    int keyval;
    long val;
} entry;
static entry cblog[MAXLOG];
static int nlog;

static void log_call(char what, int keyval, void *val)
{
    if (nlog < MAXLOG) cblog[nlog++] = (entry){what, keyval, (long)(MPI_Aint)val};
}

static int copy_plus_one(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)extra;
    log_call('c', keyval, in);
    *(void **)out = (void *)((MPI_Aint)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int copy_refuse(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)extra, (void)out;
    log_call('c', keyval, in);
    *flag = 0;
    return MPI_SUCCESS;
}

static int copy_fail(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)extra, (void)out;
    log_call('c', keyval, in);
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int del_log(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)extra;
    log_call('d', keyval, val);
    return MPI_SUCCESS;
}

static int tcopy(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)extra;
    log_call('C', keyval, in);
    *(void **)out = (void *)((MPI_Aint)in * 10);
    *flag = 1;
    return MPI_SUCCESS;
}

static int tdel(MPI_Datatype t, int keyval, void *val, void *extra)
{
    (void)t, (void)extra;
    log_call('D', keyval, val);
    return MPI_SUCCESS;
}

/* MPI_COMM_SELF's attributes at MPI_Finalize: order and MPI still usable */
static int self_order[8], nself, self_saw_finalized = -1;
static int self_del(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval, (void)extra;
    int fin = 1;
    MPI_Finalized(&fin);
    if (comm == MPI_COMM_SELF && nself < 8) self_order[nself++] = (int)(MPI_Aint)val;
    self_saw_finalized = fin;
    return MPI_SUCCESS;
}

/* An unknown keyval, or one of the wrong kind, is invalid; Open MPI reports
 * MPI_ERR_OTHER, so there only the failure itself is checked. */
#ifdef OPEN_MPI
#define CHECK_BAD_KEYVAL(call) CHECK((call) != MPI_SUCCESS, "%s succeeded", #call)
#else
#define CHECK_BAD_KEYVAL(call) CHECK_ERRCLASS(call, MPI_ERR_KEYVAL)
#endif

static void expect(int i, char what, int keyval, long val)
{
    CHECK(i < nlog, "log has %d entries, entry %d expected", nlog, i);
    CHECK(cblog[i].what == what && cblog[i].keyval == keyval && cblog[i].val == val,
          "log[%d] = (%c, %d, %ld), expected (%c, %d, %ld)", i, cblog[i].what, cblog[i].keyval, cblog[i].val, what,
          keyval, val);
}

static void *get(MPI_Comm c, int k, int *flag)
{
    void *v = NULL;
    CHECK_MPI(MPI_Comm_get_attr(c, k, &v, flag));
    return v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int flag;
    void *v;

    /* predefined attributes still answer; they are read-only */
    int *ub = get(MPI_COMM_WORLD, MPI_TAG_UB, &flag);
    CHECK(flag && *ub >= 32767, "MPI_TAG_UB");
    int *wtg = get(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &flag);
    CHECK(!flag || *wtg == 0 || *wtg == 1, "MPI_WTIME_IS_GLOBAL");
#ifdef OPEN_MPI
    /* Open MPI reports predefined keyvals as MPI_ERR_OTHER, not as an
     * invalid keyval */
    CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, (void *)1) != MPI_SUCCESS, "set MPI_TAG_UB");
    CHECK(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB) != MPI_SUCCESS, "delete MPI_TAG_UB");
#else
    CHECK_ERRCLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, (void *)1), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL);
#endif
    mt_pass("predefined attributes");

    /* three keyvals created in order a, b, c; attributes set in order c, a, b */
    int ka, kb, kc;
    CHECK_MPI(MPI_Comm_create_keyval(copy_plus_one, del_log, &ka, NULL));
    CHECK_MPI(MPI_Comm_create_keyval(copy_refuse, del_log, &kb, NULL));
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, del_log, &kc, NULL));
    MPI_Comm c1, c2;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
    MPI_Comm_set_errhandler(c1, MPI_ERRORS_RETURN);
    v = get(c1, ka, &flag);
    CHECK_EQ(flag, 0);
    CHECK_MPI(MPI_Comm_set_attr(c1, kc, (void *)300));
    CHECK_MPI(MPI_Comm_set_attr(c1, ka, (void *)100));
    CHECK_MPI(MPI_Comm_set_attr(c1, kb, (void *)200));
    CHECK_EQ(nlog, 0);
    v = get(c1, ka, &flag);
    CHECK(flag && v == (void *)100, "get a");
    v = get(c1, kc, &flag);
    CHECK(flag && v == (void *)300, "get c");

    /* dup: one copy callback per attribute (MPI_COMM_DUP_FN is not logged) */
    CHECK_MPI(MPI_Comm_dup(c1, &c2));
    CHECK_EQ(nlog, 2);
#ifdef LEANMPI
    /* MPI leaves the order of copy callbacks open; LeanMPI promises keyval
     * creation order (MPICH runs them most recently set first) */
    expect(0, 'c', ka, 100);
    expect(1, 'c', kb, 200);
#else
    CHECK((cblog[0].keyval == ka && cblog[1].keyval == kb) || (cblog[0].keyval == kb && cblog[1].keyval == ka),
          "one copy each for a and b");
#endif
    v = get(c2, ka, &flag);
    CHECK(flag && v == (void *)101, "copied a");
    v = get(c2, kb, &flag);
    CHECK_EQ(flag, 0);
    v = get(c2, kc, &flag);
    CHECK(flag && v == (void *)300, "copied c");
    mt_pass("copy on dup");

    /* replacing a value deletes the old one; delete_attr deletes */
    nlog = 0;
    CHECK_MPI(MPI_Comm_set_attr(c2, ka, (void *)500));
    CHECK_EQ(nlog, 1);
    expect(0, 'd', ka, 101);
    CHECK_MPI(MPI_Comm_delete_attr(c2, kc));
    CHECK_EQ(nlog, 2);
    expect(1, 'd', kc, 300);
    v = get(c2, kc, &flag);
    CHECK_EQ(flag, 0);
    /* free: the remaining attribute (a = 500) is deleted */
    CHECK_MPI(MPI_Comm_free(&c2));
    CHECK_EQ(nlog, 3);
    expect(2, 'd', ka, 500);
    mt_pass("delete on replace, delete_attr and free");

    /* a keyval freed while attached keeps working for that attribute */
    nlog = 0;
    int ka_saved = ka;
    CHECK_MPI(MPI_Comm_free_keyval(&ka));
    CHECK_EQ(ka, MPI_KEYVAL_INVALID);
    CHECK_MPI(MPI_Comm_dup(c1, &c2));
    MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
    int copies_a = 0;
    for (int i = 0; i < nlog; i++) copies_a += cblog[i].what == 'c' && cblog[i].keyval == ka_saved;
    CHECK_EQ(copies_a, 1);
    nlog = 0;
    CHECK_MPI(MPI_Comm_free(&c2));
    /* c2 had a (101) and c (300) */
    CHECK_EQ(nlog, 2);
    int del_a = 0;
    for (int i = 0; i < nlog; i++) del_a += cblog[i].what == 'd' && cblog[i].keyval == ka_saved && cblog[i].val == 101;
    CHECK_EQ(del_a, 1);
    mt_pass("keyval freed while in use");

    /* a failing copy callback makes dup fail with its error */
    int kf;
    CHECK_MPI(MPI_Comm_create_keyval(copy_fail, MPI_COMM_NULL_DELETE_FN, &kf, NULL));
    CHECK_MPI(MPI_Comm_set_attr(c1, kf, (void *)7));
    nlog = 0;
    c2 = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(c1, &c2);
    CHECK_ERRCLASS(rc, MPI_ERR_OTHER);
    CHECK_MPI(MPI_Comm_delete_attr(c1, kf));
    CHECK_MPI(MPI_Comm_free_keyval(&kf));
    mt_pass("failing copy callback");

    /* error classes */
    int kt;
    CHECK_MPI(MPI_Type_create_keyval(tcopy, tdel, &kt, NULL));
    CHECK_BAD_KEYVAL(MPI_Comm_set_attr(c1, kt, (void *)1));
#ifndef OPEN_MPI
    /* Open MPI does not check the keyval's kind in MPI_Comm_get_attr */
    CHECK_BAD_KEYVAL(MPI_Comm_get_attr(c1, kt, &v, &flag));
#endif
    CHECK_BAD_KEYVAL(MPI_Comm_free_keyval(&kt));
    CHECK_BAD_KEYVAL(MPI_Type_set_attr(MPI_INT, kb, (void *)1));
    CHECK_BAD_KEYVAL(MPI_Comm_get_attr(c1, 12345, &v, &flag));
    CHECK_BAD_KEYVAL(MPI_Comm_set_attr(c1, MPI_KEYVAL_INVALID, (void *)1));
    int freed = kb, kb_saved = kb;
    CHECK_MPI(MPI_Comm_free_keyval(&freed));
#ifdef LEANMPI
    /* kb's id no longer names a usable keyval, although c1 still has its
     * attribute (using it is erroneous; neither MPICH nor Open MPI detect it) */
    CHECK_BAD_KEYVAL(MPI_Comm_set_attr(MPI_COMM_WORLD, kb_saved, (void *)1));
#else
    (void)kb_saved;
#endif
    mt_pass("error classes");

    /* datatypes */
    nlog = 0;
    MPI_Datatype t1, t2;
    CHECK_MPI(MPI_Type_dup(MPI_INT, &t1));
    CHECK_MPI(MPI_Type_set_attr(t1, kt, (void *)4));
    CHECK_MPI(MPI_Type_get_attr(t1, kt, &v, &flag));
    CHECK(flag && v == (void *)4, "type get");
    CHECK_MPI(MPI_Type_dup(t1, &t2));
    CHECK_EQ(nlog, 1);
    expect(0, 'C', kt, 4);
    CHECK_MPI(MPI_Type_get_attr(t2, kt, &v, &flag));
    CHECK(flag && v == (void *)40, "type copy");
    CHECK_MPI(MPI_Type_delete_attr(t2, kt));
    CHECK_EQ(nlog, 2);
    expect(1, 'D', kt, 40);
    CHECK_MPI(MPI_Type_get_attr(t2, kt, &v, &flag));
    CHECK_EQ(flag, 0);
    CHECK_MPI(MPI_Type_free(&t2));
    CHECK_EQ(nlog, 2);
    /* t2 is gone first: MPICH frees a type (and deletes its attributes)
     * only once no type made from it is left */
    CHECK_MPI(MPI_Type_free(&t1));
    CHECK_EQ(nlog, 3);
    expect(2, 'D', kt, 4);
    /* attributes on a predefined type */
    CHECK_MPI(MPI_Type_set_attr(MPI_DOUBLE, kt, (void *)9));
    CHECK_MPI(MPI_Type_get_attr(MPI_DOUBLE, kt, &v, &flag));
    CHECK(flag && v == (void *)9, "predefined type attribute");
    CHECK_MPI(MPI_Type_delete_attr(MPI_DOUBLE, kt));
    CHECK_EQ(nlog, 4);
    CHECK_MPI(MPI_Type_free_keyval(&kt));
    CHECK_EQ(kt, MPI_KEYVAL_INVALID);
    mt_pass("datatype attributes");

    /* window keyvals: their own kind, like the others */
    int kw = MPI_KEYVAL_INVALID, kc2 = MPI_KEYVAL_INVALID;
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kw, NULL));
    CHECK(kw != MPI_KEYVAL_INVALID, "window keyval created");
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kc2, NULL));
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
#ifdef LEANMPI /* other implementations do not check the kind of a keyval */
    int wrong = kc2;
    CHECK_BAD_KEYVAL(MPI_Win_free_keyval(&wrong));
    wrong = kw;
    CHECK_BAD_KEYVAL(MPI_Comm_free_keyval(&wrong));
#endif
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    CHECK_MPI(MPI_Win_free_keyval(&kw));
    CHECK_EQ(kw, MPI_KEYVAL_INVALID);
    CHECK_MPI(MPI_Comm_free_keyval(&kc2));
    mt_pass("window keyvals");

    nlog = 0;
    CHECK_MPI(MPI_Comm_free(&c1)); /* has c (300), a (100, keyval freed) and b (200, keyval freed) */
    CHECK_EQ(nlog, 3);
    CHECK_MPI(MPI_Comm_free_keyval(&kc));

    /* MPI_COMM_SELF: an explicit delete first, then three attributes left
     * for MPI_Finalize, which must delete them in the reverse order of
     * setting (3, 2, 1) while MPI is still usable */
    int ks1, ks2, ks3;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_del, &ks1, NULL));
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_del, &ks2, NULL));
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_del, &ks3, NULL));
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, ks2, (void *)99));
    CHECK_MPI(MPI_Comm_delete_attr(MPI_COMM_SELF, ks2));
    CHECK(nself == 1 && self_order[0] == 99 && self_saw_finalized == 0, "explicit delete on MPI_COMM_SELF");
    nself = 0;
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, ks3, (void *)1));
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, ks1, (void *)2));
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, ks2, (void *)3));
    /* freed keyvals: the attributes must still be deleted at MPI_Finalize */
    CHECK_MPI(MPI_Comm_free_keyval(&ks1));
    mt_pass("attributes (MPI_COMM_SELF deletion checked after MPI_Finalize)");
    MPI_Finalize();
    if (nself != 3 || self_order[0] != 3 || self_order[1] != 2 || self_order[2] != 1 || self_saw_finalized != 0) {
        printf("FAIL MPI_COMM_SELF attributes at MPI_Finalize: %d deleted (%d %d %d), MPI_Finalized said %d\n", nself,
               self_order[0], self_order[1], self_order[2], self_saw_finalized);
        return 1;
    }
    return 0;
}
