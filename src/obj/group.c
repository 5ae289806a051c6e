/* Compact groups (R4). A LIST group is made a RANGE whenever its members
 * form an arithmetic progression, which covers world, self and most splits. */
#include "obj/group.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "util/lm_state.h"
#include "api/impl_gen.h"

static lm_group empty_group = {.obj = {.handle = LM_HANDLE(LM_KIND_GROUP, LM_TIER_BUILTIN, 0), .refcount = 1},
                               .form = LM_GROUP_RANGE,
                               .size = 0,
                               .first = 0,
                               .stride = 1,
                               .my_rank = MPI_UNDEFINED};

lm_group *lm_group_get(MPI_Group g)
{
    if (g == MPI_GROUP_EMPTY) return &empty_group;
    return lm_object_lookup(g, LM_KIND_GROUP);
}

int lm_group_rank_of(const lm_group *g, int w)
{
    if (g->form == LM_GROUP_RANGE) {
        if (g->size == 0) return MPI_UNDEFINED;
        long d = (long)w - g->first;
        if (g->stride == 0) return d == 0 ? 0 : MPI_UNDEFINED;
        if (d % g->stride) return MPI_UNDEFINED;
        long r = d / g->stride;
        return (r >= 0 && r < g->size) ? (int)r : MPI_UNDEFINED;
    }
    for (int i = 0; i < g->size; i++)
        if (g->ranks[i] == w) return i;
    return MPI_UNDEFINED;
}

lm_group *lm_group_new_range(int first, int stride, int size)
{
    lm_group *g = lm_object_alloc(LM_KIND_GROUP, sizeof *g);
    if (!g) return NULL;
    g->form = LM_GROUP_RANGE;
    g->first = first;
    g->stride = stride;
    g->size = size;
    g->my_rank = lm_group_rank_of(g, lm_world_rank());
    return g;
}

lm_group *lm_group_new_list(const int *w, int size)
{
    int stride = size > 1 ? w[1] - w[0] : 1;
    int regular = stride != 0 || size <= 1;
    for (int i = 2; i < size && regular; i++) regular = w[i] - w[i - 1] == stride;
    if (regular) return lm_group_new_range(size ? w[0] : 0, stride ? stride : 1, size);
    lm_group *g = lm_object_alloc(LM_KIND_GROUP, sizeof *g);
    if (!g) return NULL;
    g->ranks = lm_malloc(LM_MEM_COMM, (size_t)size * sizeof(int));
    if (!g->ranks) {
        lm_object_free(g);
        return NULL;
    }
    for (int i = 0; i < size; i++) g->ranks[i] = w[i];
    g->form = LM_GROUP_LIST;
    g->size = size;
    g->my_rank = lm_group_rank_of(g, lm_world_rank());
    return g;
}

lm_group *lm_group_share(lm_group *g)
{
    if (g == &empty_group) return g;
    if (g->form == LM_GROUP_RANGE) return lm_group_new_range(g->first, g->stride, g->size);
    lm_group *s = lm_object_alloc(LM_KIND_GROUP, sizeof *s);
    if (!s) return NULL;
    s->form = LM_GROUP_LIST;
    s->size = g->size;
    s->ranks = g->ranks;
    s->my_rank = g->my_rank;
    s->base = g->base ? g->base : g;
    lm_group_retain(s->base);
    return s;
}

void lm_group_retain(lm_group *g)
{
    if (g != &empty_group) g->obj.refcount++;
}

void lm_group_release(lm_group *g)
{
    if (!g || g == &empty_group) return;
    if (--g->obj.refcount > 0) return;
    if (g->base) lm_group_release(g->base);
    else lm_free(LM_MEM_COMM, g->ranks);
    lm_object_free(g);
}

static lm_group *get(MPI_Group h, const char *fname, int *rc)
{
    lm_group *g = lm_group_get(h);
    *rc = g ? MPI_SUCCESS : lm_err_noobj(MPI_ERR_GROUP, fname, "invalid group");
    return g;
}

int impl_MPI_Group_size(MPI_Group group, int *size)
{
    int rc;
    lm_group *g = get(group, "MPI_Group_size", &rc);
    if (!g) return rc;
    *size = g->size;
    return MPI_SUCCESS;
}

int impl_MPI_Group_rank(MPI_Group group, int *rank)
{
    int rc;
    lm_group *g = get(group, "MPI_Group_rank", &rc);
    if (!g) return rc;
    *rank = g->my_rank;
    return MPI_SUCCESS;
}

int impl_MPI_Group_free(MPI_Group *group)
{
    int rc;
    lm_group *g = get(*group, "MPI_Group_free", &rc);
    if (!g) return rc;
    lm_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

int impl_MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    int rc;
    lm_group *a = get(group1, "MPI_Group_translate_ranks", &rc);
    if (!a) return rc;
    lm_group *b = get(group2, "MPI_Group_translate_ranks", &rc);
    if (!b) return rc;
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= a->size)
            return lm_err_noobj(MPI_ERR_RANK, "MPI_Group_translate_ranks", "rank %d not in group1", ranks1[i]);
        ranks2[i] = lm_group_rank_of(b, lm_group_world_rank(a, ranks1[i]));
    }
    return MPI_SUCCESS;
}

int impl_MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    int rc;
    lm_group *a = get(group1, "MPI_Group_compare", &rc);
    if (!a) return rc;
    lm_group *b = get(group2, "MPI_Group_compare", &rc);
    if (!b) return rc;
    if (a->size != b->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int same_order = 1, all_in = 1;
    for (int i = 0; i < a->size; i++) {
        int w = lm_group_world_rank(a, i);
        if (lm_group_world_rank(b, i) != w) same_order = 0;
        if (lm_group_rank_of(b, w) == MPI_UNDEFINED) all_in = 0;
    }
    *result = same_order ? MPI_IDENT : all_in ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

int lm_group_reaches(const lm_group *g, int n)
{
    if (g->form == LM_GROUP_RANGE) return g->size > 0 && (g->first >= n || g->first + (g->size - 1) * g->stride >= n);
    for (int i = 0; i < g->size; i++)
        if (g->ranks[i] >= n) return 1;
    return 0;
}
