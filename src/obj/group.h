/* Groups in compact form (R4): an identity range of world ranks, a strided
 * range, or an explicit list only when irregular. MPI_COMM_WORLD's group is O(1). */
#ifndef LM_GROUP_H
#define LM_GROUP_H
#include "mpi.h"
#include "util/lm_handle.h"

enum lm_group_form { LM_GROUP_RANGE, LM_GROUP_LIST };

typedef struct lm_group {
    lm_object obj;
    int form; /* enum lm_group_form */
    int size;
    int first, stride;     /* RANGE: member i is world rank first + i*stride */
    int *ranks;            /* LIST: member i is ranks[i] */
    struct lm_group *base; /* LIST: the group that owns ranks (a shared copy), or NULL */
    int my_rank;           /* this process's rank in the group, or MPI_UNDEFINED */
} lm_group;

lm_group *lm_group_get(MPI_Group g);
static inline int lm_group_size(const lm_group *g) { return g->size; }
static inline int lm_group_world_rank(const lm_group *g, int r)
{
    return g->form == LM_GROUP_RANGE ? g->first + r * g->stride : g->ranks[r];
}
/* Does g hold a world rank at or above n (a simulated one)? */
int lm_group_reaches(const lm_group *g, int n);
/* Group rank of a world rank, or MPI_UNDEFINED. */
int lm_group_rank_of(const lm_group *g, int world_rank);
lm_group *lm_group_new_range(int first, int stride, int size);
lm_group *lm_group_new_list(const int *world_ranks, int size);
/* A group object of its own with g's members, for a handle the program
 * receives (MPI_Comm_group and the like): freeing that handle then
 * invalidates it alone, so a later use or a second free is reported instead
 * of releasing the communicator's own group. A list is shared, not copied. */
lm_group *lm_group_share(lm_group *g);
void lm_group_retain(lm_group *g);
void lm_group_release(lm_group *g);

#endif
