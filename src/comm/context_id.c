/* Context-id agreements (see context_id.h).
 *
 * An agreement is a small state machine of point-to-point messages on the
 * parent's collective context: a binomial tree up to the first member and
 * back down, once for the free masks (combined by AND) and once for the
 * vote on the candidate, repeated until a vote passes. Blocking agreements
 * drive it in their own loop; nonblocking ones (MPI_Comm_idup) are driven
 * by a progress hook, so that a process waiting anywhere in MPI moves its
 * pending agreements forward. No agreement ever waits for another one:
 * the candidate is reserved at once where it is still free, and a vote
 * that fails anywhere gives it back everywhere and starts over. */
#include "comm/context_id.h"
#include "comm/intercomm.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "pt2pt/pt2pt.h"
#include <string.h>

#define MASK_WORDS LM_CONTEXT_MASK_WORDS /* 2048 pairs of context ids */
/* The mask phase carries one more word: the largest error class a member
 * brought to the agreement (0 when none did), so that every member learns
 * that one of them cannot go on. */
#define ERR_WORD MASK_WORDS
#define MASK_MSG_WORDS (MASK_WORDS + 1)
/* Tags: whole-parent agreements take the parent's next collective number,
 * as a collective does (below bit 30); group agreements set bit 30 above
 * the user's tag (coll/sched_exec.c keeps schedules below it). The leaders
 * of an agreement across an intercommunicator's two groups swap on its
 * collective context with bits 30 and 29 set above the intercommunicator's
 * count of such agreements (comm/intercomm.c's own leader traffic there
 * stays below bit 29). */
#define SEQ_TAG_MASK 0x3fffffff
#define GROUP_TAG_BIT (1 << 30)
#define INTER_TAG_BITS (3 << 29)
#define INTER_SEQ_MASK ((1 << 29) - 1)

static uint32_t free_mask[MASK_WORDS];
static int mask_ready;

static void init_mask(void)
{
    for (int i = 0; i < MASK_WORDS; i++) free_mask[i] = 0xffffffffu;
    free_mask[0] &= ~15u; /* pairs 0 (world), 1 (self), 2 (group agreement), 3 (bridges) */
    mask_ready = 1;
}

void lm_context_id_free_mask(uint32_t *m)
{
    if (!mask_ready) init_mask();
    for (int i = 0; i < MASK_WORDS; i++) m[i] = free_mask[i];
}

static void band(const void *in, void *inout, size_t n, void *arg)
{
    (void)arg;
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (size_t i = 0; i < n; i++) b[i] &= a[i];
}

void lm_context_id_mask_and(const void *in, void *inout, size_t count, void *arg) { band(in, inout, count, arg); }

int lm_context_id_candidate(const uint32_t *m)
{
    for (int i = 0; i < MASK_WORDS; i++)
        if (m[i]) return 2 * (i * 32 + __builtin_ctz(m[i]));
    return -1;
}

int lm_context_id_reserve(uint16_t id)
{
    if (!mask_ready) init_mask();
    int pair = id / 2;
    uint32_t bit = 1u << (pair % 32);
    if (!(free_mask[pair / 32] & bit)) return 0;
    free_mask[pair / 32] &= ~bit;
    return 1;
}

void lm_context_id_release(uint16_t id)
{
    int pair = id / 2;
    /* the reserved pairs (world, self, group agreement, bridges) and ids
     * outside the mask (LM_CONTEXT_PENDING) are never handed out */
    if (pair < 4 || pair >= MASK_WORDS * 32) return;
    free_mask[pair / 32] |= 1u << (pair % 32);
}

/* ---- the state machine -------------------------------------------------- */

enum { PHASE_MASK, PHASE_VOTE, PHASE_DONE };

/* One message of a phase: to or from a member (as a parent rank); a
 * message from below is combined into what this member has, one from
 * above replaces it. A swap (at the first member of an agreement across
 * two groups, between the way up and the way down) sends what this group
 * has to the other group's first member and combines what comes back, so
 * that both groups go down with the same words. */
typedef struct hop {
    uint8_t send, combine, swap;
    int peer;
} hop;
#define MAX_HOPS 65 /* up and down a binomial tree of at most 2^31 members, and a swap */
#define MAX_IDS 2

struct lm_cid_agreement {
    lm_comm *parent; /* held while the agreement lives */
    int tag;
    int local_err;
    uint8_t phase, nhops, next_hop, nids;
    uint8_t reserved[MAX_IDS];
    hop hops[MAX_HOPS];
    lm_request *msg;  /* the message in flight (a swap's receive), NULL between hops */
    lm_request *sent; /* a swap's send */
    lm_comm *bridge;  /* across two groups: the intercommunicator the swap goes over (held) */
    int bridge_tag;
    int cand[MAX_IDS];
    int rc;
    uint8_t bad; /* rc is the error class a member brought */
    uint16_t ids[MAX_IDS];
    uint32_t m[MASK_MSG_WORDS], in[MASK_MSG_WORDS];
    lm_context_id_done done; /* nonblocking: called once it ends */
    void *arg;
    lm_cid_agreement *next_active;
};

/* The parent rank of member r of g. */
static int parent_rank(const lm_comm *parent, const lm_group *g, int r)
{
    return g == parent->group ? r : lm_group_rank_of(parent->group, lm_group_world_rank(g, r));
}

/* Binomial reduce to member 0, the swap with the other group's member 0
 * there when there is one, then the same tree back down. */
static void build_hops(lm_cid_agreement *a, const lm_group *g)
{
    int n = g->size, me = g->my_rank, k = 0, mask;
    for (mask = 1; mask < n; mask <<= 1) {
        if (me & mask) {
            a->hops[k++] = (hop){1, 0, 0, parent_rank(a->parent, g, me - mask)};
            break;
        }
        if (me + mask < n) a->hops[k++] = (hop){0, 1, 0, parent_rank(a->parent, g, me + mask)};
    }
    if (me == 0 && a->bridge) a->hops[k++] = (hop){1, 1, 1, 0};
    for (mask = 1; mask < n; mask <<= 1)
        if (me & mask) {
            a->hops[k++] = (hop){0, 0, 0, parent_rank(a->parent, g, me - mask)};
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (me + mask < n) a->hops[k++] = (hop){1, 0, 0, parent_rank(a->parent, g, me + mask)};
    a->nhops = (uint8_t)k;
}

static void begin_mask(lm_cid_agreement *a)
{
    lm_context_id_free_mask(a->m);
    a->m[ERR_WORD] = (uint32_t)a->local_err;
    a->phase = PHASE_MASK;
    a->next_hop = 0;
}

/* Gives back the candidates this member reserved. */
static void unreserve(lm_cid_agreement *a)
{
    for (int k = 0; k < a->nids; k++) {
        if (a->reserved[k]) lm_context_id_release((uint16_t)a->cand[k]);
        a->reserved[k] = 0;
    }
}

static void finish(lm_cid_agreement *a, int rc)
{
    if (rc != MPI_SUCCESS) unreserve(a);
    a->rc = rc;
    a->phase = PHASE_DONE;
}

/* Every member ends a phase with the same words in m. */
static void end_phase(lm_cid_agreement *a)
{
    if (a->phase == PHASE_MASK) {
        if (a->m[ERR_WORD]) {
            a->bad = 1;
            return finish(a, (int)a->m[ERR_WORD]);
        }
        uint32_t vote = 1;
        for (int k = 0; k < a->nids; k++) {
            int c = a->cand[k] = lm_context_id_candidate(a->m);
            if (c < 0) return finish(a, MPI_ERR_INTERN); /* every id in use somewhere: too many communicators */
            a->m[c / 64] &= ~(1u << (c / 2 % 32));       /* the next candidate is another pair */
            a->reserved[k] = (uint8_t)lm_context_id_reserve((uint16_t)c);
            vote &= a->reserved[k];
        }
        a->m[0] = vote;
        a->phase = PHASE_VOTE;
        a->next_hop = 0;
        return;
    }
    if (a->m[0]) {
        for (int k = 0; k < a->nids; k++) {
            a->ids[k] = (uint16_t)a->cand[k];
            a->reserved[k] = 0; /* taken */
        }
        return finish(a, MPI_SUCCESS);
    }
    /* taken meanwhile by another agreement on some member: give them back
     * here and try again with fresh masks */
    unreserve(a);
    begin_mask(a);
}

/* The error of a finished message, which is released. */
static int take(lm_request **m)
{
    int err = (*m)->error;
    lm_request_release(*m);
    *m = NULL;
    return err;
}

/* Move a forward as far as it goes without waiting; 1 once it has ended. */
static int advance(lm_cid_agreement *a)
{
    size_t words = a->phase == PHASE_MASK ? MASK_MSG_WORDS : 1;
    while (a->phase != PHASE_DONE) {
        if (a->msg) {
            if (!a->msg->complete || (a->sent && !a->sent->complete)) return 0;
            int err = take(&a->msg);
            if (a->sent) {
                int e = take(&a->sent);
                if (!err) err = e;
            }
            if (err != MPI_SUCCESS) {
                finish(a, err);
                break;
            }
            const hop *h = &a->hops[a->next_hop++];
            if (h->combine) {
                band(a->in, a->m, words == 1 ? 1 : MASK_WORDS, NULL);
                if (words > 1 && a->in[ERR_WORD] > a->m[ERR_WORD]) a->m[ERR_WORD] = a->in[ERR_WORD];
            }
        }
        if (a->next_hop == a->nhops) {
            end_phase(a);
            words = a->phase == PHASE_MASK ? MASK_MSG_WORDS : 1;
            continue;
        }
        const hop *h = &a->hops[a->next_hop];
        size_t len = words * sizeof(uint32_t);
        int rc;
        if (h->swap) {
            lm_comm *b = a->bridge;
            int ctx = b->context_id + 1;
            rc = lm_irecv_bytes(a->in, len, h->peer, a->bridge_tag, b, ctx, &a->msg);
            if (!rc) rc = lm_isend_bytes(a->m, len, h->peer, a->bridge_tag, b, ctx, &a->sent);
        } else {
            int ctx = a->parent->context_id + 1;
            rc = h->send ? lm_isend_bytes(a->m, len, h->peer, a->tag, a->parent, ctx, &a->msg)
                         : lm_irecv_bytes(h->combine ? a->in : a->m, len, h->peer, a->tag, a->parent, ctx, &a->msg);
        }
        if (rc != MPI_SUCCESS) {
            /* a receive posted alone is left to match (or not) on a
             * context that the failure ends for this agreement */
            if (a->msg) lm_request_release(a->msg);
            if (a->sent) lm_request_release(a->sent);
            a->msg = a->sent = NULL;
            finish(a, rc);
        }
    }
    return 1;
}

/* An agreement over g (members of parent) on nids ids; across the two
 * groups of intercommunicator bridge when it is not NULL (g is then its
 * local group, parent its hidden local communicator). */
static lm_cid_agreement *agreement_new(lm_comm *parent, const lm_group *g, int tag, int local_err, int nids,
                                       lm_comm *bridge)
{
    lm_cid_agreement *a = lm_calloc(LM_MEM_COMM, 1, sizeof *a);
    if (!a) return NULL;
    a->parent = parent;
    lm_comm_hold(parent);
    if (bridge) {
        a->bridge = bridge;
        lm_comm_hold(bridge);
        a->bridge_tag = INTER_TAG_BITS | (int)(bridge->inter_agree_seq++ & INTER_SEQ_MASK);
    }
    a->tag = tag;
    a->local_err = local_err;
    a->nids = (uint8_t)nids;
    build_hops(a, g);
    begin_mask(a);
    return a;
}

static void agreement_free(lm_cid_agreement *a)
{
    lm_comm_drop(a->parent);
    if (a->bridge) lm_comm_drop(a->bridge);
    lm_free(LM_MEM_COMM, a);
}

static int whole_parent_tag(lm_comm *parent) { return (int)(parent->coll_seq++ & SEQ_TAG_MASK); }

/* Blocking: drive a to its end here (the progress calls in between move
 * the nonblocking agreements of this process too). */
static int run(lm_cid_agreement *a, uint16_t *ids, int *bad)
{
    unsigned idle = 0;
    while (!advance(a)) lm_progress_wait(&idle);
    int rc = a->rc;
    *bad = 0;
    if (rc == MPI_SUCCESS) memcpy(ids, a->ids, a->nids * sizeof *ids);
    else if (a->bad) *bad = rc, rc = MPI_SUCCESS;
    agreement_free(a);
    return rc;
}

int lm_context_id_allocate_checked(lm_comm *parent, int local_err, uint16_t *id, int *bad)
{
    int tag = whole_parent_tag(parent);
    lm_cid_agreement *a = agreement_new(parent, parent->group, tag, local_err, 1, NULL);
    return a ? run(a, id, bad) : MPI_ERR_NO_MEM;
}

int lm_context_id_allocate(lm_comm *parent, uint16_t *id)
{
    int bad, rc = lm_context_id_allocate_checked(parent, MPI_SUCCESS, id, &bad);
    return rc ? rc : bad; /* a member that abstained (lm_context_id_abstain) */
}

int lm_context_id_allocate_group_checked(lm_comm *parent, const lm_group *g, int tag, int local_err, uint16_t *id,
                                         int *bad)
{
    lm_cid_agreement *a = agreement_new(parent, g, GROUP_TAG_BIT | tag, local_err, 1, NULL);
    return a ? run(a, id, bad) : MPI_ERR_NO_MEM;
}

int lm_context_id_allocate_group(lm_comm *parent, const lm_group *g, int tag, uint16_t *id)
{
    int bad, rc = lm_context_id_allocate_group_checked(parent, g, tag, MPI_SUCCESS, id, &bad);
    return rc ? rc : bad;
}

int lm_context_id_abstain(lm_comm *parent, int err)
{
    if (parent && parent->is_inter) return lm_intercomm_abstain(parent, err);
    if (parent) {
        uint16_t id;
        int bad;
        lm_context_id_allocate_checked(parent, err, &id, &bad); /* ends with bad set: no id */
    }
    return err;
}

int lm_context_id_peer_invalid(MPI_Comm comm, int bad, const char *fname)
{
    return lm_err_comm(comm, bad, fname, "another process of the communicator passed invalid arguments");
}

/* ---- nonblocking -------------------------------------------------------- */

static lm_cid_agreement *active;
static int progress_slot = -1; /* on while a nonblocking agreement is active */

static int progress_active(void)
{
    static int busy; /* posting a message may progress, which comes back here */
    if (busy) return 0;
    busy = 1;
    int n = 0;
    for (lm_cid_agreement **p = &active; *p;) {
        lm_cid_agreement *a = *p;
        if (!advance(a)) {
            p = &a->next_active;
            continue;
        }
        *p = a->next_active;
        n++;
        a->done(a->arg, a->rc, a->ids);
        agreement_free(a);
    }
    if (!active) lm_progress_hook_set_active(progress_slot, 0);
    busy = 0;
    return n;
}

/* An agreement over parent, or across the two groups of intercommunicator
 * parent (two ids, over its hidden local communicator). */
static lm_cid_agreement *whole_new(lm_comm *parent, int local_err)
{
    if (!parent->is_inter) return agreement_new(parent, parent->group, whole_parent_tag(parent), local_err, 1, NULL);
    lm_comm *L = parent->local_comm;
    return agreement_new(L, L->group, whole_parent_tag(L), local_err, 2, parent);
}

int lm_context_id_allocate_inter(lm_comm *p, uint16_t ids[2])
{
    lm_cid_agreement *a = whole_new(p, MPI_SUCCESS);
    if (!a) return MPI_ERR_NO_MEM;
    int bad, rc = run(a, ids, &bad);
    return rc ? rc : bad; /* a member of either group that abstained */
}

int lm_context_id_abstain_dup(lm_comm *parent, int err)
{
    lm_cid_agreement *a = parent ? whole_new(parent, err) : NULL;
    if (a) {
        uint16_t ids[MAX_IDS];
        int bad;
        run(a, ids, &bad); /* ends with bad set: no ids */
    }
    return err;
}

int lm_context_id_iallocate(lm_comm *parent, lm_context_id_done done, void *arg)
{
    lm_cid_agreement *a = whole_new(parent, MPI_SUCCESS);
    if (!a) return MPI_ERR_NO_MEM;
    a->done = done;
    a->arg = arg;
    a->next_active = active;
    active = a;
    lm_progress_hook_set_active(progress_slot, 1);
    return MPI_SUCCESS;
}

/* ---- lifetime ------------------------------------------------------------ */

/* A destroyed communicator's id is free for reuse only now, after the last
 * message that could match it (the predefined ids are never released:
 * lm_context_id_release ignores them). */
static void comm_destroyed(lm_comm *c)
{
    lm_context_id_release(c->context_id);
    if (c->local_comm) lm_intercomm_release(c);
}

int lm_comm_layer_init(void)
{
    progress_slot = lm_progress_hook_register(progress_active);
    if (progress_slot < 0) return MPI_ERR_INTERN;
    return lm_comm_on_destroy(comm_destroyed);
}
