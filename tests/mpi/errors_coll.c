/* Bad arguments to collectives under MPI_ERRORS_RETURN: every collective,
 * in its blocking, nonblocking, persistent and large-count forms, returns
 * the right error class.  Every erroneous call is made by all ranks, each
 * with arguments that are wrong in that rank (so no rank is left waiting
 * for one that gave up), and after every error a correct collective on
 * the same communicator must still give the right result: a failed call
 * leaves no half-started collective behind. */
#include "mpitest.h"
#include <stdlib.h>

static int rank, size;
static MPI_Comm cur; /* the communicator checked after each error */
static int ncalls;

/* A correct reduction on cur right after an error. */
static void still_works(const char *what, int line)
{
    int inter = 0, x = rank + line, sum = -1, n = size;
    CHECK_MPI(MPI_Comm_test_inter(cur, &inter));
    if (inter) { /* intercommunicators: root MPI_ROOT in group a, 0 in group b */
        int lrank, grp, r;
        MPI_Comm_rank(cur, &lrank);
        CHECK_MPI(MPI_Comm_remote_size(cur, &r));
        grp = rank == 0;
        int root = grp ? MPI_ROOT : 0;
        int v = grp ? line * 3 : -1;
        CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, root, cur));
        if (!grp) CHECK(v == line * 3, "%s: intercommunicator bcast after the error got %d", what, v);
        CHECK_MPI(MPI_Barrier(cur));
        return;
    }
    MPI_Comm_size(cur, &n);
    CHECK_MPI(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, cur));
    int expect = n * line + size * (size - 1) / 2;
    if (n != size) { /* a sub-communicator: sum its members' world ranks */
        int *all = malloc(sizeof(int) * (size_t)n);
        CHECK_MPI(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, cur));
        expect = n * line;
        for (int i = 0; i < n; i++) expect += all[i];
        free(all);
    }
    CHECK(sum == expect, "%s: allreduce after the error got %d, expected %d", what, sum, expect);
}

static void expect_error(int rc, int cls, const char *what, int line)
{
    int got = -1, len = -1;
    char s[MPI_MAX_ERROR_STRING + 1];
    ncalls++;
    if (rc == MPI_SUCCESS) mt_fail(__FILE__, line, "%s: returned MPI_SUCCESS, expected class %d", what, cls);
    CHECK_MPI(MPI_Error_class(rc, &got));
    if (got != cls) mt_fail(__FILE__, line, "%s: error class %d (%s), expected %d", what, got, mt_errstr(rc), cls);
    CHECK_MPI(MPI_Error_string(rc, s, &len));
    CHECK(len > 0, "%s: empty error string", what);
    still_works(what, line);
}
#ifdef LEANMPI
#define peer_checks(cls) 1
#else
/* Other implementations: only the classes MPICH 4.0 reports for every
 * case here (it does not check counts, arrays or in-place rules of
 * collectives, and calls a bad reduction type an MPI_ERR_OP). */
static int peer_checks(int cls) { return cls == MPI_ERR_COMM || cls == MPI_ERR_ROOT || cls == MPI_ERR_OP; }
#endif
#define EXPECT(call, cls)                                               \
    do {                                                                \
        int e_ = (cls);                                                 \
        if (peer_checks(e_)) expect_error((call), e_, #call, __LINE__); \
    } while (0)

static MPI_Request rq, *const RQ = &rq; /* RQ: the calls with a request; NULL: request NULL */
#define INFO MPI_INFO_NULL
/* A call of every form with the same arguments; R is RQ or NULL (then only
 * the forms taking a request are made, and they must fail with MPI_ERR_ARG). */
#define FORMS(Name, IName, R, cls, ...)                        \
    do {                                                       \
        int c_ = (R) ? (cls) : MPI_ERR_ARG;                    \
        if (R) {                                               \
            EXPECT(MPI_##Name(__VA_ARGS__), c_);               \
            EXPECT(MPI_##Name##_c(__VA_ARGS__), c_);           \
        }                                                      \
        EXPECT(MPI_##IName(__VA_ARGS__, R), c_);               \
        EXPECT(MPI_##IName##_c(__VA_ARGS__, R), c_);           \
        EXPECT(MPI_##Name##_init(__VA_ARGS__, INFO, R), c_);   \
        EXPECT(MPI_##Name##_init_c(__VA_ARGS__, INFO, R), c_); \
    } while (0)
/* The same for functions whose _c form takes other array types: A are the
 * arguments of the int forms, C those of the _c forms, each in parentheses. */
#define UNPAREN(...) __VA_ARGS__
#define FORMS_V(...) FORMS_V_(__VA_ARGS__)
#define FORMS_V_(Name, IName, R, cls, A, C)                  \
    do {                                                     \
        int c_ = (R) ? (cls) : MPI_ERR_ARG;                  \
        if (R) {                                             \
            EXPECT(MPI_##Name(UNPAREN A), c_);               \
            EXPECT(MPI_##Name##_c(UNPAREN C), c_);           \
        }                                                    \
        EXPECT(MPI_##IName(UNPAREN A, R), c_);               \
        EXPECT(MPI_##IName##_c(UNPAREN C, R), c_);           \
        EXPECT(MPI_##Name##_init(UNPAREN A, INFO, R), c_);   \
        EXPECT(MPI_##Name##_init_c(UNPAREN C, INFO, R), c_); \
    } while (0)

/* Arrays for the v/w forms: int and large-count versions, valid or with
 * one bad entry. */
static int *cnt, *dsp, *negcnt;
static MPI_Count *cntc, *negcntc;
static MPI_Aint *dspc;
static MPI_Datatype *ints, *badtypes, *unctypes;
static int *ibuf, *ibuf2;

static void fill_arrays(int n, int last)
{
    cnt = calloc((size_t)n, sizeof *cnt);
    dsp = calloc((size_t)n, sizeof *dsp);
    negcnt = calloc((size_t)n, sizeof *negcnt);
    cntc = calloc((size_t)n, sizeof *cntc);
    negcntc = calloc((size_t)n, sizeof *negcntc);
    dspc = calloc((size_t)n, sizeof *dspc);
    ints = calloc((size_t)n, sizeof *ints);
    badtypes = calloc((size_t)n, sizeof *badtypes);
    unctypes = calloc((size_t)n, sizeof *unctypes);
    for (int i = 0; i < n; i++) {
        cnt[i] = negcnt[i] = 1;
        cntc[i] = negcntc[i] = 1;
        dsp[i] = i;
        dspc[i] = i;
        ints[i] = badtypes[i] = unctypes[i] = MPI_INT;
    }
    negcnt[last] = -1; /* the last rank's entry */
    negcntc[last] = -1;
    badtypes[last] = MPI_DATATYPE_NULL;
}

static void free_arrays(void)
{
    free(cnt), free(dsp), free(negcnt), free(cntc), free(negcntc), free(dspc);
    free(ints), free(badtypes), free(unctypes);
}

static int Ldspw[64]; /* alltoallw: byte displacements */
static MPI_Aint Ldspwc[64];

static void test_barrier_bcast(MPI_Comm comm, MPI_Datatype unc)
{
    int *b = ibuf;
    EXPECT(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Ibarrier(MPI_COMM_NULL, &rq), MPI_ERR_COMM);
    EXPECT(MPI_Barrier_init(MPI_COMM_NULL, INFO, &rq), MPI_ERR_COMM);
    EXPECT(MPI_Ibarrier(comm, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Barrier_init(comm, INFO, NULL), MPI_ERR_ARG);
    FORMS(Bcast, Ibcast, RQ, MPI_ERR_COUNT, b, -1, MPI_INT, 0, comm);
    FORMS(Bcast, Ibcast, RQ, MPI_ERR_TYPE, b, 1, MPI_DATATYPE_NULL, 0, comm);
    FORMS(Bcast, Ibcast, RQ, MPI_ERR_TYPE, b, 1, unc, 0, comm);
    FORMS(Bcast, Ibcast, RQ, MPI_ERR_BUFFER, NULL, 1, MPI_INT, 0, comm);
    FORMS(Bcast, Ibcast, RQ, MPI_ERR_BUFFER, MPI_IN_PLACE, 1, MPI_INT, 0, comm);
    FORMS(Bcast, Ibcast, RQ, MPI_ERR_ROOT, b, 1, MPI_INT, size, comm);
    FORMS(Bcast, Ibcast, RQ, MPI_ERR_ROOT, b, 1, MPI_INT, -1, comm);
    /* MPI_ROOT and MPI_PROC_NULL are roots only on intercommunicators */
    FORMS(Bcast, Ibcast, RQ, MPI_ERR_ROOT, b, 1, MPI_INT, MPI_ROOT, comm);
    FORMS(Bcast, Ibcast, RQ, MPI_ERR_ROOT, b, 1, MPI_INT, MPI_PROC_NULL, comm);
    FORMS(Bcast, Ibcast, RQ, MPI_ERR_COMM, b, 1, MPI_INT, 0, MPI_COMM_NULL);
    FORMS(Bcast, Ibcast, NULL, 0, b, 1, MPI_INT, 0, comm);
}

static void test_reductions(MPI_Comm comm, MPI_Datatype unc, MPI_Datatype mixed, MPI_Op freed_op)
{
    int *s = ibuf, *r = ibuf2, root = size - 1, me_root = rank == root;
    double d[4] = {1, 2, 3, 4}, e[4];
    (void)freed_op;
#define RED_ALL(Name, IName)                                                                \
    do {                                                                                    \
        FORMS(Name, IName, RQ, MPI_ERR_COUNT, s, r, -1, MPI_INT, MPI_SUM, comm);            \
        FORMS(Name, IName, RQ, MPI_ERR_TYPE, s, r, 1, MPI_DATATYPE_NULL, MPI_SUM, comm);    \
        FORMS(Name, IName, RQ, MPI_ERR_TYPE, s, r, 1, unc, MPI_SUM, comm);                  \
        FORMS(Name, IName, RQ, MPI_ERR_OP, s, r, 1, MPI_INT, MPI_OP_NULL, comm);            \
        FORMS(Name, IName, RQ, MPI_ERR_OP, d, e, 4, MPI_DOUBLE, MPI_BAND, comm);            \
        FORMS(Name, IName, RQ, MPI_ERR_OP, s, r, 1, MPI_INT, MPI_MINLOC, comm);             \
        FORMS(Name, IName, RQ, MPI_ERR_OP, s, r, 1, mixed, MPI_SUM, comm);                  \
        FORMS(Name, IName, RQ, MPI_ERR_OP, s, r, 1, MPI_INT, MPI_REPLACE, comm);            \
        FORMS(Name, IName, RQ, MPI_ERR_OP, s, r, 1, MPI_INT, MPI_NO_OP, comm);              \
        FORMS(Name, IName, RQ, MPI_ERR_OP, s, r, 1, MPI_INT, (MPI_Op)MPI_INT, comm);        \
        FORMS(Name, IName, RQ, MPI_ERR_BUFFER, s, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm); \
        FORMS(Name, IName, RQ, MPI_ERR_BUFFER, s, s, 4, MPI_INT, MPI_SUM, comm);            \
        FORMS(Name, IName, RQ, MPI_ERR_BUFFER, NULL, r, 1, MPI_INT, MPI_SUM, comm);         \
        FORMS(Name, IName, RQ, MPI_ERR_BUFFER, s, NULL, 1, MPI_INT, MPI_SUM, comm);         \
        FORMS(Name, IName, RQ, MPI_ERR_COMM, s, r, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL);     \
        FORMS(Name, IName, NULL, 0, s, r, 1, MPI_INT, MPI_SUM, comm);                       \
        FREED_OP(Name, IName);                                                              \
    } while (0)
#ifdef LEANMPI /* a freed operation's handle: MPICH may reuse or crash on it */
#define FREED_OP(Name, IName) FORMS(Name, IName, RQ, MPI_ERR_OP, s, r, 1, MPI_INT, freed_op, comm)
#else
#define FREED_OP(Name, IName) (void)0
#endif
    RED_ALL(Allreduce, Iallreduce);
    RED_ALL(Scan, Iscan);
    RED_ALL(Exscan, Iexscan);
    RED_ALL(Reduce_scatter_block, Ireduce_scatter_block);

    /* reduce: root-only arguments are wrong at the root, the others'
     * own arguments elsewhere */
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_COUNT, s, r, -1, MPI_INT, MPI_SUM, root, comm);
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_TYPE, s, r, 1, MPI_DATATYPE_NULL, MPI_SUM, root, comm);
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_TYPE, s, r, 1, unc, MPI_SUM, root, comm);
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_OP, s, r, 1, MPI_INT, MPI_OP_NULL, root, comm);
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_OP, d, e, 4, MPI_DOUBLE, MPI_BAND, root, comm);
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_OP, s, r, 1, MPI_INT, MPI_MINLOC, root, comm);
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_OP, s, r, 1, mixed, MPI_SUM, root, comm);
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_OP, s, r, 1, MPI_INT, MPI_REPLACE, root, comm);
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_ROOT, s, r, 1, MPI_INT, MPI_SUM, size, comm);
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_ROOT, s, r, 1, MPI_INT, MPI_SUM, -2, comm);
    /* the root's recvbuf is MPI_IN_PLACE; the others use MPI_IN_PLACE as sendbuf */
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_BUFFER, me_root ? s : MPI_IN_PLACE, me_root ? MPI_IN_PLACE : r, 1, MPI_INT,
          MPI_SUM, root, comm);
    /* the root aliases its buffers */
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_BUFFER, me_root ? s : MPI_IN_PLACE, me_root ? s : r, 4, MPI_INT, MPI_SUM, root,
          comm);
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_COMM, s, r, 1, MPI_INT, MPI_SUM, root, MPI_COMM_NULL);
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_BUFFER, NULL, r, 1, MPI_INT, MPI_SUM, root, comm);
    FORMS(Reduce, Ireduce, NULL, 0, s, r, 1, MPI_INT, MPI_SUM, root, comm);
#ifdef LEANMPI
    FORMS(Reduce, Ireduce, RQ, MPI_ERR_OP, s, r, 1, MPI_INT, freed_op, root, comm);
#endif

    /* reduce_scatter: the counts array */
#define RS_ARGS(sb, rb, ci, cc, dt, op, cm) (sb, rb, ci, dt, op, cm), (sb, rb, cc, dt, op, cm)
    FORMS_V(Reduce_scatter, Ireduce_scatter, RQ, MPI_ERR_COUNT, RS_ARGS(s, r, negcnt, negcntc, MPI_INT, MPI_SUM, comm));
    FORMS_V(Reduce_scatter, Ireduce_scatter, RQ, MPI_ERR_ARG, RS_ARGS(s, r, NULL, NULL, MPI_INT, MPI_SUM, comm));
    FORMS_V(Reduce_scatter, Ireduce_scatter, RQ, MPI_ERR_TYPE, RS_ARGS(s, r, cnt, cntc, unc, MPI_SUM, comm));
    FORMS_V(Reduce_scatter, Ireduce_scatter, RQ, MPI_ERR_OP, RS_ARGS(s, r, cnt, cntc, MPI_INT, MPI_OP_NULL, comm));
    FORMS_V(Reduce_scatter, Ireduce_scatter, RQ, MPI_ERR_OP, RS_ARGS(d, e, cnt, cntc, MPI_DOUBLE, MPI_BOR, comm));
    FORMS_V(Reduce_scatter, Ireduce_scatter, RQ, MPI_ERR_OP, RS_ARGS(s, r, cnt, cntc, mixed, MPI_SUM, comm));
    FORMS_V(Reduce_scatter, Ireduce_scatter, RQ, MPI_ERR_BUFFER,
            RS_ARGS(s, MPI_IN_PLACE, cnt, cntc, MPI_INT, MPI_SUM, comm));
    FORMS_V(Reduce_scatter, Ireduce_scatter, RQ, MPI_ERR_BUFFER, RS_ARGS(s, s, cnt, cntc, MPI_INT, MPI_SUM, comm));
    FORMS_V(Reduce_scatter, Ireduce_scatter, RQ, MPI_ERR_BUFFER, RS_ARGS(NULL, r, cnt, cntc, MPI_INT, MPI_SUM, comm));
    FORMS_V(Reduce_scatter, Ireduce_scatter, RQ, MPI_ERR_BUFFER, RS_ARGS(s, NULL, cnt, cntc, MPI_INT, MPI_SUM, comm));
    FORMS_V(Reduce_scatter, Ireduce_scatter, RQ, MPI_ERR_COMM,
            RS_ARGS(s, r, cnt, cntc, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    FORMS_V(Reduce_scatter, Ireduce_scatter, NULL, 0, RS_ARGS(s, r, cnt, cntc, MPI_INT, MPI_SUM, comm));

    /* MPI_Reduce_local, MPI_Op_free */
    int a = 1, b = 2;
    MPI_Op op = MPI_SUM;
    EXPECT(MPI_Reduce_local(&a, &b, 1, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
    EXPECT(MPI_Reduce_local(&a, &b, 1, MPI_DATATYPE_NULL, MPI_SUM), MPI_ERR_TYPE);
    EXPECT(MPI_Reduce_local(d, e, 2, MPI_DOUBLE, MPI_BXOR), MPI_ERR_OP);
    EXPECT(MPI_Reduce_local(&a, &b, 1, MPI_INT, MPI_MAXLOC), MPI_ERR_OP);
    EXPECT(MPI_Reduce_local_c(&a, &b, 1, mixed, MPI_PROD), MPI_ERR_OP);
    EXPECT(MPI_Reduce_local(&a, &b, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    EXPECT(MPI_Reduce_local(NULL, &b, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    EXPECT(MPI_Reduce_local(&a, NULL, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    EXPECT(MPI_Reduce_local(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    EXPECT(MPI_Reduce_local(&b, &b, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    EXPECT(MPI_Reduce_local(&a, &b, 1, MPI_INT, MPI_NO_OP), MPI_ERR_OP); /* accumulate functions only */
    EXPECT(MPI_Op_free(&op), MPI_ERR_OP);
    CHECK(op == MPI_SUM, "a failed MPI_Op_free changed the handle");
    op = MPI_OP_NULL;
    EXPECT(MPI_Op_free(&op), MPI_ERR_OP);
    CHECK_MPI(MPI_Reduce_local(&a, &b, 1, MPI_INT, MPI_SUM));
    CHECK_EQ(b, 3);
#undef RED_ALL
#undef FREED_OP
}

static void test_gather_scatter(MPI_Comm comm, MPI_Datatype unc)
{
    int *s = ibuf, *r = ibuf2, root = 0, me_root = rank == root;
    /* gather: the send side is significant everywhere */
    FORMS(Gather, Igather, RQ, MPI_ERR_COUNT, s, -1, MPI_INT, r, 1, MPI_INT, root, comm);
    FORMS(Gather, Igather, RQ, MPI_ERR_TYPE, s, 1, MPI_DATATYPE_NULL, r, 1, MPI_INT, root, comm);
    FORMS(Gather, Igather, RQ, MPI_ERR_TYPE, s, 1, unc, r, 1, MPI_INT, root, comm);
    FORMS(Gather, Igather, RQ, MPI_ERR_ROOT, s, 1, MPI_INT, r, 1, MPI_INT, size, comm);
    FORMS(Gather, Igather, RQ, MPI_ERR_ROOT, s, 1, MPI_INT, r, 1, MPI_INT, -3, comm);
    /* MPI_IN_PLACE: as the non-roots' sendbuf, as the root's recvbuf */
    FORMS(Gather, Igather, RQ, MPI_ERR_BUFFER, MPI_IN_PLACE, 1, MPI_INT, me_root ? MPI_IN_PLACE : r, 1, MPI_INT, root,
          comm);
    FORMS(Gather, Igather, RQ, MPI_ERR_COMM, s, 1, MPI_INT, r, 1, MPI_INT, root, MPI_COMM_NULL);
    FORMS(Gather, Igather, RQ, MPI_ERR_BUFFER, NULL, 1, MPI_INT, r, 1, MPI_INT, root, comm);
    FORMS(Gather, Igather, NULL, 0, s, 1, MPI_INT, r, 1, MPI_INT, root, comm);
    /* scatter: the receive side is significant everywhere */
    FORMS(Scatter, Iscatter, RQ, MPI_ERR_COUNT, s, 1, MPI_INT, r, -1, MPI_INT, root, comm);
    FORMS(Scatter, Iscatter, RQ, MPI_ERR_TYPE, s, 1, MPI_INT, r, 1, MPI_DATATYPE_NULL, root, comm);
    FORMS(Scatter, Iscatter, RQ, MPI_ERR_TYPE, s, 1, MPI_INT, r, 1, unc, root, comm);
    FORMS(Scatter, Iscatter, RQ, MPI_ERR_ROOT, s, 1, MPI_INT, r, 1, MPI_INT, size + 1, comm);
    FORMS(Scatter, Iscatter, RQ, MPI_ERR_ROOT, s, 1, MPI_INT, r, 1, MPI_INT, MPI_ROOT, comm);
    /* MPI_IN_PLACE: as the root's sendbuf, as the non-roots' recvbuf */
    FORMS(Scatter, Iscatter, RQ, MPI_ERR_BUFFER, me_root ? MPI_IN_PLACE : s, 1, MPI_INT, me_root ? r : MPI_IN_PLACE, 1,
          MPI_INT, root, comm);
    FORMS(Scatter, Iscatter, RQ, MPI_ERR_COMM, s, 1, MPI_INT, r, 1, MPI_INT, root, MPI_COMM_NULL);
    FORMS(Scatter, Iscatter, RQ, MPI_ERR_BUFFER, s, 1, MPI_INT, NULL, 1, MPI_INT, root, comm);
    FORMS(Scatter, Iscatter, NULL, 0, s, 1, MPI_INT, r, 1, MPI_INT, root, comm);
    /* allgather, alltoall */
#define DATA_ALL(Name, IName)                                                                  \
    do {                                                                                       \
        FORMS(Name, IName, RQ, MPI_ERR_COUNT, s, -1, MPI_INT, r, 1, MPI_INT, comm);            \
        FORMS(Name, IName, RQ, MPI_ERR_COUNT, s, 1, MPI_INT, r, -1, MPI_INT, comm);            \
        FORMS(Name, IName, RQ, MPI_ERR_TYPE, s, 1, MPI_DATATYPE_NULL, r, 1, MPI_INT, comm);    \
        FORMS(Name, IName, RQ, MPI_ERR_TYPE, s, 1, MPI_INT, r, 1, unc, comm);                  \
        FORMS(Name, IName, RQ, MPI_ERR_BUFFER, s, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, comm); \
        FORMS(Name, IName, RQ, MPI_ERR_BUFFER, s, 1, MPI_INT, s, 1, MPI_INT, comm);            \
        FORMS(Name, IName, RQ, MPI_ERR_BUFFER, NULL, 1, MPI_INT, r, 1, MPI_INT, comm);         \
        FORMS(Name, IName, RQ, MPI_ERR_BUFFER, s, 1, MPI_INT, NULL, 1, MPI_INT, comm);         \
        FORMS(Name, IName, RQ, MPI_ERR_COMM, s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_NULL);     \
        FORMS(Name, IName, NULL, 0, s, 1, MPI_INT, r, 1, MPI_INT, comm);                       \
    } while (0)
    DATA_ALL(Allgather, Iallgather);
    DATA_ALL(Alltoall, Ialltoall);
#undef DATA_ALL
}

static void test_v(MPI_Comm comm, MPI_Datatype unc)
{
    int *s = ibuf, *r = ibuf2, root = size / 2, me_root = rank == root;
    /* gatherv: bad receive arrays at the root, a bad sendcount elsewhere */
#define GV(sb, sc, st, rb, ci, cc, di, dc, rt, rt_, cm) \
    (sb, sc, st, rb, ci, di, rt, rt_, cm), (sb, sc, st, rb, cc, dc, rt, rt_, cm)
    int sc = me_root ? 1 : -1;
    FORMS_V(Gatherv, Igatherv, RQ, me_root ? MPI_ERR_COUNT : MPI_ERR_COUNT,
            GV(s, sc, MPI_INT, r, negcnt, negcntc, dsp, dspc, MPI_INT, root, comm));
    FORMS_V(Gatherv, Igatherv, RQ, me_root ? MPI_ERR_ARG : MPI_ERR_COUNT,
            GV(s, sc, MPI_INT, r, NULL, NULL, dsp, dspc, MPI_INT, root, comm));
    FORMS_V(Gatherv, Igatherv, RQ, me_root ? MPI_ERR_ARG : MPI_ERR_COUNT,
            GV(s, sc, MPI_INT, r, cnt, cntc, NULL, NULL, MPI_INT, root, comm));
    FORMS_V(Gatherv, Igatherv, RQ, MPI_ERR_TYPE, GV(s, 1, unc, r, cnt, cntc, dsp, dspc, MPI_INT, root, comm));
    FORMS_V(Gatherv, Igatherv, RQ, MPI_ERR_ROOT, GV(s, 1, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, size, comm));
    FORMS_V(Gatherv, Igatherv, RQ, MPI_ERR_BUFFER,
            GV(MPI_IN_PLACE, 1, MPI_INT, me_root ? MPI_IN_PLACE : r, cnt, cntc, dsp, dspc, MPI_INT, root, comm));
    FORMS_V(Gatherv, Igatherv, RQ, MPI_ERR_COMM,
            GV(s, 1, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, root, MPI_COMM_NULL));
    FORMS_V(Gatherv, Igatherv, NULL, 0, GV(s, 1, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, root, comm));
    FORMS_V(Gatherv, Igatherv, RQ, MPI_ERR_BUFFER,
            GV(me_root ? s : NULL, 1, MPI_INT, NULL, cnt, cntc, dsp, dspc, MPI_INT, root, comm));
#undef GV
    /* scatterv: bad send arrays at the root, a bad recvcount elsewhere */
#define SV(sb, ci, cc, di, dc, st, rb, rc, rt, rt_, cm) \
    (sb, ci, di, st, rb, rc, rt, rt_, cm), (sb, cc, dc, st, rb, rc, rt, rt_, cm)
    int rc = me_root ? 1 : -1;
    FORMS_V(Scatterv, Iscatterv, RQ, MPI_ERR_COUNT,
            SV(s, negcnt, negcntc, dsp, dspc, MPI_INT, r, rc, MPI_INT, root, comm));
    FORMS_V(Scatterv, Iscatterv, RQ, me_root ? MPI_ERR_ARG : MPI_ERR_COUNT,
            SV(s, NULL, NULL, dsp, dspc, MPI_INT, r, rc, MPI_INT, root, comm));
    FORMS_V(Scatterv, Iscatterv, RQ, me_root ? MPI_ERR_ARG : MPI_ERR_COUNT,
            SV(s, cnt, cntc, NULL, NULL, MPI_INT, r, rc, MPI_INT, root, comm));
    FORMS_V(Scatterv, Iscatterv, RQ, MPI_ERR_TYPE, SV(s, cnt, cntc, dsp, dspc, MPI_INT, r, 1, unc, root, comm));
    FORMS_V(Scatterv, Iscatterv, RQ, MPI_ERR_ROOT, SV(s, cnt, cntc, dsp, dspc, MPI_INT, r, 1, MPI_INT, -1, comm));
    FORMS_V(Scatterv, Iscatterv, RQ, MPI_ERR_BUFFER,
            SV(me_root ? MPI_IN_PLACE : s, cnt, cntc, dsp, dspc, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, root, comm));
    FORMS_V(Scatterv, Iscatterv, RQ, MPI_ERR_COMM,
            SV(s, cnt, cntc, dsp, dspc, MPI_INT, r, 1, MPI_INT, root, MPI_COMM_NULL));
    FORMS_V(Scatterv, Iscatterv, NULL, 0, SV(s, cnt, cntc, dsp, dspc, MPI_INT, r, 1, MPI_INT, root, comm));
    FORMS_V(Scatterv, Iscatterv, RQ, MPI_ERR_BUFFER,
            SV(NULL, cnt, cntc, dsp, dspc, MPI_INT, me_root ? r : NULL, 1, MPI_INT, root, comm));
#undef SV
    /* allgatherv */
#define AGV(sb, sc, st, rb, ci, cc, di, dc, rt, cm) (sb, sc, st, rb, ci, di, rt, cm), (sb, sc, st, rb, cc, dc, rt, cm)
    FORMS_V(Allgatherv, Iallgatherv, RQ, MPI_ERR_COUNT,
            AGV(s, 1, MPI_INT, r, negcnt, negcntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Allgatherv, Iallgatherv, RQ, MPI_ERR_COUNT, AGV(s, -1, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Allgatherv, Iallgatherv, RQ, MPI_ERR_ARG, AGV(s, 1, MPI_INT, r, NULL, NULL, dsp, dspc, MPI_INT, comm));
    FORMS_V(Allgatherv, Iallgatherv, RQ, MPI_ERR_ARG, AGV(s, 1, MPI_INT, r, cnt, cntc, NULL, NULL, MPI_INT, comm));
    FORMS_V(Allgatherv, Iallgatherv, RQ, MPI_ERR_TYPE, AGV(s, 1, MPI_INT, r, cnt, cntc, dsp, dspc, unc, comm));
    FORMS_V(Allgatherv, Iallgatherv, RQ, MPI_ERR_BUFFER,
            AGV(s, 1, MPI_INT, MPI_IN_PLACE, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Allgatherv, Iallgatherv, RQ, MPI_ERR_BUFFER, AGV(s, 1, MPI_INT, s, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Allgatherv, Iallgatherv, RQ, MPI_ERR_COMM,
            AGV(s, 1, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, MPI_COMM_NULL));
    FORMS_V(Allgatherv, Iallgatherv, NULL, 0, AGV(s, 1, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Allgatherv, Iallgatherv, RQ, MPI_ERR_BUFFER, AGV(s, 1, MPI_INT, NULL, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Allgatherv, Iallgatherv, RQ, MPI_ERR_BUFFER, AGV(NULL, 1, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, comm));
#undef AGV
    /* alltoallv */
#define A2V(sb, sci, scc, sdi, sdc, st, rb, rci, rcc, rdi, rdc, rt, cm) \
    (sb, sci, sdi, st, rb, rci, rdi, rt, cm), (sb, scc, sdc, st, rb, rcc, rdc, rt, cm)
    FORMS_V(Alltoallv, Ialltoallv, RQ, MPI_ERR_COUNT,
            A2V(s, negcnt, negcntc, dsp, dspc, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Alltoallv, Ialltoallv, RQ, MPI_ERR_COUNT,
            A2V(s, cnt, cntc, dsp, dspc, MPI_INT, r, negcnt, negcntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Alltoallv, Ialltoallv, RQ, MPI_ERR_ARG,
            A2V(s, NULL, NULL, dsp, dspc, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Alltoallv, Ialltoallv, RQ, MPI_ERR_ARG,
            A2V(s, cnt, cntc, dsp, dspc, MPI_INT, r, cnt, cntc, NULL, NULL, MPI_INT, comm));
    FORMS_V(Alltoallv, Ialltoallv, RQ, MPI_ERR_TYPE,
            A2V(s, cnt, cntc, dsp, dspc, MPI_DATATYPE_NULL, r, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Alltoallv, Ialltoallv, RQ, MPI_ERR_TYPE,
            A2V(s, cnt, cntc, dsp, dspc, MPI_INT, r, cnt, cntc, dsp, dspc, unc, comm));
    FORMS_V(Alltoallv, Ialltoallv, RQ, MPI_ERR_BUFFER,
            A2V(s, cnt, cntc, dsp, dspc, MPI_INT, MPI_IN_PLACE, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Alltoallv, Ialltoallv, RQ, MPI_ERR_BUFFER,
            A2V(s, cnt, cntc, dsp, dspc, MPI_INT, s, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Alltoallv, Ialltoallv, RQ, MPI_ERR_COMM,
            A2V(s, cnt, cntc, dsp, dspc, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, MPI_COMM_NULL));
    FORMS_V(Alltoallv, Ialltoallv, NULL, 0,
            A2V(s, cnt, cntc, dsp, dspc, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Alltoallv, Ialltoallv, RQ, MPI_ERR_BUFFER,
            A2V(NULL, cnt, cntc, dsp, dspc, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, comm));
    FORMS_V(Alltoallv, Ialltoallv, RQ, MPI_ERR_BUFFER,
            A2V(s, cnt, cntc, dsp, dspc, MPI_INT, NULL, cnt, cntc, dsp, dspc, MPI_INT, comm));
#undef A2V
    /* alltoallw: byte displacements, a type per peer */
#define A2W(sb, sci, scc, st, rb, rci, rcc, rt, cm) \
    (sb, sci, Ldspw, st, rb, rci, Ldspw, rt, cm), (sb, scc, Ldspwc, st, rb, rcc, Ldspwc, rt, cm)
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_COUNT, A2W(s, negcnt, negcntc, ints, r, cnt, cntc, ints, comm));
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_COUNT, A2W(s, cnt, cntc, ints, r, negcnt, negcntc, ints, comm));
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_ARG, A2W(s, NULL, NULL, ints, r, cnt, cntc, ints, comm));
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_TYPE, A2W(s, cnt, cntc, badtypes, r, cnt, cntc, ints, comm));
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_TYPE, A2W(s, cnt, cntc, ints, r, cnt, cntc, badtypes, comm));
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_TYPE, A2W(s, cnt, cntc, unctypes, r, cnt, cntc, ints, comm));
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_BUFFER, A2W(s, cnt, cntc, ints, MPI_IN_PLACE, cnt, cntc, ints, comm));
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_BUFFER, A2W(s, cnt, cntc, ints, s, cnt, cntc, ints, comm));
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_COMM, A2W(s, cnt, cntc, ints, r, cnt, cntc, ints, MPI_COMM_NULL));
    FORMS_V(Alltoallw, Ialltoallw, NULL, 0, A2W(s, cnt, cntc, ints, r, cnt, cntc, ints, comm));
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_BUFFER, A2W(NULL, cnt, cntc, ints, r, cnt, cntc, ints, comm));
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_BUFFER, A2W(s, cnt, cntc, ints, NULL, cnt, cntc, ints, comm));
    { /* the type of an empty block is not looked at */
        int *sc_ = calloc((size_t)size, sizeof(int)), *sv = calloc((size_t)size, sizeof(int));
        int *rv = calloc((size_t)size, sizeof(int));
        MPI_Datatype *ty = calloc((size_t)size, sizeof(MPI_Datatype));
        for (int i = 0; i < size; i++) {
            sc_[i] = i != rank;
            ty[i] = i != rank ? MPI_INT : MPI_DATATYPE_NULL;
            sv[i] = 100 * rank + i;
            rv[i] = -1;
        }
        CHECK_MPI(MPI_Alltoallw(sv, sc_, Ldspw, ty, rv, sc_, Ldspw, ty, comm));
        for (int i = 0; i < size; i++)
            CHECK(rv[i] == (i != rank ? 100 * i + rank : -1), "alltoallw with empty blocks: rv[%d] = %d", i, rv[i]);
        free(sc_), free(sv), free(rv), free(ty);
    }
#ifdef LEANMPI /* MPICH does not check the types arrays for NULL */
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_ARG, A2W(s, cnt, cntc, NULL, r, cnt, cntc, ints, comm));
    FORMS_V(Alltoallw, Ialltoallw, RQ, MPI_ERR_ARG, A2W(s, cnt, cntc, ints, r, cnt, cntc, NULL, comm));
#endif
#undef A2W
}

/* Neighbourhood collectives on a periodic ring: two neighbours each way. */
static void test_neighbor(MPI_Comm ring, MPI_Datatype unc)
{
    int *s = ibuf, *r = ibuf2;
    MPI_Aint nd[2] = {0, sizeof(int)};
    MPI_Comm saved = cur;
    cur = ring;
#define NG_ALL(Name, IName)                                                                 \
    do {                                                                                    \
        FORMS(Name, IName, RQ, MPI_ERR_COUNT, s, -1, MPI_INT, r, 1, MPI_INT, ring);         \
        FORMS(Name, IName, RQ, MPI_ERR_COUNT, s, 1, MPI_INT, r, -1, MPI_INT, ring);         \
        FORMS(Name, IName, RQ, MPI_ERR_TYPE, s, 1, MPI_DATATYPE_NULL, r, 1, MPI_INT, ring); \
        FORMS(Name, IName, RQ, MPI_ERR_TYPE, s, 1, MPI_INT, r, 1, unc, ring);               \
        FORMS(Name, IName, RQ, MPI_ERR_COMM, s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_NULL);  \
        FORMS(Name, IName, NULL, 0, s, 1, MPI_INT, r, 1, MPI_INT, ring);                    \
        FORMS(Name, IName, RQ, MPI_ERR_BUFFER, NULL, 1, MPI_INT, r, 1, MPI_INT, ring);      \
        FORMS(Name, IName, RQ, MPI_ERR_BUFFER, s, 1, MPI_INT, NULL, 1, MPI_INT, ring);      \
        FORMS(Name, IName, RQ, MPI_ERR_TOPOLOGY, s, 1, MPI_INT, r, 1, MPI_INT, saved);      \
    } while (0)
    NG_ALL(Neighbor_allgather, Ineighbor_allgather);
    NG_ALL(Neighbor_alltoall, Ineighbor_alltoall);
#undef NG_ALL
#define NAGV(sb, sc, st, rb, ci, cc, di, dc, rt, cm) (sb, sc, st, rb, ci, di, rt, cm), (sb, sc, st, rb, cc, dc, rt, cm)
    FORMS_V(Neighbor_allgatherv, Ineighbor_allgatherv, RQ, MPI_ERR_COUNT,
            NAGV(s, 1, MPI_INT, r, negcnt + size - 2, negcntc + size - 2, dsp, dspc, MPI_INT, ring));
    FORMS_V(Neighbor_allgatherv, Ineighbor_allgatherv, RQ, MPI_ERR_COUNT,
            NAGV(s, -1, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, ring));
    FORMS_V(Neighbor_allgatherv, Ineighbor_allgatherv, RQ, MPI_ERR_TYPE,
            NAGV(s, 1, MPI_INT, r, cnt, cntc, dsp, dspc, unc, ring));
    FORMS_V(Neighbor_allgatherv, Ineighbor_allgatherv, NULL, 0,
            NAGV(s, 1, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, ring));
    FORMS_V(Neighbor_allgatherv, Ineighbor_allgatherv, RQ, MPI_ERR_BUFFER,
            NAGV(s, 1, MPI_INT, NULL, cnt, cntc, dsp, dspc, MPI_INT, ring));
    FORMS_V(Neighbor_allgatherv, Ineighbor_allgatherv, RQ, MPI_ERR_TOPOLOGY,
            NAGV(s, 1, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, saved));
#ifdef LEANMPI /* MPICH does not check these arrays for NULL */
    FORMS_V(Neighbor_allgatherv, Ineighbor_allgatherv, RQ, MPI_ERR_ARG,
            NAGV(s, 1, MPI_INT, r, NULL, NULL, dsp, dspc, MPI_INT, ring));
    FORMS_V(Neighbor_allgatherv, Ineighbor_allgatherv, RQ, MPI_ERR_ARG,
            NAGV(s, 1, MPI_INT, r, cnt, cntc, NULL, NULL, MPI_INT, ring));
#endif
#undef NAGV
#define NA2V(sb, sci, scc, sdi, sdc, st, rb, rci, rcc, rdi, rdc, rt, cm) \
    (sb, sci, sdi, st, rb, rci, rdi, rt, cm), (sb, scc, sdc, st, rb, rcc, rdc, rt, cm)
    int *n2 = negcnt + size - 2;
    MPI_Count *n2c = negcntc + size - 2;
    FORMS_V(Neighbor_alltoallv, Ineighbor_alltoallv, RQ, MPI_ERR_COUNT,
            NA2V(s, n2, n2c, dsp, dspc, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, ring));
    FORMS_V(Neighbor_alltoallv, Ineighbor_alltoallv, RQ, MPI_ERR_COUNT,
            NA2V(s, cnt, cntc, dsp, dspc, MPI_INT, r, n2, n2c, dsp, dspc, MPI_INT, ring));
    FORMS_V(Neighbor_alltoallv, Ineighbor_alltoallv, RQ, MPI_ERR_TYPE,
            NA2V(s, cnt, cntc, dsp, dspc, unc, r, cnt, cntc, dsp, dspc, MPI_INT, ring));
    FORMS_V(Neighbor_alltoallv, Ineighbor_alltoallv, NULL, 0,
            NA2V(s, cnt, cntc, dsp, dspc, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, ring));
    FORMS_V(Neighbor_alltoallv, Ineighbor_alltoallv, RQ, MPI_ERR_BUFFER,
            NA2V(NULL, cnt, cntc, dsp, dspc, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, ring));
#ifdef LEANMPI
    FORMS_V(Neighbor_alltoallv, Ineighbor_alltoallv, RQ, MPI_ERR_ARG,
            NA2V(s, NULL, NULL, dsp, dspc, MPI_INT, r, cnt, cntc, dsp, dspc, MPI_INT, ring));
    FORMS_V(Neighbor_alltoallv, Ineighbor_alltoallv, RQ, MPI_ERR_ARG,
            NA2V(s, cnt, cntc, dsp, dspc, MPI_INT, r, cnt, cntc, NULL, NULL, MPI_INT, ring));
#endif
#undef NA2V
#define NA2W(sb, sci, scc, st, rb, rci, rcc, rt, cm) \
    (sb, sci, nd, st, rb, rci, nd, rt, cm), (sb, scc, nd, st, rb, rcc, nd, rt, cm)
    MPI_Datatype *b2 = badtypes + size - 2, *u2 = unctypes + size - 2;
    FORMS_V(Neighbor_alltoallw, Ineighbor_alltoallw, RQ, MPI_ERR_COUNT,
            NA2W(s, n2, n2c, ints, r, cnt, cntc, ints, ring));
    FORMS_V(Neighbor_alltoallw, Ineighbor_alltoallw, RQ, MPI_ERR_TYPE,
            NA2W(s, cnt, cntc, b2, r, cnt, cntc, ints, ring));
    FORMS_V(Neighbor_alltoallw, Ineighbor_alltoallw, RQ, MPI_ERR_TYPE,
            NA2W(s, cnt, cntc, ints, r, cnt, cntc, b2, ring));
    FORMS_V(Neighbor_alltoallw, Ineighbor_alltoallw, RQ, MPI_ERR_TYPE,
            NA2W(s, cnt, cntc, ints, r, cnt, cntc, u2, ring));
    FORMS_V(Neighbor_alltoallw, Ineighbor_alltoallw, NULL, 0, NA2W(s, cnt, cntc, ints, r, cnt, cntc, ints, ring));
    FORMS_V(Neighbor_alltoallw, Ineighbor_alltoallw, RQ, MPI_ERR_BUFFER,
            NA2W(s, cnt, cntc, ints, NULL, cnt, cntc, ints, ring));
#ifdef LEANMPI
    int same_peer_ok = 1;
#else /* MPICH 4.0 pairs the blocks wrongly when both neighbours are one rank */
    int same_peer_ok = size > 2;
#endif
    if (same_peer_ok) { /* an empty block's type is not looked at: only the block to the left moves */
        int zc[2] = {1, 0}, sv[2] = {rank, -5}, rv[2] = {-1, -1};
        MPI_Datatype ty[2] = {MPI_INT, MPI_DATATYPE_NULL};
        int rzc[2] = {0, 1};
        MPI_Datatype rty[2] = {MPI_DATATYPE_NULL, MPI_INT};
        CHECK_MPI(MPI_Neighbor_alltoallw(sv, zc, nd, ty, rv, rzc, nd, rty, ring));
        CHECK(rv[0] == -1 && rv[1] == (rank + 1) % size, "neighbor alltoallw with empty blocks: %d %d", rv[0], rv[1]);
    }
#ifdef LEANMPI
    FORMS_V(Neighbor_alltoallw, Ineighbor_alltoallw, RQ, MPI_ERR_ARG,
            NA2W(s, cnt, cntc, NULL, r, cnt, cntc, ints, ring));
    FORMS_V(Neighbor_alltoallw, Ineighbor_alltoallw, RQ, MPI_ERR_ARG,
            NA2W(s, cnt, cntc, ints, r, cnt, cntc, NULL, ring));
    FORMS_V(Neighbor_alltoallw, Ineighbor_alltoallw, RQ, MPI_ERR_ARG,
            NA2W(s, NULL, NULL, ints, r, cnt, cntc, ints, ring));
    /* neighbourhood collectives have no in-place form */
    FORMS(Neighbor_allgather, Ineighbor_allgather, RQ, MPI_ERR_BUFFER, MPI_IN_PLACE, 1, MPI_INT, r, 1, MPI_INT, ring);
    FORMS(Neighbor_alltoall, Ineighbor_alltoall, RQ, MPI_ERR_BUFFER, s, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, ring);
#endif
#undef NA2W
    cur = saved;
}

#ifdef LEANMPI
/* Intercommunicators: scan and exscan are not defined there (MPI_ERR_COMM in
 * every form), argument errors are found as on intracommunicators, in-place
 * forms are refused, and the intercommunicator still works afterwards. */
static void test_intercomm(void)
{
    MPI_Comm half, inter;
    int grp = rank == 0; /* rank 0 against the others */
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, grp, rank, &half));
    CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, grp ? 1 : 0, 9, &inter));
    CHECK_MPI(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    MPI_Comm saved = cur;
    cur = inter;
    int *s = ibuf, *r = ibuf2;
    int rroot = grp ? MPI_ROOT : 0;
    /* scan and exscan are not defined on intercommunicators at all */
    EXPECT(MPI_Scan(s, r, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
    EXPECT(MPI_Iexscan(s, r, 1, MPI_INT, MPI_SUM, inter, &rq), MPI_ERR_COMM);
    EXPECT(MPI_Scan_init(s, r, 1, MPI_INT, MPI_SUM, inter, INFO, &rq), MPI_ERR_COMM);
    /* argument errors are still found first */
    EXPECT(MPI_Ibcast(s, -1, MPI_INT, rroot, inter, &rq), MPI_ERR_COUNT);
    EXPECT(MPI_Iallreduce(s, r, 1, MPI_INT, MPI_OP_NULL, inter, &rq), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(s, r, 1, MPI_INT, MPI_REPLACE, inter), MPI_ERR_OP);
    EXPECT(MPI_Bcast(s, -1, MPI_INT, rroot, inter), MPI_ERR_COUNT);
    EXPECT(MPI_Bcast(s, 1, MPI_DATATYPE_NULL, rroot, inter), MPI_ERR_TYPE);
    EXPECT(MPI_Reduce(s, r, -1, MPI_INT, MPI_SUM, rroot, inter), MPI_ERR_COUNT);
    EXPECT(MPI_Reduce(grp ? s : NULL, grp ? NULL : r, 1, MPI_INT, MPI_SUM, rroot, inter), MPI_ERR_BUFFER);
    EXPECT(MPI_Reduce(s, r, 1, MPI_DOUBLE, MPI_BAND, rroot, inter), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(s, r, 1, MPI_INT, MPI_MINLOC, inter), MPI_ERR_OP);
    EXPECT(MPI_Gather(s, grp ? 1 : -1, MPI_INT, r, grp ? -1 : 1, MPI_INT, rroot, inter), MPI_ERR_COUNT);
    EXPECT(MPI_Bcast(s, 1, MPI_INT, size, inter), MPI_ERR_ROOT);
    /* no in-place forms on intercommunicators */
    EXPECT(MPI_Allreduce(MPI_IN_PLACE, r, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER);
    EXPECT(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, r, 1, MPI_INT, inter), MPI_ERR_BUFFER);
    EXPECT(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, r, 1, MPI_INT, inter), MPI_ERR_BUFFER);
    EXPECT(MPI_Gather(grp ? s : MPI_IN_PLACE, 1, MPI_INT, grp ? MPI_IN_PLACE : r, 1, MPI_INT, rroot, inter),
           MPI_ERR_BUFFER);
    EXPECT(MPI_Scatter(grp ? MPI_IN_PLACE : s, 1, MPI_INT, grp ? r : MPI_IN_PLACE, 1, MPI_INT, rroot, inter),
           MPI_ERR_BUFFER);
    cur = saved;
    CHECK_MPI(MPI_Comm_free(&inter));
    CHECK_MPI(MPI_Comm_free(&half));
}
#endif

static void never_called(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)in, (void)inout, (void)len, (void)t;
    mt_fail(__FILE__, __LINE__, "a freed operation was called");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rank = mt_rank(MPI_COMM_WORLD);
    size = mt_size(MPI_COMM_WORLD);
    mt_errors_return();
    MPI_Comm comm;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    cur = comm;
    fill_arrays(size > 2 ? size : 2, size - 1);
    for (int i = 0; i < size && i < 64; i++) {
        Ldspw[i] = i * (int)sizeof(int);
        Ldspwc[i] = i * (MPI_Aint)sizeof(int);
    }
    size_t nb = 8 + 4 * (size_t)size;
    ibuf = calloc(nb, sizeof(int));
    ibuf2 = calloc(nb, sizeof(int));

    MPI_Datatype unc, mixed;
    CHECK_MPI(MPI_Type_contiguous(1, MPI_INT, &unc));
    for (int i = 0; i < size; i++) unctypes[i] = i == size - 1 ? unc : MPI_INT;
    {
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {0, sizeof(double)};
        MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT};
        CHECK_MPI(MPI_Type_create_struct(2, bl, disp, ty, &mixed));
        CHECK_MPI(MPI_Type_commit(&mixed));
    }
    MPI_Op freed_op;
    CHECK_MPI(MPI_Op_create(never_called, 1, &freed_op));
    MPI_Op keep = freed_op;
    CHECK_MPI(MPI_Op_free(&keep));

    { /* MPI_BOTTOM with absolute addresses in the type is no NULL buffer */
        int sv[2] = {rank, 2 * rank}, rv[2] = {-1, -1}, blen = 2;
        MPI_Aint sa, ra;
        MPI_Datatype st, rt;
        CHECK_MPI(MPI_Get_address(sv, &sa));
        CHECK_MPI(MPI_Get_address(rv, &ra));
        CHECK_MPI(MPI_Type_create_hindexed(1, &blen, &sa, MPI_INT, &st));
        CHECK_MPI(MPI_Type_create_hindexed(1, &blen, &ra, MPI_INT, &rt));
        CHECK_MPI(MPI_Type_commit(&st));
        CHECK_MPI(MPI_Type_commit(&rt));
        int *all = calloc(2 * (size_t)size, sizeof(int));
        CHECK_MPI(MPI_Allgather(MPI_BOTTOM, 1, st, all, 2, MPI_INT, comm));
        for (int i = 0; i < size; i++)
            CHECK(all[2 * i] == i && all[2 * i + 1] == 2 * i, "allgather from MPI_BOTTOM: %d %d", all[2 * i],
                  all[2 * i + 1]);
        free(all);
        CHECK_MPI(MPI_Bcast(MPI_BOTTOM, 1, rank == 0 ? st : rt, 0, comm));
        if (rank) CHECK(rv[0] == 0 && rv[1] == 0, "bcast from MPI_BOTTOM: %d %d", rv[0], rv[1]);
        CHECK_MPI(MPI_Type_free(&st));
        CHECK_MPI(MPI_Type_free(&rt));
    }
    test_barrier_bcast(comm, unc);
    mt_pass("errors_coll: barrier, bcast");
    test_reductions(comm, unc, mixed, freed_op);
    mt_pass("errors_coll: reduce, allreduce, scan, exscan, reduce_scatter(_block), Reduce_local, Op_free");
    test_gather_scatter(comm, unc);
    mt_pass("errors_coll: gather, scatter, allgather, alltoall");
    if (size <= 64) {
        test_v(comm, unc);
        mt_pass("errors_coll: gatherv, scatterv, allgatherv, alltoallv, alltoallw");
    }
    {
        MPI_Comm ring;
        int dims[1] = {size}, periods[1] = {1};
        CHECK_MPI(MPI_Cart_create(comm, 1, dims, periods, 0, &ring));
        CHECK_MPI(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
        /* its two neighbours' views of the arrays (from size - 2) have
         * the bad entry second */
        if (size >= 2) test_neighbor(ring, unc);
        CHECK_MPI(MPI_Comm_free(&ring));
        if (size >= 2) mt_pass("errors_coll: neighbourhood collectives");
    }
#ifdef LEANMPI
    { /* a freed communicator's old handle */
        MPI_Comm d, old;
        CHECK_MPI(MPI_Comm_dup(comm, &d));
        old = d;
        CHECK_MPI(MPI_Comm_free(&d));
        EXPECT(MPI_Allreduce(ibuf, ibuf2, 1, MPI_INT, MPI_SUM, old), MPI_ERR_COMM);
        EXPECT(MPI_Ibarrier(old, &rq), MPI_ERR_COMM);
        EXPECT(MPI_Gather_init(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT, 0, old, INFO, &rq), MPI_ERR_COMM);
        /* a freed datatype's old handle */
        MPI_Datatype t, oldt;
        CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        oldt = t;
        CHECK_MPI(MPI_Type_free(&t));
        EXPECT(MPI_Bcast(ibuf, 1, oldt, 0, comm), MPI_ERR_TYPE);
        EXPECT(MPI_Iallreduce(ibuf, ibuf2, 1, oldt, MPI_SUM, comm, &rq), MPI_ERR_TYPE);
    }
    if (size >= 2) {
        test_intercomm();
        mt_pass("errors_coll: collectives not provided on intercommunicators return MPI_ERR_COMM");
    }
#endif
    /* nothing a failed call could have sent is left behind */
    int flag = 1;
    CHECK_MPI(MPI_Barrier(comm));
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a failed call left a message behind");
    CHECK_MPI(MPI_Type_free(&unc));
    CHECK_MPI(MPI_Type_free(&mixed));
    CHECK_MPI(MPI_Comm_free(&comm));
    free_arrays();
    free(ibuf);
    free(ibuf2);
    if (rank == 0) printf("%d erroneous calls checked\n", ncalls);
    mt_pass("errors_coll: every erroneous collective returned its error class and left the communicator working");
    MPI_Finalize();
    return 0;
}
