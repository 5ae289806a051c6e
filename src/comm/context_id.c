#include "comm/context_id.h"
#include "coll/coll_basic.h"
#include "pt2pt/pt2pt.h"

#define MASK_WORDS LM_CONTEXT_MASK_WORDS /* 2048 pairs of context ids */

static uint32_t free_mask[MASK_WORDS];
static int mask_ready;

static void init_mask(void)
{
    for (int i = 0; i < MASK_WORDS; i++) free_mask[i] = 0xffffffffu;
    free_mask[0] &= ~7u; /* pairs 0 (world), 1 (self), 2 (group agreement) */
    mask_ready = 1;
}

static void band(const void *in, void *inout, size_t n, void *arg)
{
    (void)arg;
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (size_t i = 0; i < n; i++) b[i] &= a[i];
}

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

int lm_context_id_allocate(lm_comm *parent, uint16_t *id)
{
    if (!mask_ready) init_mask();
    uint32_t m[MASK_WORDS];
    for (int i = 0; i < MASK_WORDS; i++) m[i] = free_mask[i];
    int rc = lm_coll_allreduce(m, MASK_WORDS, sizeof(uint32_t), band, NULL, parent);
    return rc ? rc : take_lowest(m, id);
}

/* Point-to-point on the parent's collective context, addressed by parent
 * rank: source ranks then mean the same thing to every caller, whichever
 * subgroup it is agreeing in. */
static int xfer(uint32_t *m, int to_send, int group_peer, const lm_group *g, int tag, lm_comm *parent)
{
    int peer = lm_group_rank_of(parent->group, lm_group_world_rank(g, group_peer));
    lm_request *r;
    int rc = to_send ? lm_isend_bytes(m, sizeof(uint32_t) * MASK_WORDS, peer, tag, parent, parent->context_id + 1, &r)
                     : lm_irecv_bytes(m, sizeof(uint32_t) * MASK_WORDS, peer, tag, parent, parent->context_id + 1, &r);
    return rc ? rc : lm_wait_release(r, MPI_STATUS_IGNORE);
}

int lm_context_id_allocate_group(lm_comm *parent, const lm_group *g, int tag, uint16_t *id)
{
    if (!mask_ready) init_mask();
    /* above every internal collective tag; the user's tag keeps concurrent
     * agreements over overlapping groups apart */
    int t = (1 << 30) | tag;
    uint32_t m[MASK_WORDS], in[MASK_WORDS];
    for (int i = 0; i < MASK_WORDS; i++) m[i] = free_mask[i];
    int n = g->size, me = g->my_rank, rc = MPI_SUCCESS, mask;
    /* binomial reduce to group rank 0 ... */
    for (mask = 1; mask < n && !rc; mask <<= 1) {
        if (me & mask) {
            rc = xfer(m, 1, me - mask, g, t, parent);
            break;
        }
        if (me + mask < n) {
            rc = xfer(in, 0, me + mask, g, t, parent);
            band(in, m, MASK_WORDS, NULL);
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
    return rc ? rc : take_lowest(m, id);
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

void lm_context_id_mask_and(const void *in, void *inout, size_t count, void *arg)
{
    band(in, inout, count, arg);
}

int lm_context_id_take(const uint32_t *m, uint16_t *id)
{
    if (!mask_ready) init_mask();
    return take_lowest(m, id);
}
