#include "comm/context_id.h"
#include "coll/coll_basic.h"

#define MASK_WORDS 64 /* 2048 pairs of context ids */

static uint32_t free_mask[MASK_WORDS];
static int mask_ready;

static void init_mask(void)
{
    for (int i = 0; i < MASK_WORDS; i++) free_mask[i] = 0xffffffffu;
    free_mask[0] &= ~3u; /* pairs 0 (world) and 1 (self) */
    mask_ready = 1;
}

static void band(const void *in, void *inout, size_t n, void *arg)
{
    (void)arg;
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (size_t i = 0; i < n; i++) b[i] &= a[i];
}

int lm_context_id_allocate(lm_comm *parent, uint16_t *id)
{
    if (!mask_ready) init_mask();
    uint32_t m[MASK_WORDS];
    for (int i = 0; i < MASK_WORDS; i++) m[i] = free_mask[i];
    int rc = lm_coll_allreduce(m, MASK_WORDS, sizeof(uint32_t), band, NULL, parent);
    if (rc) return rc;
    for (int i = 0; i < MASK_WORDS; i++) {
        if (!m[i]) continue;
        int bit = __builtin_ctz(m[i]);
        free_mask[i] &= ~(1u << bit);
        *id = (uint16_t)(2 * (i * 32 + bit));
        return MPI_SUCCESS;
    }
    return MPI_ERR_INTERN; /* every id in use: too many live communicators */
}

void lm_context_id_release(uint16_t id)
{
    int pair = id / 2;
    if (pair < 2) return;
    free_mask[pair / 32] |= 1u << (pair % 32);
}
