/* Group operations: size/rank, translate_ranks (MPI_PROC_NULL, MPI_UNDEFINED),
 * compare, union/intersection/difference, incl/excl and their range forms,
 * MPI_GROUP_EMPTY, and the error classes of invalid arguments. */
#include "mpitest.h"

static int gsize(MPI_Group g)
{
    int s = -1;
    CHECK_MPI(MPI_Group_size(g, &s));
    return s;
}
static int grank(MPI_Group g)
{
    int r = -2;
    CHECK_MPI(MPI_Group_rank(g, &r));
    return r;
}

/* The world ranks of g's members, in order, must be exactly want[0..n). */
/* Frees a group unless it is MPI_GROUP_EMPTY, which an empty result may be. */
static void gfree(MPI_Group *g)
{
    if (*g != MPI_GROUP_EMPTY) CHECK_MPI(MPI_Group_free(g));
}

/* The first n members of g, as world ranks, must be want[0..n). */
static void check_members(MPI_Group g, MPI_Group world, int n, const int *want, int line)
{
    int got = gsize(g);
    if (got < n) mt_fail(__FILE__, line, "group size %d, expected at least %d", got, n);
    for (int i = 0; i < n; i++) {
        int w = -5;
        CHECK_MPI(MPI_Group_translate_ranks(g, 1, &i, world, &w));
        if (w != want[i]) mt_fail(__FILE__, line, "member %d is world rank %d, expected %d", i, w, want[i]);
    }
}
#define MEMBERS(g, n, ...)                               \
    do {                                                 \
        int want_[] = {-1, __VA_ARGS__};                 \
        check_members(g, world, n, want_ + 1, __LINE__); \
    } while (0)

static int cmp(MPI_Group a, MPI_Group b)
{
    int r = -1;
    CHECK_MPI(MPI_Group_compare(a, b, &r));
    return r;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);
    MPI_Group world, g, u;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_EQ(gsize(world), size);
    CHECK_EQ(grank(world), rank);
    CHECK_EQ(gsize(MPI_GROUP_EMPTY), 0);
    CHECK_EQ(grank(MPI_GROUP_EMPTY), MPI_UNDEFINED);
    mt_pass("groups: size/rank of the world group and MPI_GROUP_EMPTY");

    /* Reverse order: incl of size-1..0. */
    int *rev = malloc(sizeof(int) * (size_t)size), *all = malloc(sizeof(int) * (size_t)size);
    int *out = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) rev[i] = size - 1 - i, all[i] = i;
    CHECK_MPI(MPI_Group_incl(world, size, rev, &g));
    CHECK_EQ(grank(g), size - 1 - rank);
    CHECK_EQ(cmp(world, g), size == 1 ? MPI_IDENT : MPI_SIMILAR);
    CHECK_EQ(cmp(world, world), MPI_IDENT);
    CHECK_MPI(MPI_Group_translate_ranks(g, size, all, world, out));
    for (int i = 0; i < size; i++) CHECK_EQ(out[i], size - 1 - i);
    CHECK_MPI(MPI_Group_free(&g));
    CHECK(g == MPI_GROUP_NULL, "Group_free must set MPI_GROUP_NULL");

    /* translate_ranks: MPI_PROC_NULL passes through, non-members are MPI_UNDEFINED. */
    int evens = (size + 1) / 2;
    int range_even[1][3] = {{0, size - 1, 2}};
    CHECK_MPI(MPI_Group_range_incl(world, 1, range_even, &g));
    CHECK_EQ(gsize(g), evens);
    CHECK_EQ(grank(g), rank % 2 ? MPI_UNDEFINED : rank / 2);
    {
        int in[3] = {MPI_PROC_NULL, 0, size - 1}, res[3];
        CHECK_MPI(MPI_Group_translate_ranks(world, 3, in, g, res));
        CHECK_EQ(res[0], MPI_PROC_NULL);
        CHECK_EQ(res[1], 0);
        CHECK_EQ(res[2], (size - 1) % 2 ? MPI_UNDEFINED : (size - 1) / 2);
        CHECK_MPI(MPI_Group_translate_ranks(world, 1, in + 1, MPI_GROUP_EMPTY, res));
        CHECK_EQ(res[0], MPI_UNDEFINED);
    }
    mt_pass("groups: incl (reversed), compare IDENT/SIMILAR, translate_ranks PROC_NULL/UNDEFINED");

    /* Set operations with the odd ranks. */
    MPI_Group odd, inter, diff;
    CHECK_MPI(MPI_Group_difference(world, g, &odd));
    CHECK_EQ(gsize(odd), size / 2);
    for (int i = 0; i < size / 2; i++) {
        int w = -5;
        CHECK_MPI(MPI_Group_translate_ranks(odd, 1, &i, world, &w));
        CHECK_EQ(w, 2 * i + 1);
    }
    CHECK_EQ(cmp(odd, g), MPI_UNEQUAL);
    /* union: evens then odds, so similar to world only if size <= 2 keeps order */
    CHECK_MPI(MPI_Group_union(g, odd, &u));
    CHECK_EQ(gsize(u), size);
    CHECK_EQ(cmp(u, world), size <= 2 ? MPI_IDENT : MPI_SIMILAR);
    CHECK_EQ(grank(u), rank % 2 ? evens + rank / 2 : rank / 2);
    CHECK_MPI(MPI_Group_free(&u));
    /* union with itself and with the empty group keeps the order */
    CHECK_MPI(MPI_Group_union(world, world, &u));
    CHECK_EQ(cmp(u, world), MPI_IDENT);
    CHECK_MPI(MPI_Group_free(&u));
    CHECK_MPI(MPI_Group_union(MPI_GROUP_EMPTY, g, &u));
    CHECK_EQ(cmp(u, g), MPI_IDENT);
    CHECK_MPI(MPI_Group_free(&u));
    /* intersection of disjoint groups is empty; with world it keeps group1's order */
    CHECK_MPI(MPI_Group_intersection(g, odd, &inter));
    CHECK_EQ(gsize(inter), 0);
    CHECK_EQ(cmp(inter, MPI_GROUP_EMPTY), MPI_IDENT);
    gfree(&inter);
    {
        MPI_Group r;
        CHECK_MPI(MPI_Group_incl(world, size, rev, &r));
        CHECK_MPI(MPI_Group_intersection(r, g, &inter));
        CHECK_EQ(gsize(inter), evens);
        int first = 0, w = -5;
        CHECK_MPI(MPI_Group_translate_ranks(inter, 1, &first, world, &w));
        CHECK_EQ(w, (size - 1) % 2 ? size - 2 : size - 1); /* the highest even rank comes first */
        CHECK_MPI(MPI_Group_free(&inter));
        CHECK_MPI(MPI_Group_free(&r));
    }
    CHECK_MPI(MPI_Group_difference(g, world, &diff));
    CHECK_EQ(gsize(diff), 0);
    gfree(&diff);
    gfree(&odd);
    CHECK_MPI(MPI_Group_free(&g));
    mt_pass("groups: union/intersection/difference, orders and empty results");

    /* excl, range_excl, range_incl with several and descending triplets. */
    if (size >= 4) {
        int ex[2] = {1, size - 1};
        CHECK_MPI(MPI_Group_excl(world, 2, ex, &g));
        CHECK_EQ(gsize(g), size - 2);
        if (size == 4) MEMBERS(g, 2, 0, 2);
        else MEMBERS(g, 3, 0, 2, 3);
        CHECK_EQ(grank(g), (rank == 1 || rank == size - 1) ? MPI_UNDEFINED : rank == 0 ? 0 : rank - 1);
        CHECK_MPI(MPI_Group_free(&g));
        int rx[1][3] = {{1, size - 1, 2}}; /* remove the odd ranks */
        CHECK_MPI(MPI_Group_range_excl(world, 1, rx, &g));
        CHECK_EQ(gsize(g), (size + 1) / 2);
        MEMBERS(g, 2, 0, 2);
        CHECK_MPI(MPI_Group_free(&g));
        int ri[2][3] = {{size - 1, 2, -2}, {0, 0, 1}}; /* descending, then a single */
        CHECK_MPI(MPI_Group_range_incl(world, 2, ri, &g));
        if (size == 4) MEMBERS(g, 2, 3, 0);
        CHECK_EQ(gsize(g), (size - 1 - 2) / 2 + 1 + 1);
        CHECK_MPI(MPI_Group_free(&g));
        /* incl of a subgroup's ranks: ranks are relative to that subgroup */
        int sub[1][3] = {{1, size - 1, 1}};
        MPI_Group tail, pick;
        CHECK_MPI(MPI_Group_range_incl(world, 1, sub, &tail));
        int two[2] = {2, 0};
        CHECK_MPI(MPI_Group_incl(tail, 2, two, &pick));
        MEMBERS(pick, 2, 3, 1);
        CHECK_MPI(MPI_Group_free(&pick));
        CHECK_MPI(MPI_Group_free(&tail));
    }
    /* n = 0 gives empty (incl) or the whole group (excl) */
    CHECK_MPI(MPI_Group_incl(world, 0, NULL, &g));
    CHECK_EQ(gsize(g), 0);
    CHECK_EQ(cmp(g, MPI_GROUP_EMPTY), MPI_IDENT);
    gfree(&g);
    CHECK_MPI(MPI_Group_excl(world, 0, NULL, &g));
    CHECK_EQ(cmp(g, world), MPI_IDENT);
    CHECK_MPI(MPI_Group_free(&g));
    CHECK_MPI(MPI_Group_range_excl(world, 1, (int(*)[3])(int[3]){0, size - 1, 1}, &g));
    CHECK_EQ(gsize(g), 0);
    gfree(&g);
    mt_pass("groups: excl, range_excl, range_incl (descending, several triplets), nested incl, n = 0");

    /* Error classes under MPI_ERRORS_RETURN (group errors go to MPI_COMM_SELF's handler). */
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int cls, rc, bad[2] = {size, 0}, dup[2] = {0, 0};
    g = MPI_GROUP_NULL;
    rc = MPI_Group_incl(world, 1, bad, &g);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_RANK);
    rc = MPI_Group_excl(world, 1, bad, &g);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_RANK);
#ifdef LEANMPI
    /* Duplicates make the call erroneous; detecting them is not required,
     * and other implementations do not, so only LeanMPI's answer is checked. */
    if (size >= 2) {
        rc = MPI_Group_incl(world, 2, dup, &g);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_RANK || cls == MPI_ERR_ARG, "duplicate rank gave class %d", cls);
        int rr[2][3] = {{0, size - 1, 1}, {0, 0, 1}};
        rc = MPI_Group_range_incl(world, 2, rr, &g);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_RANK || cls == MPI_ERR_ARG, "duplicate rank in ranges gave class %d", cls);
    }
#else
    (void)dup;
#endif
    {
        int r0[1][3] = {{0, size, 1}};
        rc = MPI_Group_range_incl(world, 1, r0, &g);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_RANK || cls == MPI_ERR_ARG, "range past the end gave class %d", cls);
        int r1[1][3] = {{0, 0, 0}};
        rc = MPI_Group_range_incl(world, 1, r1, &g);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_ARG || cls == MPI_ERR_RANK, "zero stride gave class %d", cls);
    }
    rc = MPI_Group_size(MPI_GROUP_NULL, &cls);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_GROUP);
#ifdef LEANMPI
    /* an invalid rank here is erroneous too; Open MPI does not check it */
    {
        int in = size, res;
        rc = MPI_Group_translate_ranks(world, 1, &in, world, &res);
        MPI_Error_class(rc, &cls);
        CHECK_EQ(cls, MPI_ERR_RANK);
    }
#endif
    CHECK(g == MPI_GROUP_NULL, "a failed constructor must not produce a group");
    mt_pass("groups: error classes RANK/ARG/GROUP under MPI_ERRORS_RETURN");

    CHECK_MPI(MPI_Group_free(&world));
    free(rev);
    free(all);
    free(out);
    MPI_Finalize();
    return 0;
}
