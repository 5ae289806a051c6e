/* The owner's side of GMAs from processes on other hosts: one call of the
 * one-sided engine each (acp_internal.h), carried out when this process
 * enters the library (any ACP or MPI call that makes progress: a
 * completion, acp_inquire, acp_sync). The owner checks what the issuer
 * checked against its cached copy of the table once more against the
 * live table: the entry must still hold the registration the issuer saw
 * (its generation) and the range must lie inside it.
 *
 * The owner also remembers which processes of other hosts copied its
 * table since it last changed a registration, and tells them to drop their
 * copies when one goes (as the ACP library's invalidation requests do):
 * their next GMA to it then works on a fresh copy and fails at once on an
 * address that is gone. A GMA already under way meets the owner's check. */
#include "acp/acp_internal.h"
#include "util/lm_mem.h"
#include <string.h>

static int *fetchers, nfetchers, cap_fetchers;

static void remember_fetcher(int rank)
{
    for (int i = 0; i < nfetchers; i++)
        if (fetchers[i] == rank) return;
    if (nfetchers == cap_fetchers) {
        int cap = cap_fetchers ? 2 * cap_fetchers : 8;
        int *grown = lm_realloc(LM_MEM_RMA, fetchers, (size_t)cap * sizeof *grown);
        if (!grown) return; /* the owner's check still guards that process */
        fetchers = grown;
        cap_fetchers = cap;
    }
    fetchers[nfetchers++] = rank;
}

void lm_acp_fetchers_clear(void)
{
    lm_free(LM_MEM_RMA, fetchers);
    fetchers = NULL;
    nfetchers = cap_fetchers = 0;
}

void lm_acp_tell_fetchers(void)
{
    lm_acp_call_arg a = {.what = LM_ACP_FORGET};
    for (int i = 0; i < nfetchers; i++) {
        int r = fetchers[i];
        lm_osc_target t = {.reach = LM_OSC_MSG, .rank = r, .world = lm_comm_world_rank(lm_acp.comm, r)};
        (void)lm_osc_call(lm_acp.ch, &t, LM_ACP_CALL, &a, sizeof a, NULL, 0, NULL, 0, NULL, NULL);
    }
    nfetchers = 0;
}

static int carry_out(void *owner, int origin, const void *arg, size_t arg_len, const void *data, size_t data_len,
                     void *out, size_t out_len)
{
    (void)owner;
    lm_acp_call_arg a;
    if (arg_len != sizeof a || !lm_acp.up) return MPI_ERR_RMA_RANGE;
    memcpy(&a, arg, sizeof a);
    lm_acp_slot *s = lm_acp.mine;
    if (a.what == LM_ACP_FORGET) {
        lm_acp_cache_forget(origin);
        return MPI_SUCCESS;
    }
    if (a.what == LM_ACP_TABLE) {
        remember_fetcher(origin);
        lm_acp_table_reply *r = out;
        if (out_len != sizeof *r) return MPI_ERR_INTERN;
        r->seq = __atomic_load_n(&s->ctl.seq, __ATOMIC_ACQUIRE);
        r->used = s->ctl.used;
        memcpy(r->table, s->table, r->used * sizeof(lm_acp_entry));
        return MPI_SUCCESS;
    }
    const lm_acp_entry *e = a.entry < s->ctl.used ? &s->table[a.entry] : NULL;
    if (!e || !e->size || (a.entry && e->gen != a.gen) || a.off > e->size || a.len > e->size - a.off)
        return MPI_ERR_RMA_RANGE;
    char *at = (char *)(uintptr_t)(e->base + a.off);
    switch (a.what) {
    case LM_ACP_PUT:
        if (data_len != a.len) return MPI_ERR_INTERN;
        memcpy(at, data, a.len);
        return MPI_SUCCESS;
    case LM_ACP_GET:
        if (out_len != a.len) return MPI_ERR_INTERN;
        memcpy(out, at, a.len);
        return MPI_SUCCESS;
    case LM_ACP_ATOMIC: {
        if ((a.width != 4 && a.width != 8) || out_len != a.width || (e->base + a.off) % a.width)
            return MPI_ERR_RMA_RANGE;
        uint64_t old = lm_acp_atomic_here(at, (int)a.width, (int)a.op, a.value, a.compare, a.entry ? &s->ctl : NULL);
        if (a.width == 4) {
            uint32_t v = (uint32_t)old;
            memcpy(out, &v, 4);
        } else {
            memcpy(out, &old, 8);
        }
        return MPI_SUCCESS;
    }
    }
    return MPI_ERR_INTERN;
}

void lm_acp_serve_init(void) { lm_osc_register_call(LM_ACP_CALL, carry_out); }
