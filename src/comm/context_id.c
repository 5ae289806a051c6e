#include "comm/context_id.h"
#include "comm/intercomm.h"
#include "coll/coll_basic.h"
#include "pt2pt/pt2pt.h"

#define MASK_WORDS LM_CONTEXT_MASK_WORDS /* 2048 pairs of context ids */
/* An agreement exchanges the free mask and one more word: 1 where the member
 * offered its free ids, 0 where it offered none (see struct agreement). */
#define OFFER_WORD MASK_WORDS
#define AGREE_WORDS (MASK_WORDS + 1)

static uint32_t free_mask[MASK_WORDS];
static int mask_ready;

static void init_mask(void)
{
    for (int i = 0; i < MASK_WORDS; i++) free_mask[i] = 0xffffffffu;
    free_mask[0] &= ~7u; /* pairs 0 (world), 1 (self), 2 (group agreement) */
    mask_ready = 1;
}

/* At MPI_THREAD_MULTIPLE, threads of one process may agree on ids for
 * different communicators at once (their exchanges wait with the critical
 * section handed over): two agreements offering the same free ids could both
 * take the same one.  So only one agreement at a time offers this process's
 * free ids, the one with the lowest key among those in flight here; the
 * others offer none, and an agreement that some member offered nothing to
 * is repeated by all of its members (they see the same result).  The key
 * (parent's context id, then the tag) is the same on every member, so the
 * agreement with the lowest key in the job is offered everything on its
 * next round: agreements finish one after another instead of spinning.
 * With one thread there is only ever one agreement: one round, as before. */
struct agreement {
    uint64_t key;
    struct agreement *next;
};
static struct agreement *in_flight;
static struct agreement *offering;

static void agreement_begin(struct agreement *a, const lm_comm *parent, int group_tag)
{
    if (!mask_ready) init_mask();
    a->key = ((uint64_t)parent->context_id << 32) | (group_tag < 0 ? 0u : (uint32_t)group_tag + 1u);
    a->next = in_flight;
    in_flight = a;
}

static void agreement_end(struct agreement *a)
{
    struct agreement **link = &in_flight;
    while (*link != a) link = &(*link)->next;
    *link = a->next;
    if (offering == a) offering = NULL;
}

/* This process's contribution to a round of agreement a. */
static void offer(struct agreement *a, uint32_t *m)
{
    int lowest = 1;
    for (const struct agreement *o = in_flight; o; o = o->next)
        if (o != a && o->key < a->key) lowest = 0;
    if (!offering && lowest) {
        offering = a;
        for (int i = 0; i < MASK_WORDS; i++) m[i] = free_mask[i];
        m[OFFER_WORD] = 1;
    } else {
        for (int i = 0; i < AGREE_WORDS; i++) m[i] = 0;
    }
}

static void band(const void *in, void *inout, size_t n, void *arg)
{
    (void)arg;
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (size_t i = 0; i < n; i++) b[i] &= a[i];
}

/* After a round: 1 with *id set when every member offered (or an error in
 * *rc), 0 when the round must be repeated.  Takes the lowest id free in the
 * agreed mask m. */
/* Takes the lowest id free in the agreed mask m. */
static int take_lowest(const uint32_t *m, uint16_t *id)
{
    for (int i = 0; i < MASK_WORDS; i++) {
        if (!m[i]) continue;
        int bit = __builtin_ctz(m[i]);
        free_mask[i] &= ~(1u << bit);
        *id = (uint16_t)(2 * (i * 32 + bit));
        return MPI_SUCCESS;
    }
    return MPI_ERR_INTERN; /* every id in use: too many live communicators */
}

static int conclude(struct agreement *a, const uint32_t *m, int *rc, uint16_t *id)
{
    if (offering == a) offering = NULL;
    if (*rc) return 1;
    if (!m[OFFER_WORD]) return 0;
    *rc = take_lowest(m, id);
    return 1;
}

int lm_context_id_allocate(lm_comm *parent, uint16_t *id)
{
    struct agreement a;
    agreement_begin(&a, parent, -1);
    uint32_t m[AGREE_WORDS];
    int rc;
    /* between rounds, let the agreement that has the offer go on: with a
     * parent of one process, a round waits for nothing */
    for (unsigned idle = 0;; lm_progress_wait(&idle)) {
        offer(&a, m);
        rc = lm_coll_allreduce(m, AGREE_WORDS, sizeof(uint32_t), band, NULL, parent);
        if (conclude(&a, m, &rc, id)) break;
    }
    agreement_end(&a);
    return rc;
}

/* Point-to-point on the parent's collective context, addressed by parent
 * rank: source ranks then mean the same thing to every caller, whichever
 * subgroup it is agreeing in. */
static int xfer(uint32_t *m, int to_send, int group_peer, const lm_group *g, int tag, lm_comm *parent)
{
    int peer = lm_group_rank_of(parent->group, lm_group_world_rank(g, group_peer));
    lm_request *r;
    int rc = to_send ? lm_isend_bytes(m, sizeof(uint32_t) * AGREE_WORDS, peer, tag, parent, parent->context_id + 1, &r)
                     : lm_irecv_bytes(m, sizeof(uint32_t) * AGREE_WORDS, peer, tag, parent, parent->context_id + 1, &r);
    return rc ? rc : lm_wait_release(r, MPI_STATUS_IGNORE);
}

static int group_round(uint32_t *m, lm_comm *parent, const lm_group *g, int t)
{
    uint32_t in[AGREE_WORDS];
    int n = g->size, me = g->my_rank, rc = MPI_SUCCESS, mask;
    /* binomial reduce to group rank 0 ... */
    for (mask = 1; mask < n && !rc; mask <<= 1) {
        if (me & mask) {
            rc = xfer(m, 1, me - mask, g, t, parent);
            break;
        }
        if (me + mask < n) {
            rc = xfer(in, 0, me + mask, g, t, parent);
            band(in, m, AGREE_WORDS, NULL);
        }
    }
    /* ... and the same tree back down */
    for (mask = 1; mask < n && !rc; mask <<= 1)
        if (me & mask) {
            rc = xfer(m, 0, me - mask, g, t, parent);
            break;
        }
    for (mask >>= 1; mask > 0 && !rc; mask >>= 1)
        if (me + mask < n) rc = xfer(m, 1, me + mask, g, t, parent);
    return rc;
}

int lm_context_id_allocate_group(lm_comm *parent, const lm_group *g, int tag, uint16_t *id)
{
    /* above every internal collective tag; the user's tag keeps concurrent
     * agreements over overlapping groups apart */
    int t = (1 << 30) | tag;
    struct agreement a;
    agreement_begin(&a, parent, tag);
    uint32_t m[AGREE_WORDS];
    int rc;
    for (unsigned idle = 0;; lm_progress_wait(&idle)) {
        offer(&a, m);
        rc = group_round(m, parent, g, t);
        if (conclude(&a, m, &rc, id)) break;
    }
    agreement_end(&a);
    return rc;
}

void lm_context_id_release(uint16_t id)
{
    int pair = id / 2;
    if (pair < 2) return;
    free_mask[pair / 32] |= 1u << (pair % 32);
}

void lm_context_id_free_mask(uint32_t *m)
{
    if (!mask_ready) init_mask();
    for (int i = 0; i < MASK_WORDS; i++) m[i] = free_mask[i];
}

void lm_context_id_mask_and(const void *in, void *inout, size_t count, void *arg) { band(in, inout, count, arg); }

int lm_context_id_take(const uint32_t *m, uint16_t *id)
{
    if (!mask_ready) init_mask();
    return take_lowest(m, id);
}

/* A destroyed communicator's id is free for reuse only now, after the last
 * message that could match it (the predefined ids are never released:
 * lm_context_id_release ignores them). */
static void comm_destroyed(lm_comm *c)
{
    lm_context_id_release(c->context_id);
    if (c->local_comm) lm_intercomm_release(c);
}

int lm_comm_layer_init(void) { return lm_comm_on_destroy(comm_destroyed); }
