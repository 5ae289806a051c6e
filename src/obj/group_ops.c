/* Group constructors: set operations, incl/excl and their range forms.
 * Results are built as world-rank lists and handed to lm_group_new_list,
 * which turns every arithmetic progression back into a range (R4); the
 * single-triplet range_incl of a range group is composed directly, so it
 * never needs a list. Empty results are MPI_GROUP_EMPTY. */
#include "obj/group.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <string.h>

static int out_of_memory(const char *fname) { return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory"); }

/* Hand out a new group made from n world ranks (w may be NULL when n is 0). */
static int finish(const int *w, int n, MPI_Group *newgroup, const char *fname)
{
    if (n == 0) {
        *newgroup = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    lm_group *g = lm_group_new_list(w, n);
    if (!g) return out_of_memory(fname);
    *newgroup = g->obj.handle;
    return MPI_SUCCESS;
}

static int *alloc_ranks(int n) { return lm_malloc(LM_MEM_COMM, (size_t)(n > 0 ? n : 1) * sizeof(int)); }

/* Set operations: keep members of a (in a's order) whose presence in b
 * equals want_in_b; union additionally appends b's members missing from a. */
static int set_op(MPI_Group h1, MPI_Group h2, MPI_Group *newgroup, int want_in_b, int append_b, const char *fname)
{
    lm_group *a = lm_group_get(h1), *b = lm_group_get(h2);
    if (!a || !b) return lm_err_noobj(MPI_ERR_GROUP, fname, "invalid group");
    int *w = alloc_ranks(a->size + (append_b ? b->size : 0));
    if (!w) return out_of_memory(fname);
    int n = 0;
    for (int i = 0; i < a->size; i++) {
        int r = lm_group_world_rank(a, i);
        if (append_b || (lm_group_rank_of(b, r) != MPI_UNDEFINED) == want_in_b) w[n++] = r;
    }
    if (append_b)
        for (int i = 0; i < b->size; i++) {
            int r = lm_group_world_rank(b, i);
            if (lm_group_rank_of(a, r) == MPI_UNDEFINED) w[n++] = r;
        }
    int rc = finish(w, n, newgroup, fname);
    lm_free(LM_MEM_COMM, w);
    return rc;
}

int impl_MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, 0, 1, "MPI_Group_union");
}

int impl_MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, 1, 0, "MPI_Group_intersection");
}

int impl_MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, 0, 0, "MPI_Group_difference");
}

/* Marks the n listed ranks of g in seen[] (g->size entries), checking that
 * each is valid and listed once: the standard makes both a requirement. */
static int mark_ranks(const lm_group *g, int n, const int ranks[], unsigned char *seen, const char *fname)
{
    if (n < 0 || n > g->size) return lm_err_noobj(MPI_ERR_ARG, fname, "argument n (%d) out of range", n);
    if (n > 0 && !ranks) return lm_err_noobj(MPI_ERR_ARG, fname, "argument ranks is NULL");
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return lm_err_noobj(MPI_ERR_RANK, fname, "ranks[%d] = %d is not a rank of the group", i, ranks[i]);
        if (seen[ranks[i]]) return lm_err_noobj(MPI_ERR_RANK, fname, "ranks[%d] = %d appears twice", i, ranks[i]);
        seen[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

static int incl_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup, int excl, const char *fname)
{
    lm_group *g = lm_group_get(group);
    if (!g) return lm_err_noobj(MPI_ERR_GROUP, fname, "invalid group");
    unsigned char *seen = lm_malloc(LM_MEM_COMM, (size_t)g->size + 1);
    int *w = alloc_ranks(g->size);
    if (!seen || !w) {
        lm_free(LM_MEM_COMM, seen);
        lm_free(LM_MEM_COMM, w);
        return out_of_memory(fname);
    }
    memset(seen, 0, (size_t)g->size + 1);
    int rc = mark_ranks(g, n, ranks, seen, fname), m = 0;
    if (!rc) {
        if (excl) {
            for (int i = 0; i < g->size; i++)
                if (!seen[i]) w[m++] = lm_group_world_rank(g, i);
        } else {
            for (int i = 0; i < n; i++) w[m++] = lm_group_world_rank(g, ranks[i]);
        }
        rc = finish(w, m, newgroup, fname);
    }
    lm_free(LM_MEM_COMM, seen);
    lm_free(LM_MEM_COMM, w);
    return rc;
}

int impl_MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, newgroup, 0, "MPI_Group_incl");
}

int impl_MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, newgroup, 1, "MPI_Group_excl");
}

/* Number of ranks in a triplet after checking it: ends inside the group,
 * non-zero stride pointing from first towards last (a triplet whose stride
 * points away is rejected, as other implementations do). */
static int triplet_count(const lm_group *g, const int t[3], int i, long *count, const char *fname)
{
    int first = t[0], last = t[1], stride = t[2];
    if (first < 0 || first >= g->size || last < 0 || last >= g->size)
        return lm_err_noobj(MPI_ERR_RANK, fname, "ranges[%d] = {%d, %d, %d} leaves the group", i, first, last, stride);
    if (stride == 0 || (first < last && stride < 0) || (first > last && stride > 0))
        return lm_err_noobj(MPI_ERR_ARG, fname, "ranges[%d] = {%d, %d, %d} has an invalid stride", i, first, last,
                            stride);
    *count = ((long)last - first) / stride + 1;
    return MPI_SUCCESS;
}

static int range_incl_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup, int excl, const char *fname)
{
    lm_group *g = lm_group_get(group);
    if (!g) return lm_err_noobj(MPI_ERR_GROUP, fname, "invalid group");
    if (n < 0) return lm_err_noobj(MPI_ERR_ARG, fname, "argument n (%d) is negative", n);
    if (n > 0 && !ranges) return lm_err_noobj(MPI_ERR_ARG, fname, "argument ranges is NULL");
    long total = 0, count;
    for (int i = 0; i < n; i++) {
        int rc = triplet_count(g, ranges[i], i, &count, fname);
        if (rc) return rc;
        total += count;
        if (total > g->size) return lm_err_noobj(MPI_ERR_RANK, fname, "ranges name more ranks than the group has");
    }
    /* One triplet on a range group is itself a range: no lists needed. */
    if (!excl && n == 1 && g->form == LM_GROUP_RANGE) {
        lm_group *r = lm_group_new_range(lm_group_world_rank(g, ranges[0][0]), g->stride * ranges[0][2], (int)total);
        if (!r) return out_of_memory(fname);
        *newgroup = r->obj.handle;
        return MPI_SUCCESS;
    }
    unsigned char *seen = lm_malloc(LM_MEM_COMM, (size_t)g->size + 1);
    int *w = alloc_ranks(g->size);
    int rc = MPI_SUCCESS, m = 0;
    if (!seen || !w) rc = out_of_memory(fname);
    else memset(seen, 0, (size_t)g->size + 1);
    for (int i = 0; i < n && !rc; i++) {
        int first = ranges[i][0], stride = ranges[i][2];
        triplet_count(g, ranges[i], i, &count, fname);
        for (long k = 0; k < count; k++) {
            int r = (int)(first + k * stride);
            if (seen[r]) {
                rc = lm_err_noobj(MPI_ERR_RANK, fname, "rank %d appears twice in ranges", r);
                break;
            }
            seen[r] = 1;
            if (!excl) w[m++] = lm_group_world_rank(g, r);
        }
    }
    if (!rc) {
        if (excl)
            for (int i = 0; i < g->size; i++)
                if (!seen[i]) w[m++] = lm_group_world_rank(g, i);
        rc = finish(w, m, newgroup, fname);
    }
    lm_free(LM_MEM_COMM, seen);
    lm_free(LM_MEM_COMM, w);
    return rc;
}

int impl_MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl(group, n, ranges, newgroup, 0, "MPI_Group_range_incl");
}

int impl_MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl(group, n, ranges, newgroup, 1, "MPI_Group_range_excl");
}
