/* A handful of recently built schedules, looked up by their spec. */
#include "coll/sched_cache.h"
#include <string.h>

#define CACHED 8

/* Everything a generator and the selection read (the array forms are
 * never kept). */
typedef struct key {
    int kind, size, rank, root, in_place, commutative, shm, space, ppn;
    size_t bytes, elem, scratch_before;
} key;

typedef struct entry {
    key k;
    int used;
    uint32_t nsteps, nrounds, widest;
    size_t scratch_bytes;
    lm_step steps[LM_SCHED_INLINE_STEPS];
    uint32_t round_end[LM_SCHED_INLINE_ROUNDS];
} entry;

static entry cache[CACHED];
static unsigned last_hit, next_victim;

static int make_key(const lm_coll_spec *a, size_t scratch_before, key *k)
{
    if (a->counts || a->displs || a->scounts || a->sdispls) return 0;
    k->kind = a->kind;
    k->size = a->size;
    k->rank = a->rank;
    k->root = a->root;
    k->in_place = a->in_place;
    k->commutative = a->commutative;
    k->shm = a->shm;
    k->space = a->space;
    k->ppn = a->ppn;
    k->bytes = a->bytes;
    k->elem = a->elem;
    k->scratch_before = scratch_before;
    return 1;
}

static int same_key(const key *x, const key *y)
{
    return x->kind == y->kind && x->rank == y->rank && x->size == y->size && x->root == y->root &&
           x->bytes == y->bytes && x->elem == y->elem && x->in_place == y->in_place &&
           x->commutative == y->commutative && x->shm == y->shm && x->space == y->space && x->ppn == y->ppn &&
           x->scratch_before == y->scratch_before;
}

int lm_sched_cache_get(const lm_coll_spec *a, lm_sched *s)
{
    key k;
    if (!make_key(a, s->scratch_bytes, &k)) return 0;
    for (unsigned j = 0, i = last_hit; j < CACHED; j++, i = (i + 1) % CACHED) {
        entry *e = &cache[i];
        if (!e->used || !same_key(&e->k, &k)) continue;
        last_hit = i;
        for (uint32_t t = 0; t < e->nsteps; t++) s->steps[t] = e->steps[t];
        for (uint32_t r = 0; r < e->nrounds; r++) s->round_end[r] = e->round_end[r];
        s->nsteps = e->nsteps;
        s->nrounds = e->nrounds;
        s->widest = e->widest;
        s->scratch_bytes = e->scratch_bytes;
        return 1;
    }
    return 0;
}

void lm_sched_cache_put(const lm_coll_spec *a, size_t scratch_before, const lm_sched *s)
{
    key k;
    if (s->failed || s->nsteps > LM_SCHED_INLINE_STEPS || s->nrounds > LM_SCHED_INLINE_ROUNDS ||
        !make_key(a, scratch_before, &k))
        return;
    entry *e = &cache[next_victim];
    last_hit = next_victim;
    next_victim = (next_victim + 1) % CACHED;
    e->k = k;
    e->used = 1;
    e->nsteps = (uint32_t)s->nsteps;
    e->nrounds = s->nrounds;
    e->widest = s->widest;
    e->scratch_bytes = s->scratch_bytes;
    memcpy(e->steps, s->steps, s->nsteps * sizeof *s->steps);
    memcpy(e->round_end, s->round_end, s->nrounds * sizeof *s->round_end);
}
