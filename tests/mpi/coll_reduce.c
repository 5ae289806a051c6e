/* Reduction collectives: reduce, allreduce, scan, exscan,
 * reduce_scatter_block, reduce_scatter. Rank r's element g is a known
 * function of (r, g), so every rank folds the expected result itself, in
 * rank order (the standard's order, which non-commutative ops must keep).
 * Cases: predefined ops on int and double, MAX, MINLOC on MPI_DOUBLE_INT,
 * SUM on a derived type with gaps (which must stay untouched), a
 * commutative user op, and a non-commutative user op (2x2 matrix product)
 * on a dense and on a gapped derived type. Counts 0, 1, small, large (the
 * non-commutative op too, so that its messages go by rendezvous and are
 * copied by sender and receiver together);
 * MPI_IN_PLACE; roots first and last; every form (colltest.h). */
#include "colltest.h"
#include <stdint.h>

#define FILLER 0xa5

typedef struct rcase {
    const char *name;
    MPI_Datatype t;
    MPI_Op op;
    int ext;     /* bytes per element */
    int nranges; /* data bytes of an element */
    int off[2], len[2];
    int check_gaps; /* bytes outside the data must keep FILLER */
    void (*gen)(void *el, int r, long g);
    void (*comb)(const void *a, void *b); /* b = a op b */
    int big;                              /* may take the large count */
} rcase;

static int rank, size;

static void gen_int(void *el, int r, long g) { *(int *)el = (int)(((r + 1) * (g + 3)) % 1000) - 400; }
static void comb_sum_int(const void *a, void *b) { *(int *)b += *(const int *)a; }
static void comb_max_int(const void *a, void *b)
{
    if (*(const int *)a > *(int *)b) *(int *)b = *(const int *)a;
}
static void gen_double(void *el, int r, long g) { *(double *)el = (double)((r * 7 + g) % 50) - 20.0; }
static void comb_sum_double(const void *a, void *b) { *(double *)b += *(const double *)a; }

typedef struct {
    double v;
    int i;
} dint;
static void gen_dint(void *el, int r, long g)
{
    dint d = {(double)((r * 13 + g * 7) % 10), r};
    memcpy(el, &d.v, sizeof d.v);
    memcpy((char *)el + offsetof(dint, i), &d.i, sizeof d.i);
}
static void comb_minloc(const void *a, void *b)
{
    dint x, y;
    memcpy(&x.v, a, 8);
    memcpy(&x.i, (const char *)a + offsetof(dint, i), 4);
    memcpy(&y.v, b, 8);
    memcpy(&y.i, (char *)b + offsetof(dint, i), 4);
    if (x.v < y.v || (x.v == y.v && x.i < y.i)) {
        memcpy(b, &x.v, 8);
        memcpy((char *)b + offsetof(dint, i), &x.i, 4);
    }
}

/* two ints at bytes 0 and 8 of a 16-byte element */
static void gen_vec(void *el, int r, long g)
{
    gen_int(el, r, 2 * g);
    gen_int((char *)el + 8, r, 2 * g + 1);
}
static void comb_vec(const void *a, void *b)
{
    comb_sum_int(a, b);
    comb_sum_int((const char *)a + 8, (char *)b + 8);
}

/* 2x2 matrices of unsigned ints (wrapping): associative, not commutative */
static void gen_mat(void *el, int r, long g)
{
    unsigned m[4] = {1u + (unsigned)((r + g) % 3), (unsigned)((r * 5 + g) % 7), (unsigned)((r + 2 * g) % 5),
                     1u + (unsigned)((r * 3 + g) % 4)};
    memcpy(el, m, sizeof m);
}
static void comb_mat(const void *a, void *b)
{
    unsigned x[4], y[4], z[4];
    memcpy(x, a, sizeof x);
    memcpy(y, b, sizeof y);
    z[0] = x[0] * y[0] + x[1] * y[2];
    z[1] = x[0] * y[1] + x[1] * y[3];
    z[2] = x[2] * y[0] + x[3] * y[2];
    z[3] = x[2] * y[1] + x[3] * y[3];
    memcpy(b, z, sizeof z);
}
/* the user function: the elements of whatever type it gets, at its extent */
static void user_mat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(*dt, &lb, &ext);
    for (int i = 0; i < *len; i++) comb_mat((char *)in + i * ext, (char *)inout + i * ext);
}
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

static rcase cases[8];
static int ncases;

static unsigned char *alloc_bytes(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    CHECK(p != NULL, "out of memory");
    memset(p, FILLER, n ? n : 1);
    return p;
}

/* element g of rank r's input at el */
static void put(const rcase *c, unsigned char *el, int r, long g)
{
    unsigned char tmp[32];
    c->gen(tmp, r, g);
    for (int k = 0; k < c->nranges; k++) memcpy(el + c->off[k], tmp + c->off[k], (size_t)c->len[k]);
}

static void fill(const rcase *c, unsigned char *buf, long count, int r, long first)
{
    for (long e = 0; e < count; e++) put(c, buf + e * c->ext, r, first + e);
}

/* the reduction over ranks lo..hi of element g, in rank order */
static void fold(const rcase *c, unsigned char *acc, int lo, int hi, long g)
{
    unsigned char x[32];
    c->gen(acc, lo, g);
    for (int r = lo + 1; r <= hi; r++) {
        c->gen(x, r, g);
        c->comb(acc, x); /* x = acc op x_r */
        memcpy(acc, x, (size_t)c->ext);
    }
}

static void expect(const rcase *c, const unsigned char *buf, long count, int lo, int hi, long first, const char *what)
{
    unsigned char want[32];
    for (long e = 0; e < count; e++) {
        const unsigned char *el = buf + e * c->ext;
        fold(c, want, lo, hi, first + e);
        for (int k = 0; k < c->nranges; k++)
            CHECK(!memcmp(el + c->off[k], want + c->off[k], (size_t)c->len[k]),
                  "%s (%s): element %ld wrong (ranks %d..%d)", what, c->name, first + e, lo, hi);
        if (!c->check_gaps) continue;
        for (int b = 0; b < c->ext; b++) {
            int data = 0;
            for (int k = 0; k < c->nranges; k++) data |= b >= c->off[k] && b < c->off[k] + c->len[k];
            CHECK(data || el[b] == FILLER, "%s (%s): gap byte %d of element %ld overwritten", what, c->name, b,
                  first + e);
        }
    }
}

static void expect_untouched(const unsigned char *buf, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) CHECK(buf[i] == FILLER, "%s: byte %zu written", what, i);
}

static void test_reduce(const rcase *c, long count, int root, int form, int in_place)
{
    size_t bytes = (size_t)(count * c->ext);
    unsigned char *s = alloc_bytes(bytes), *r = alloc_bytes(bytes);
    fill(c, in_place && rank == root ? r : s, count, rank, 0);
    const void *sb = in_place && rank == root ? MPI_IN_PLACE : s;
    RUN_FORM(form, !in_place, MPI_Reduce(sb, r, (int)count, c->t, c->op, root, MPI_COMM_WORLD),
             MPI_Reduce_c(sb, r, count, c->t, c->op, root, MPI_COMM_WORLD),
             MPI_Ireduce(sb, r, (int)count, c->t, c->op, root, MPI_COMM_WORLD, &req_),
             MPI_Reduce_init(sb, r, (int)count, c->t, c->op, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    if (rank == root) expect(c, r, count, 0, size - 1, 0, "reduce");
    else expect_untouched(r, bytes, "reduce (non-root receive buffer)");
    free(s);
    free(r);
}

static void test_allreduce(const rcase *c, long count, int form, int in_place)
{
    size_t bytes = (size_t)(count * c->ext);
    unsigned char *s = alloc_bytes(bytes), *r = alloc_bytes(bytes);
    fill(c, in_place ? r : s, count, rank, 0);
    const void *sb = in_place ? MPI_IN_PLACE : s;
    RUN_FORM(form, !in_place, MPI_Allreduce(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD),
             MPI_Allreduce_c(sb, r, count, c->t, c->op, MPI_COMM_WORLD),
             MPI_Iallreduce(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD, &req_),
             MPI_Allreduce_init(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    expect(c, r, count, 0, size - 1, 0, "allreduce");
    free(s);
    free(r);
}

static void test_scan(const rcase *c, long count, int form, int in_place, int ex)
{
    size_t bytes = (size_t)(count * c->ext);
    unsigned char *s = alloc_bytes(bytes), *r = alloc_bytes(bytes);
    fill(c, in_place ? r : s, count, rank, 0);
    const void *sb = in_place ? MPI_IN_PLACE : s;
    if (ex)
        RUN_FORM(form, !in_place, MPI_Exscan(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD),
                 MPI_Exscan_c(sb, r, count, c->t, c->op, MPI_COMM_WORLD),
                 MPI_Iexscan(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD, &req_),
                 MPI_Exscan_init(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    else
        RUN_FORM(form, !in_place, MPI_Scan(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD),
                 MPI_Scan_c(sb, r, count, c->t, c->op, MPI_COMM_WORLD),
                 MPI_Iscan(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD, &req_),
                 MPI_Scan_init(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    if (!ex) expect(c, r, count, 0, rank, 0, "scan");
    else if (rank > 0) expect(c, r, count, 0, rank - 1, 0, "exscan");
    else if (!in_place) expect_untouched(r, bytes, "exscan (rank 0 receive buffer)");
    free(s);
    free(r);
}

static void test_reduce_scatter_block(const rcase *c, long count, int form, int in_place)
{
    size_t bytes = (size_t)(count * c->ext), all = bytes * (size_t)size;
    unsigned char *s = alloc_bytes(all), *r = alloc_bytes(in_place ? all : bytes);
    fill(c, in_place ? r : s, count * size, rank, 0);
    const void *sb = in_place ? MPI_IN_PLACE : s;
    RUN_FORM(form, !in_place, MPI_Reduce_scatter_block(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD),
             MPI_Reduce_scatter_block_c(sb, r, count, c->t, c->op, MPI_COMM_WORLD),
             MPI_Ireduce_scatter_block(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD, &req_),
             MPI_Reduce_scatter_block_init(sb, r, (int)count, c->t, c->op, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    expect(c, r, count, 0, size - 1, count * rank, "reduce_scatter_block");
    free(s);
    free(r);
}

static void test_reduce_scatter(const rcase *c, long count, int form, int in_place)
{
    int *cnt = malloc(sizeof(int) * (size_t)size);
    MPI_Count *ccnt = malloc(sizeof(MPI_Count) * (size_t)size);
    long total = 0, first = 0;
    for (int i = 0; i < size; i++) {
        cnt[i] = (int)(count * ((i + 1) % 3));
        ccnt[i] = cnt[i];
        if (i < rank) first += cnt[i];
        total += cnt[i];
    }
    size_t all = (size_t)(total * c->ext);
    unsigned char *s = alloc_bytes(all), *r = alloc_bytes(in_place ? all : (size_t)(cnt[rank] * c->ext));
    fill(c, in_place ? r : s, total, rank, 0);
    const void *sb = in_place ? MPI_IN_PLACE : s;
    RUN_FORM(form, !in_place, MPI_Reduce_scatter(sb, r, cnt, c->t, c->op, MPI_COMM_WORLD),
             MPI_Reduce_scatter_c(sb, r, ccnt, c->t, c->op, MPI_COMM_WORLD),
             MPI_Ireduce_scatter(sb, r, cnt, c->t, c->op, MPI_COMM_WORLD, &req_),
             MPI_Reduce_scatter_init(sb, r, cnt, c->t, c->op, MPI_COMM_WORLD, MPI_INFO_NULL, &req_));
    expect(c, r, cnt[rank], 0, size - 1, first, "reduce_scatter");
    free(s);
    free(r);
    free(cnt);
    free(ccnt);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Datatype vec, vec16, mat, mat_gap, mat20;
    MPI_Op op_mat, op_sum;
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_create_resized(vec, 0, 16, &vec16));
    CHECK_MPI(MPI_Type_commit(&vec16));
    CHECK_MPI(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
    CHECK_MPI(MPI_Type_commit(&mat));
    CHECK_MPI(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_gap));
    CHECK_MPI(MPI_Type_create_resized(mat_gap, 0, 20, &mat20));
    CHECK_MPI(MPI_Type_commit(&mat20));
    CHECK_MPI(MPI_Op_create(user_mat, 0, &op_mat));
    CHECK_MPI(MPI_Op_create(user_sum, 1, &op_sum));
    int commute = -1;
    CHECK_MPI(MPI_Op_commutative(op_mat, &commute));
    CHECK_EQ(commute, 0);
    CHECK_MPI(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK_EQ(commute, 1);

    cases[ncases++] = (rcase){"MPI_SUM on MPI_INT", MPI_INT, MPI_SUM, 4, 1, {0}, {4}, 0, gen_int, comb_sum_int, 1};
    cases[ncases++] = (rcase){"MPI_SUM on MPI_DOUBLE", MPI_DOUBLE, MPI_SUM, 8, 1, {0}, {8}, 0, gen_double,
                              comb_sum_double,         1};
    cases[ncases++] = (rcase){"MPI_MAX on MPI_INT", MPI_INT, MPI_MAX, 4, 1, {0}, {4}, 0, gen_int, comb_max_int, 0};
    cases[ncases++] = (rcase){"MPI_MINLOC on MPI_DOUBLE_INT",
                              MPI_DOUBLE_INT,
                              MPI_MINLOC,
                              (int)sizeof(dint),
                              2,
                              {0, (int)offsetof(dint, i)},
                              {8, 4},
                              0,
                              gen_dint,
                              comb_minloc,
                              0};
    cases[ncases++] = (rcase){
        "MPI_SUM on a vector with gaps", vec16, MPI_SUM, 16, 2, {0, 8}, {4, 4}, 1, gen_vec, comb_vec, 0};
    cases[ncases++] = (rcase){
        "commutative user op on MPI_INT", MPI_INT, op_sum, 4, 1, {0}, {4}, 0, gen_int, comb_sum_int, 1};
    cases[ncases++] = (rcase){"non-commutative user op on contiguous(4, MPI_UNSIGNED)",
                              mat,
                              op_mat,
                              16,
                              1,
                              {0},
                              {16},
                              0,
                              gen_mat,
                              comb_mat,
                              1};
    cases[ncases++] = (rcase){
        "non-commutative user op on a type with a gap", mat20, op_mat, 20, 1, {0}, {16}, 1, gen_mat, comb_mat, 1};

    const long counts[] = {0, 1, 5, 700, 40000};
    const int ncounts = sizeof counts / sizeof counts[0];
    int runs = 0;
    for (int ci = 0; ci < ncases; ci++)
        for (int ni = 0; ni < ncounts; ni++) {
            const rcase *c = &cases[ci];
            long count = counts[ni];
            if (count > 1000 && !c->big) count = 3000;
            int form = (ci + ni) % FORM_COUNT, root = (ci + ni) % 2 ? size - 1 : 0, in_place = (ci + ni) % 3 == 1;
            if (c->t != MPI_INT && c->t != MPI_DOUBLE && c->t != MPI_DOUBLE_INT && !CT_DERIVED_ALL_FORMS) form %= 2;
            if (ct_want("reduce")) test_reduce(c, count, root, form, in_place);
            if (ct_want("allreduce")) test_allreduce(c, count, form, in_place);
            if (ct_want("scan")) test_scan(c, count, form, in_place, 0);
            if (ct_want("exscan")) test_scan(c, count, form, in_place, 1);
            if (ct_want("reduce_scatter_block")) test_reduce_scatter_block(c, count / size + 1, form, in_place);
            if (ct_want("reduce_scatter")) test_reduce_scatter(c, count / size + 1, form, in_place);
            runs++;
        }

    CHECK_MPI(MPI_Op_free(&op_mat));
    CHECK_MPI(MPI_Op_free(&op_sum));
    CHECK(op_mat == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
    CHECK_MPI(MPI_Type_free(&vec));
    CHECK_MPI(MPI_Type_free(&vec16));
    CHECK_MPI(MPI_Type_free(&mat));
    CHECK_MPI(MPI_Type_free(&mat_gap));
    CHECK_MPI(MPI_Type_free(&mat20));
    char msg[128];
    snprintf(msg, sizeof msg, "coll_reduce: %d cases of every reduction collective, all forms", runs);
    mt_pass(msg);
    MPI_Finalize();
    return 0;
}
