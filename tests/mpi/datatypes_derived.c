/* Derived datatype constructors: size, bounds, true bounds, envelope and
 * contents of every constructor, nested and resized types, structs with
 * gaps and alignment padding, subarrays in C and Fortran order. */
#include "mpitest.h"
#include <stddef.h>

static void check_type(MPI_Datatype t, int size, MPI_Aint lb, MPI_Aint extent, MPI_Aint tlb, MPI_Aint textent, int line)
{
    int s;
    MPI_Aint l, e;
    CHECK_MPI(MPI_Type_size(t, &s));
    CHECK(s == size, "line %d: size %d, expected %d", line, s, size);
    CHECK_MPI(MPI_Type_get_extent(t, &l, &e));
    CHECK(l == lb && e == extent, "line %d: lb/extent %ld/%ld, expected %ld/%ld", line, (long)l, (long)e, (long)lb,
          (long)extent);
    CHECK_MPI(MPI_Type_get_true_extent(t, &l, &e));
    CHECK(l == tlb && e == textent, "line %d: true lb/extent %ld/%ld, expected %ld/%ld", line, (long)l, (long)e,
          (long)tlb, (long)textent);
}
#define CHECK_TYPE(t, s, lb, ext, tlb, text) check_type(t, s, lb, ext, tlb, text, __LINE__)

static void check_envelope(MPI_Datatype t, int ni, int na, int nt, int comb, int line)
{
    int i, a, d, c;
    CHECK_MPI(MPI_Type_get_envelope(t, &i, &a, &d, &c));
    CHECK(i == ni && a == na && d == nt && c == comb, "line %d: envelope %d/%d/%d/%d, expected %d/%d/%d/%d", line, i, a,
          d, c, ni, na, nt, comb);
}
#define CHECK_ENVELOPE(t, ni, na, nt, comb) check_envelope(t, ni, na, nt, comb, __LINE__)

/* contents: the integers and addresses as given, and the old types */
static void check_contents(MPI_Datatype t, int ni, const int *ints, int na, const MPI_Aint *aints, int nt,
                           const MPI_Datatype *types, int line)
{
    int gi[64];
    MPI_Aint ga[64];
    MPI_Datatype gt[8];
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
    /* Open MPI 4.1 crashes in MPI_Type_get_contents: not checked there */
    (void)ni, (void)ints, (void)na, (void)aints, (void)nt, (void)types, (void)line, (void)gi, (void)ga, (void)gt;
    return;
#endif
    CHECK_MPI(MPI_Type_get_contents(t, 64, 64, 8, gi, ga, gt));
    for (int k = 0; k < ni; k++)
        CHECK(gi[k] == ints[k], "line %d: integer %d is %d, expected %d", line, k, gi[k], ints[k]);
    for (int k = 0; k < na; k++)
        CHECK(ga[k] == aints[k], "line %d: address %d is %ld, expected %ld", line, k, (long)ga[k], (long)aints[k]);
    for (int k = 0; k < nt; k++) {
        int ni2, na2, nt2, comb;
        CHECK_MPI(MPI_Type_get_envelope(gt[k], &ni2, &na2, &nt2, &comb));
        if (comb == MPI_COMBINER_NAMED) {
            CHECK(gt[k] == types[k], "line %d: type %d differs", line, k);
        } else {
            /* a derived type comes back as a new reference: same layout */
            int s1, s2;
            MPI_Aint l1, e1, l2, e2;
            MPI_Type_size(gt[k], &s1);
            MPI_Type_size(types[k], &s2);
            MPI_Type_get_extent(gt[k], &l1, &e1);
            MPI_Type_get_extent(types[k], &l2, &e2);
            CHECK(s1 == s2 && l1 == l2 && e1 == e2, "line %d: type %d differs", line, k);
            CHECK_MPI(MPI_Type_free(&gt[k]));
        }
    }
}
#define CHECK_CONTENTS(t, ni, ints, na, aints, nt, types) check_contents(t, ni, ints, na, aints, nt, types, __LINE__)

struct cdi {
    char c;
    double d;
    int i;
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype t, u, v;
    const MPI_Aint ia = sizeof(int), da = sizeof(double);

    /* contiguous */
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &t));
    CHECK_TYPE(t, 12, 0, 12, 0, 12);
    CHECK_ENVELOPE(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS);
    CHECK_CONTENTS(t, 1, ((int[]){3}), 0, NULL, 1, ((MPI_Datatype[]){MPI_INT}));
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &t));
    CHECK_TYPE(t, 0, 0, 0, 0, 0);
    CHECK_MPI(MPI_Type_free(&t));
    mt_pass("contiguous");

    /* vector, positive and negative stride */
    CHECK_MPI(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &t));
    CHECK_TYPE(t, 48, 0, 10 * da, 0, 10 * da);
    CHECK_ENVELOPE(t, 3, 0, 1, MPI_COMBINER_VECTOR);
    CHECK_CONTENTS(t, 3, ((int[]){3, 2, 4}), 0, NULL, 1, ((MPI_Datatype[]){MPI_DOUBLE}));
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_vector(2, 1, -2, MPI_INT, &t));
    CHECK_TYPE(t, 8, -2 * ia, 3 * ia, -2 * ia, 3 * ia);
    CHECK_MPI(MPI_Type_free(&t));
    /* hvector */
    CHECK_MPI(MPI_Type_create_hvector(2, 1, 16, MPI_INT, &t));
    CHECK_TYPE(t, 8, 0, 20, 0, 20);
    CHECK_ENVELOPE(t, 2, 1, 1, MPI_COMBINER_HVECTOR);
    CHECK_CONTENTS(t, 2, ((int[]){2, 1}), 1, ((MPI_Aint[]){16}), 1, ((MPI_Datatype[]){MPI_INT}));
    CHECK_MPI(MPI_Type_free(&t));
    mt_pass("vector, hvector");

    /* indexed, hindexed, indexed_block, hindexed_block */
    CHECK_MPI(MPI_Type_indexed(2, (int[]){1, 2}, (int[]){4, 0}, MPI_INT, &t));
    CHECK_TYPE(t, 12, 0, 20, 0, 20);
    CHECK_ENVELOPE(t, 5, 0, 1, MPI_COMBINER_INDEXED);
    CHECK_CONTENTS(t, 5, ((int[]){2, 1, 2, 4, 0}), 0, NULL, 1, ((MPI_Datatype[]){MPI_INT}));
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_create_hindexed(2, (int[]){1, 1}, (MPI_Aint[]){8, 0}, MPI_DOUBLE, &t));
    CHECK_TYPE(t, 16, 0, 16, 0, 16);
    CHECK_ENVELOPE(t, 3, 2, 1, MPI_COMBINER_HINDEXED);
    CHECK_CONTENTS(t, 3, ((int[]){2, 1, 1}), 2, ((MPI_Aint[]){8, 0}), 1, ((MPI_Datatype[]){MPI_DOUBLE}));
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_create_indexed_block(3, 2, (int[]){0, 5, 10}, MPI_SHORT, &t));
    CHECK_TYPE(t, 12, 0, 24, 0, 24);
    CHECK_ENVELOPE(t, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK);
    CHECK_CONTENTS(t, 5, ((int[]){3, 2, 0, 5, 10}), 0, NULL, 1, ((MPI_Datatype[]){MPI_SHORT}));
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_create_hindexed_block(2, 1, (MPI_Aint[]){4, 12}, MPI_INT, &t));
    CHECK_TYPE(t, 8, 4, 12, 4, 12);
    CHECK_ENVELOPE(t, 2, 2, 1, MPI_COMBINER_HINDEXED_BLOCK);
    CHECK_CONTENTS(t, 2, ((int[]){2, 1}), 2, ((MPI_Aint[]){4, 12}), 1, ((MPI_Datatype[]){MPI_INT}));
    CHECK_MPI(MPI_Type_free(&t));
    mt_pass("indexed, hindexed, indexed_block, hindexed_block");

    /* struct: extent padded to the strictest alignment, like the C struct */
    {
        struct cdi s[2];
        MPI_Aint base, a1, a2, a3;
        CHECK_MPI(MPI_Get_address(&s[0], &base));
        CHECK_MPI(MPI_Get_address(&s[0].c, &a1));
        CHECK_MPI(MPI_Get_address(&s[0].d, &a2));
        CHECK_MPI(MPI_Get_address(&s[0].i, &a3));
        CHECK_EQ(a2 - base, offsetof(struct cdi, d));
        MPI_Aint disp[3] = {a1 - base, a2 - base, a3 - base};
        MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
        CHECK_MPI(MPI_Type_create_struct(3, (int[]){1, 1, 1}, disp, types, &t));
        CHECK_TYPE(t, 1 + (int)da + (int)ia, 0, sizeof(struct cdi), 0, offsetof(struct cdi, i) + ia);
        CHECK_ENVELOPE(t, 4, 3, 3, MPI_COMBINER_STRUCT);
        CHECK_CONTENTS(t, 4, ((int[]){3, 1, 1, 1}), 3, disp, 3, types);
        CHECK_MPI(MPI_Type_free(&t));
        /* a gap in the middle and at the end */
        CHECK_MPI(
            MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 2 * ia}, (MPI_Datatype[]){MPI_INT, MPI_INT}, &t));
        CHECK_TYPE(t, 2 * (int)ia, 0, 3 * ia, 0, 3 * ia);
        CHECK_MPI(MPI_Type_free(&t));
    }
    mt_pass("struct");

    /* resized, and types built on resized types */
    CHECK_MPI(MPI_Type_create_resized(MPI_INT, -4, 16, &t));
    CHECK_TYPE(t, 4, -4, 16, 0, 4);
    CHECK_ENVELOPE(t, 0, 2, 1, MPI_COMBINER_RESIZED);
    CHECK_CONTENTS(t, 0, NULL, 2, ((MPI_Aint[]){-4, 16}), 1, ((MPI_Datatype[]){MPI_INT}));
    CHECK_MPI(MPI_Type_contiguous(2, t, &u));
    CHECK_TYPE(u, 8, -4, 32, 0, 20);
    CHECK_ENVELOPE(u, 1, 0, 1, MPI_COMBINER_CONTIGUOUS);
    CHECK_CONTENTS(u, 1, ((int[]){2}), 0, NULL, 1, &t);
    /* the old type may be freed: the new one keeps what it needs */
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_vector(2, 1, 3, u, &v));
    CHECK_TYPE(v, 16, -4, 4 * 32, 0, 3 * 32 + 20);
    CHECK_MPI(MPI_Type_free(&u));
    CHECK_MPI(MPI_Type_free(&v));
    /* a resized type inside a struct: no alignment padding is added */
    CHECK_MPI(MPI_Type_create_resized(MPI_DOUBLE, 0, 12, &t));
    CHECK_MPI(MPI_Type_create_struct(1, (int[]){2}, (MPI_Aint[]){0}, &t, &u));
    CHECK_TYPE(u, 16, 0, 24, 0, 20);
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_free(&u));
    mt_pass("resized, nested");

    /* subarray, C and Fortran order */
    {
        int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 2};
        CHECK_MPI(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
        CHECK_TYPE(t, 6 * (int)ia, 0, 20 * ia, 7 * ia, 8 * ia);
        CHECK_ENVELOPE(t, 8, 0, 1, MPI_COMBINER_SUBARRAY);
        CHECK_CONTENTS(t, 8, ((int[]){2, 4, 5, 2, 3, 1, 2, MPI_ORDER_C}), 0, NULL, 1, ((MPI_Datatype[]){MPI_INT}));
        CHECK_MPI(MPI_Type_free(&t));
        CHECK_MPI(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t));
        CHECK_TYPE(t, 6 * (int)ia, 0, 20 * ia, 9 * ia, 10 * ia);
        CHECK_MPI(MPI_Type_free(&t));
        /* 3-d, C order, of a vector */
        CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &u));
        CHECK_MPI(
            MPI_Type_create_subarray(3, (int[]){2, 3, 4}, (int[]){1, 2, 2}, (int[]){1, 1, 1}, MPI_ORDER_C, u, &t));
        CHECK_TYPE(t, 4 * 2 * (int)ia, 0, 24 * 3 * ia, (12 + 4 + 1) * 3 * ia, (22 - 17) * 3 * ia + 3 * ia);
        CHECK_MPI(MPI_Type_free(&t));
        CHECK_MPI(MPI_Type_free(&u));
    }
    mt_pass("subarray");

    /* darray: a 4 x 6 array of ints over a 2 x 2 grid, every distribution;
     * each process's packed elements are exactly the ones it owns, in
     * increasing storage order, and the type spans the whole array */
    {
        int gs[2] = {4, 6}, ps[2] = {2, 2};
        int dists[3][2] = {{MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
                           {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC},
                           {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}};
        int dargs[3][2] = {{MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, {1, 2}, {MPI_DISTRIBUTE_DFLT_DARG, 2}};
        int arr[24], packed[24];
        for (int i = 0; i < 24; i++) arr[i] = i;
        for (int order = 0; order < 2; order++)
            for (int k = 0; k < 3; k++) {
                int seen[24] = {0};
                for (int r = 0; r < 4; r++) {
                    int ord = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
                    CHECK_MPI(MPI_Type_create_darray(4, r, 2, gs, dists[k], dargs[k], ps, ord, MPI_INT, &t));
                    CHECK_MPI(MPI_Type_commit(&t));
                    MPI_Aint lb, ext;
                    CHECK_MPI(MPI_Type_get_extent(t, &lb, &ext));
                    CHECK(lb == 0 && ext == 24 * ia, "darray extent");
                    int sz, pos = 0;
                    CHECK_MPI(MPI_Type_size(t, &sz));
                    CHECK_MPI(MPI_Pack(arr, 1, t, packed, sizeof packed, &pos, MPI_COMM_SELF));
                    int n = sz / (int)ia, coord[2] = {r / 2, r % 2};
                    for (int e = 0; e < n; e++) {
                        int v = packed[e];
                        /* (row, column) of the element, whatever the order */
                        int i = order ? v % 4 : v / 6, j = order ? v / 4 : v % 6;
                        int bi = dists[k][0] == MPI_DISTRIBUTE_BLOCK ? i / 2 : (i / dargs[k][0]) % 2;
                        int bj = dists[k][1] == MPI_DISTRIBUTE_BLOCK ? j / 3 : (j / dargs[k][1]) % 2;
                        CHECK(bi == coord[0] && bj == coord[1], "order %d dist %d rank %d owns %d", order, k, r, v);
                        CHECK(e == 0 || packed[e - 1] < v, "order %d dist %d rank %d: not in storage order", order, k,
                              r);
                        seen[v]++;
                    }
                    CHECK_ENVELOPE(t, 12, 0, 1, MPI_COMBINER_DARRAY);
                    CHECK_MPI(MPI_Type_free(&t));
                }
                for (int i = 0; i < 24; i++)
                    CHECK(seen[i] == 1, "order %d dist %d: element %d owned %d times", order, k, i, seen[i]);
            }
    }
    mt_pass("darray");

    /* dup */
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &t));
    CHECK_MPI(MPI_Type_dup(t, &u));
    CHECK_TYPE(u, 8, 0, 12, 0, 12);
    CHECK_ENVELOPE(u, 0, 0, 1, MPI_COMBINER_DUP);
    CHECK_CONTENTS(u, 0, NULL, 0, NULL, 1, &t);
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_commit(&u));
    CHECK_MPI(MPI_Type_free(&u));
    mt_pass("dup");

#if MPI_VERSION >= 4
    {
        MPI_Count ni, na, nc, nt, s, lb, ext, counts[8];
        int comb, ints[4];
        MPI_Aint addrs[4];
        MPI_Datatype types[2];
        CHECK_MPI(MPI_Type_vector_c(3, 2, 4, MPI_INT, &t));
        CHECK_MPI(MPI_Type_size_c(t, &s));
        CHECK_EQ(s, 24);
        CHECK_MPI(MPI_Type_get_extent_c(t, &lb, &ext));
        CHECK_EQ(ext, 10 * ia);
        CHECK_MPI(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nt, &comb));
        CHECK(ni == 0 && na == 0 && nc == 3 && nt == 1 && comb == MPI_COMBINER_VECTOR, "vector_c envelope");
        CHECK_MPI(MPI_Type_get_contents_c(t, 4, 4, 8, 2, ints, addrs, counts, types));
        CHECK(counts[0] == 3 && counts[1] == 2 && counts[2] == 4 && types[0] == MPI_INT, "vector_c contents");
        CHECK_MPI(MPI_Type_free(&t));
        /* a type made by a plain constructor reports no large counts */
        CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
        CHECK_MPI(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nt, &comb));
        CHECK(ni == 1 && na == 0 && nc == 0 && nt == 1, "contiguous envelope_c");
        CHECK_MPI(MPI_Type_free(&t));
    }
    mt_pass("large-count constructors");
#endif

    MPI_Finalize();
    return 0;
}
