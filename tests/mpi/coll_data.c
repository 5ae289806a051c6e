/* Data-movement collectives: bcast, gather(v), scatter(v), allgather(v),
 * alltoall(v/w), barrier. Every value a rank can receive is a known
 * function of (source rank, destination rank, position), so each rank
 * computes the exact expected contents of its buffers itself, including
 * the gaps a datatype or a displacement leaves, which must keep their
 * guard value. Counts 0, 1, small and large; a dense type, a dense derived
 * type and a type with gaps; MPI_IN_PLACE where allowed; roots first and
 * last; every form (colltest.h). */
#include "colltest.h"

#define GUARD (-7777777)

typedef struct {
    MPI_Datatype t;
    int ext;    /* extent in ints */
    int nval;   /* ints of data per element */
    int pos[3]; /* where they are */
    const char *name;
} ttype;

static ttype types[3];
static int rank, size;

static int val(int src, int dst, long k) { return src * 1000000 + dst * 10000 + (int)(k % 9973) + 1; }

static int *alloc_ints(size_t n)
{
    int *p = malloc((n ? n : 1) * sizeof(int));
    CHECK(p != NULL, "out of memory");
    for (size_t i = 0; i < n; i++) p[i] = GUARD;
    return p;
}

/* count elements of y at buf hold the values (src, dst) */
static void fill(int *buf, const ttype *y, long count, int src, int dst)
{
    for (long e = 0; e < count; e++)
        for (int f = 0; f < y->nval; f++) buf[e * y->ext + y->pos[f]] = val(src, dst, e * y->nval + f);
}

static int is_pos(const ttype *y, int j)
{
    for (int f = 0; f < y->nval; f++)
        if (y->pos[f] == j) return 1;
    return 0;
}

static void expect(const int *buf, const ttype *y, long count, int src, int dst, const char *what)
{
    for (long e = 0; e < count; e++)
        for (int j = 0; j < y->ext; j++) {
            int got = buf[e * y->ext + j];
            if (!is_pos(y, j)) {
                CHECK(got == GUARD, "%s: gap overwritten at element %ld (type %s)", what, e, y->name);
                continue;
            }
            int f = 0;
            while (y->pos[f] != j) f++;
            CHECK(got == val(src, dst, e * y->nval + f),
                  "%s: element %ld field %d from %d is %d, expected %d (type %s)", what, e, f, src, got,
                  val(src, dst, e * y->nval + f), y->name);
        }
}

static void expect_guard(const int *buf, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) CHECK(buf[i] == GUARD, "%s: int %zu outside the data overwritten", what, i);
}

/* Counts and displacements of one side of a v form, in both widths: block
 * p holds count * (p % 3) elements (with_rank >= 0: count * ((with_rank + p)
 * % 3), symmetric for alltoallv), in reverse rank order with one element of
 * gap after each block. */
typedef struct {
    int *cnt, *dsp;
    MPI_Count *ccnt;
    MPI_Aint *cdsp;
    long total;
} vlayout;

static vlayout vlayout_make(long count, int with_rank)
{
    vlayout v;
    size_t n = (size_t)size;
    v.cnt = malloc(sizeof(int) * n);
    v.dsp = malloc(sizeof(int) * n);
    v.ccnt = malloc(sizeof(MPI_Count) * n);
    v.cdsp = malloc(sizeof(MPI_Aint) * n);
    CHECK(v.cnt && v.dsp && v.ccnt && v.cdsp, "out of memory");
    long at = 0;
    for (int p = size - 1; p >= 0; p--) {
        v.cnt[p] = (int)(count * ((with_rank < 0 ? p : with_rank + p) % 3));
        v.dsp[p] = (int)at;
        at += v.cnt[p] + 1;
    }
    for (int p = 0; p < size; p++) {
        v.ccnt[p] = v.cnt[p];
        v.cdsp[p] = v.dsp[p];
    }
    v.total = at;
    return v;
}

static void vlayout_free(vlayout *v)
{
    free(v->cnt);
    free(v->dsp);
    free(v->ccnt);
    free(v->cdsp);
}

static void test_bcast(const ttype *y, long count, int root, int form)
{
    int *buf = alloc_ints((size_t)(count * y->ext));
    if (rank == root) fill(buf, y, count, root, 0);
    RUN_FORM(form, 1, MPI_Bcast(buf, (int)count, y->t, root, MPI_COMM_WORLD),
             MPI_Bcast_c(buf, count, y->t, root, MPI_COMM_WORLD),
             MPI_Ibcast(buf, (int)count, y->t, root, MPI_COMM_WORLD, &req_),
             MPI_Bcast_init(buf, (int)count, y->t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    expect(buf, y, count, root, 0, "bcast");
    free(buf);
}

static void test_gather(const ttype *y, long count, int root, int form, int in_place)
{
    size_t blk = (size_t)(count * y->ext);
    int *s = alloc_ints(blk), *r = alloc_ints(blk * (size_t)size);
    fill(s, y, count, rank, root);
    const void *sb = s;
    if (in_place && rank == root) {
        fill(r + blk * (size_t)rank, y, count, rank, root);
        sb = MPI_IN_PLACE;
    }
    RUN_FORM(form, 1, MPI_Gather(sb, (int)count, y->t, r, (int)count, y->t, root, MPI_COMM_WORLD),
             MPI_Gather_c(sb, count, y->t, r, count, y->t, root, MPI_COMM_WORLD),
             MPI_Igather(sb, (int)count, y->t, r, (int)count, y->t, root, MPI_COMM_WORLD, &req_),
             MPI_Gather_init(sb, (int)count, y->t, r, (int)count, y->t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    if (rank == root)
        for (int i = 0; i < size; i++) expect(r + blk * (size_t)i, y, count, i, root, "gather");
    else expect_guard(r, blk * (size_t)size, "gather (non-root receive buffer)");
    free(s);
    free(r);
}

static void test_scatter(const ttype *y, long count, int root, int form, int in_place)
{
    size_t blk = (size_t)(count * y->ext);
    int *s = alloc_ints(blk * (size_t)size), *r = alloc_ints(blk);
    if (rank == root)
        for (int i = 0; i < size; i++) fill(s + blk * (size_t)i, y, count, root, i);
    void *rb = (in_place && rank == root) ? MPI_IN_PLACE : r;
    RUN_FORM(form, CT_SCATTER_RESTART, MPI_Scatter(s, (int)count, y->t, rb, (int)count, y->t, root, MPI_COMM_WORLD),
             MPI_Scatter_c(s, count, y->t, rb, count, y->t, root, MPI_COMM_WORLD),
             MPI_Iscatter(s, (int)count, y->t, rb, (int)count, y->t, root, MPI_COMM_WORLD, &req_),
             MPI_Scatter_init(s, (int)count, y->t, rb, (int)count, y->t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    if (rb == MPI_IN_PLACE) {
        expect_guard(r, blk, "scatter in place (untouched receive buffer)");
        for (int i = 0; i < size; i++) expect(s + blk * (size_t)i, y, count, root, i, "scatter in place (send buffer)");
    } else {
        expect(r, y, count, root, rank, "scatter");
    }
    free(s);
    free(r);
}

static void test_gatherv(const ttype *y, long count, int root, int form, int in_place)
{
    vlayout v = vlayout_make(count, -1);
    int *cnt = v.cnt, *dsp = v.dsp;
    MPI_Count *ccnt = v.ccnt;
    MPI_Aint *cdsp = v.cdsp;
    long total = v.total;
    int *s = alloc_ints((size_t)(cnt[rank] * y->ext)), *r = alloc_ints((size_t)(total * y->ext));
    fill(s, y, cnt[rank], rank, root);
    const void *sb = s;
    if (in_place && rank == root) {
        fill(r + (size_t)dsp[rank] * (size_t)y->ext, y, cnt[rank], rank, root);
        sb = MPI_IN_PLACE;
    }
    RUN_FORM(form, 1, MPI_Gatherv(sb, cnt[rank], y->t, r, cnt, dsp, y->t, root, MPI_COMM_WORLD),
             MPI_Gatherv_c(sb, ccnt[rank], y->t, r, ccnt, cdsp, y->t, root, MPI_COMM_WORLD),
             MPI_Igatherv(sb, cnt[rank], y->t, r, cnt, dsp, y->t, root, MPI_COMM_WORLD, &req_),
             MPI_Gatherv_init(sb, cnt[rank], y->t, r, cnt, dsp, y->t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    if (rank == root) {
        for (int i = 0; i < size; i++) {
            expect(r + (size_t)dsp[i] * (size_t)y->ext, y, cnt[i], i, root, "gatherv");
            expect_guard(r + (size_t)(dsp[i] + cnt[i]) * (size_t)y->ext, (size_t)y->ext, "gatherv gap");
        }
    }
    free(s);
    free(r);
    vlayout_free(&v);
}

static void test_scatterv(const ttype *y, long count, int root, int form, int in_place)
{
    vlayout v = vlayout_make(count, -1);
    int *cnt = v.cnt, *dsp = v.dsp;
    MPI_Count *ccnt = v.ccnt;
    MPI_Aint *cdsp = v.cdsp;
    long total = v.total;
    int *s = alloc_ints((size_t)(total * y->ext)), *r = alloc_ints((size_t)(cnt[rank] * y->ext));
    if (rank == root)
        for (int i = 0; i < size; i++) fill(s + (size_t)dsp[i] * (size_t)y->ext, y, cnt[i], root, i);
    void *rb = (in_place && rank == root) ? MPI_IN_PLACE : r;
    RUN_FORM(form, 1, MPI_Scatterv(s, cnt, dsp, y->t, rb, cnt[rank], y->t, root, MPI_COMM_WORLD),
             MPI_Scatterv_c(s, ccnt, cdsp, y->t, rb, ccnt[rank], y->t, root, MPI_COMM_WORLD),
             MPI_Iscatterv(s, cnt, dsp, y->t, rb, cnt[rank], y->t, root, MPI_COMM_WORLD, &req_),
             MPI_Scatterv_init(s, cnt, dsp, y->t, rb, cnt[rank], y->t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    if (rb != MPI_IN_PLACE) expect(r, y, cnt[rank], root, rank, "scatterv");
    free(s);
    free(r);
    vlayout_free(&v);
}

static void test_allgather(const ttype *y, long count, int form, int in_place)
{
    size_t blk = (size_t)(count * y->ext);
    int *s = alloc_ints(blk), *r = alloc_ints(blk * (size_t)size);
    fill(s, y, count, rank, 0);
    const void *sb = s;
    if (in_place) {
        fill(r + blk * (size_t)rank, y, count, rank, 0);
        sb = MPI_IN_PLACE;
    }
    RUN_FORM(form, 1, MPI_Allgather(sb, (int)count, y->t, r, (int)count, y->t, MPI_COMM_WORLD),
             MPI_Allgather_c(sb, count, y->t, r, count, y->t, MPI_COMM_WORLD),
             MPI_Iallgather(sb, (int)count, y->t, r, (int)count, y->t, MPI_COMM_WORLD, &req_),
             MPI_Allgather_init(sb, (int)count, y->t, r, (int)count, y->t, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    for (int i = 0; i < size; i++) expect(r + blk * (size_t)i, y, count, i, 0, "allgather");
    free(s);
    free(r);
}

static void test_allgatherv(const ttype *y, long count, int form, int in_place)
{
    vlayout v = vlayout_make(count, -1);
    int *cnt = v.cnt, *dsp = v.dsp;
    MPI_Count *ccnt = v.ccnt;
    MPI_Aint *cdsp = v.cdsp;
    long total = v.total;
    int *s = alloc_ints((size_t)(cnt[rank] * y->ext)), *r = alloc_ints((size_t)(total * y->ext));
    fill(s, y, cnt[rank], rank, 0);
    const void *sb = s;
    if (in_place) {
        fill(r + (size_t)dsp[rank] * (size_t)y->ext, y, cnt[rank], rank, 0);
        sb = MPI_IN_PLACE;
    }
    RUN_FORM(form, 1, MPI_Allgatherv(sb, cnt[rank], y->t, r, cnt, dsp, y->t, MPI_COMM_WORLD),
             MPI_Allgatherv_c(sb, ccnt[rank], y->t, r, ccnt, cdsp, y->t, MPI_COMM_WORLD),
             MPI_Iallgatherv(sb, cnt[rank], y->t, r, cnt, dsp, y->t, MPI_COMM_WORLD, &req_),
             MPI_Allgatherv_init(sb, cnt[rank], y->t, r, cnt, dsp, y->t, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    for (int i = 0; i < size; i++) {
        expect(r + (size_t)dsp[i] * (size_t)y->ext, y, cnt[i], i, 0, "allgatherv");
        expect_guard(r + (size_t)(dsp[i] + cnt[i]) * (size_t)y->ext, (size_t)y->ext, "allgatherv gap");
    }
    free(s);
    free(r);
    vlayout_free(&v);
}

static void test_alltoall(const ttype *y, long count, int form, int in_place)
{
    size_t blk = (size_t)(count * y->ext);
    int *s = alloc_ints(blk * (size_t)size), *r = alloc_ints(blk * (size_t)size);
    int *io = in_place ? r : s;
    for (int j = 0; j < size; j++) fill(io + blk * (size_t)j, y, count, rank, j);
    const void *sb = in_place ? MPI_IN_PLACE : s;
    /* in place, a second run would start from the first one's result */
    RUN_FORM(form, !in_place, MPI_Alltoall(sb, (int)count, y->t, r, (int)count, y->t, MPI_COMM_WORLD),
             MPI_Alltoall_c(sb, count, y->t, r, count, y->t, MPI_COMM_WORLD),
             MPI_Ialltoall(sb, (int)count, y->t, r, (int)count, y->t, MPI_COMM_WORLD, &req_),
             MPI_Alltoall_init(sb, (int)count, y->t, r, (int)count, y->t, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    for (int i = 0; i < size; i++) expect(r + blk * (size_t)i, y, count, i, rank, "alltoall");
    free(s);
    free(r);
}

/* alltoallv: rank i sends (i + j) % 3 * count elements to rank j (vlayout) */
static void test_alltoallv(const ttype *y, long count, int form, int in_place)
{
    vlayout sv = vlayout_make(count, rank), rv = vlayout_make(count, rank);
    int *sc = sv.cnt, *sd = sv.dsp, *rc = rv.cnt, *rd = rv.dsp;
    MPI_Count *csc = sv.ccnt, *crc = rv.ccnt;
    MPI_Aint *csd = sv.cdsp, *crd = rv.cdsp;
    long stotal = sv.total, rtotal = rv.total;
    int *s = alloc_ints((size_t)(stotal * y->ext)), *r = alloc_ints((size_t)(rtotal * y->ext));
    /* in place the send layout is the receive layout (symmetric counts here) */
    for (int j = 0; j < size; j++)
        fill((in_place ? r + (size_t)rd[j] * (size_t)y->ext : s + (size_t)sd[j] * (size_t)y->ext), y,
             in_place ? rc[j] : sc[j], rank, j);
    const void *sb = in_place ? MPI_IN_PLACE : s;
    RUN_FORM(form, !in_place, MPI_Alltoallv(sb, sc, sd, y->t, r, rc, rd, y->t, MPI_COMM_WORLD),
             MPI_Alltoallv_c(sb, csc, csd, y->t, r, crc, crd, y->t, MPI_COMM_WORLD),
             MPI_Ialltoallv(sb, sc, sd, y->t, r, rc, rd, y->t, MPI_COMM_WORLD, &req_),
             MPI_Alltoallv_init(sb, sc, sd, y->t, r, rc, rd, y->t, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    for (int i = 0; i < size; i++) {
        expect(r + (size_t)rd[i] * (size_t)y->ext, y, rc[i], i, rank, "alltoallv");
        expect_guard(r + (size_t)(rd[i] + rc[i]) * (size_t)y->ext, (size_t)y->ext, "alltoallv gap");
    }
    free(s);
    free(r);
    vlayout_free(&sv);
    vlayout_free(&rv);
}

/* alltoallw: to odd ranks the data goes as 2*count ints, to even ones as
 * count elements of the two-int type with gaps; the receiver uses the
 * other type for odd senders, so every odd pair matches signatures across
 * different types. Displacements are in bytes. */
static void test_alltoallw(long count, int form)
{
    size_t n = (size_t)size;
    const ttype *vec = &types[1], *in = &types[0];
    int *sc = malloc(sizeof(int) * n), *sd = malloc(sizeof(int) * n), *rc = malloc(sizeof(int) * n),
        *rd = malloc(sizeof(int) * n);
    MPI_Count *csc = malloc(sizeof(MPI_Count) * n), *crc = malloc(sizeof(MPI_Count) * n);
    MPI_Aint *csd = malloc(sizeof(MPI_Aint) * n), *crd = malloc(sizeof(MPI_Aint) * n);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * n), *rt = malloc(sizeof(MPI_Datatype) * n);
    /* every block gets room for count elements of the wider type */
    size_t slot = (size_t)(count * vec->ext + 1);
    for (int p = 0; p < size; p++) {
        int odd_dst = p % 2, odd_src = p % 2;
        st[p] = odd_dst ? in->t : vec->t;
        sc[p] = (int)(odd_dst ? 2 * count : count);
        rt[p] = odd_src ? vec->t : vec->t;
        rc[p] = (int)count;
        sd[p] = rd[p] = (int)(slot * (size_t)(size - 1 - p) * sizeof(int));
        csc[p] = sc[p];
        crc[p] = rc[p];
        csd[p] = sd[p];
        crd[p] = rd[p];
    }
    int *s = alloc_ints(slot * n), *r = alloc_ints(slot * n);
    for (int p = 0; p < size; p++) {
        int *blk = s + slot * (size_t)(size - 1 - p);
        if (p % 2) { /* as plain ints: the values the receiver's two-int elements expect */
            for (long k = 0; k < 2 * count; k++) blk[k] = val(rank, p, k);
        } else {
            fill(blk, vec, count, rank, p);
        }
    }
    RUN_FORM(form, 1, MPI_Alltoallw(s, sc, sd, st, r, rc, rd, rt, MPI_COMM_WORLD),
             MPI_Alltoallw_c(s, csc, csd, st, r, crc, crd, rt, MPI_COMM_WORLD),
             MPI_Ialltoallw(s, sc, sd, st, r, rc, rd, rt, MPI_COMM_WORLD, &req_),
             MPI_Alltoallw_init(s, sc, sd, st, r, rc, rd, rt, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    for (int i = 0; i < size; i++) expect(r + slot * (size_t)(size - 1 - i), vec, count, i, rank, "alltoallw");
    free(s);
    free(r);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(csc);
    free(crc);
    free(csd);
    free(crd);
    free(st);
    free(rt);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Datatype vec, vec_r, c3;
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_create_resized(vec, 0, 4 * (MPI_Aint)sizeof(int), &vec_r));
    CHECK_MPI(MPI_Type_commit(&vec_r));
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &c3));
    CHECK_MPI(MPI_Type_commit(&c3));
    types[0] = (ttype){MPI_INT, 1, 1, {0}, "MPI_INT"};
    types[1] = (ttype){vec_r, 4, 2, {0, 2}, "vector with gaps"};
    types[2] = (ttype){c3, 3, 3, {0, 1, 2}, "contiguous(3, MPI_INT)"};
    const long counts[] = {0, 1, 7, 300, 40000};
    const int ncounts = sizeof counts / sizeof counts[0];

    int cases = 0;
    for (int ti = 0; ti < 3; ti++)
        for (int ci = 0; ci < ncounts; ci++) {
            const ttype *y = &types[ti];
            long count = counts[ci];
            if (ti && count > 1000) count /= 4; /* the wider types: keep the job small */
            int form = (ti + ci) % FORM_COUNT, root = (ti + ci) % 2 ? size - 1 : 0;
            int in_place = (ti + ci) % 3 == 0;
            if (ti && !CT_DERIVED_ALL_FORMS) form %= 2;
            if (ct_want("bcast")) test_bcast(y, count, root, form);
            if (ct_want("gather")) test_gather(y, count, root, form, in_place);
            if (ct_want("scatter")) test_scatter(y, count, root, form, in_place);
            if (ct_want("gatherv")) test_gatherv(y, count, root, form, in_place);
            if (ct_want("scatterv")) test_scatterv(y, count, root, form, in_place);
            if (ct_want("allgather")) test_allgather(y, count, form, in_place);
            if (ct_want("allgatherv")) test_allgatherv(y, count, form, in_place);
            if (ct_want("alltoall")) test_alltoall(y, count, form, in_place);
            if (ct_want("alltoallv")) test_alltoallv(y, count / 2, form, in_place);
            if (ti == 0 && ct_want("alltoallw")) test_alltoallw(count / 2, form);
            cases++;
        }
    if (ct_want("barrier"))
        for (int form = 0; form < FORM_COUNT; form++)
            RUN_FORM(form, 1, MPI_Barrier(MPI_COMM_WORLD), MPI_Barrier(MPI_COMM_WORLD),
                     MPI_Ibarrier(MPI_COMM_WORLD, &req_), MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req_));

    CHECK_MPI(MPI_Type_free(&vec));
    CHECK_MPI(MPI_Type_free(&vec_r));
    CHECK_MPI(MPI_Type_free(&c3));
    char msg[128];
    snprintf(msg, sizeof msg, "coll_data: %d cases of every data-movement collective, all forms", cases);
    mt_pass(msg);
    MPI_Finalize();
    return 0;
}
