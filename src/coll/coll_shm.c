/* Node shared-memory mailboxes for collectives (see coll_shm.h). */
#include "coll/coll_shm.h"
#include "coll/coll_basic.h"
#include "util/lm_cvar.h"
#include "util/lm_mem.h"
#include "transport/transport.h"
#include "transport/transport_env.h"
#include <stdatomic.h>
#include <string.h>

/* Entries per rank, one per call in turn: a writer can be SLOTS calls ahead
 * of its slowest reader. Depth pays where ranks share cores: on 4 ranks of
 * a 2-core machine, 32 entries of 256 bytes against 8 of 1 KiB took an
 * 8-byte bcast from 0.52 to 0.22 us and a reduce from 0.67 to 0.27 us
 * (medians of 7 alternating runs of bench/src/coll.c; on 2 ranks the two
 * were within noise). */
#ifndef LM_COLL_SHM_SLOTS
#define LM_COLL_SHM_SLOTS 32
#endif
#define SLOTS LM_COLL_SHM_SLOTS
/* Mailboxes one process keeps at most (each 10 KiB of its arena),
 * so that collectives never take the whole arena from one-sided users. */
#define MAX_LIVE 48

/* Readers count themselves here, away from the stamp and data the writer
 * writes (no false sharing between the two directions). The count only
 * grows: the writer never writes it, it only compares it with the total
 * it expects (readers of everything it posted in the entry so far), so
 * the line stays with the readers. */
typedef struct mbox_ack {
    _Atomic uint32_t n;
    char pad[60];
} mbox_ack;

/* A 16-byte stamp (data stays 16-byte aligned for any type an op works on),
 * then the data; small posts share the stamp's cache line. */
typedef struct mbox_entry {
    _Atomic uint64_t stamp;
    uint64_t readers; /* of this post, written before the stamp */
    char data[LM_COLL_SHM_DATA];
} mbox_entry;

typedef struct mailbox {
    mbox_ack ack[SLOTS];
    mbox_entry entry[SLOTS];
} mailbox;

_Static_assert(sizeof(mbox_entry) == LM_COLL_SHM_ENTRY, "an entry fills whole cache lines");
_Static_assert(sizeof(mbox_ack) == 64, "an ack counter fills one cache line");

struct lm_coll_shm {
    mailbox *mine;
    int same_space;         /* every member shares this rank's address space */
    uint32_t expect[SLOTS]; /* readers of everything I posted in each entry */
    struct lm_coll_shm *next_retired;
    int n;
    mailbox *peer[]; /* every member's mailbox, mine included */
};

static int live;
static struct lm_coll_shm *retired;

static unsigned entry_of(uint32_t call) { return call % SLOTS; }
/* Never 0, the stamp of an entry that holds nothing yet. */
static uint64_t stamp_of(uint32_t call) { return (uint64_t)call + 1; }

static int all_read(const struct lm_coll_shm *m)
{
    for (int e = 0; e < SLOTS; e++)
        if (atomic_load_explicit(&m->mine->ack[e].n, memory_order_acquire) != m->expect[e]) return 0;
    return 1;
}

static void give_back(struct lm_coll_shm *m)
{
    lm_transport_shared_free(m->mine);
    lm_free(LM_MEM_COLL, m);
    live--;
}

/* Mailboxes of freed communicators whose last posts are all read. */
static void sweep_retired(void)
{
    for (struct lm_coll_shm **p = &retired; *p;) {
        struct lm_coll_shm *m = *p;
        if (!all_read(m)) {
            p = &m->next_retired;
            continue;
        }
        *p = m->next_retired;
        give_back(m);
    }
}

static int on_this_node(const lm_comm *c)
{
    for (int r = 0; r < c->size; r++)
        if (lm_transport_local_rank(lm_comm_world_rank(c, r)) < 0) return 0;
    return 1;
}

static void min_int(const void *in, void *inout, size_t count, void *arg)
{
    (void)arg;
    for (size_t i = 0; i < count; i++)
        if (((const int *)in)[i] < ((int *)inout)[i]) ((int *)inout)[i] = ((const int *)in)[i];
}

void lm_coll_shm_setup(lm_comm *c)
{
    if (c->coll_shm_tried) return;
    c->coll_shm_tried = 1;
    /* the same answer on every member: nothing here depends on this rank */
    if (c->is_inter || c->size < 2 || c->size > LM_COLL_SHM_MAX_PROCS || !lm_cvar(LM_CVAR_COLL_SHM) ||
        lm_comm_has_simulated(c) || !on_this_node(c))
        return;
    sweep_retired();
    int n = c->size;
    struct lm_coll_shm *m = live < MAX_LIVE ? lm_calloc(LM_MEM_COLL, 1, sizeof *m + (size_t)n * sizeof(mailbox *))
                                            : NULL;
    lm_rkey key = 0;
    if (m) {
        m->n = n;
        m->mine = lm_transport_shared_alloc(sizeof(mailbox), &key);
        if (m->mine) {
            /* the arena may hand back a block used before: clear the
             * counters and stamps, never the data */
            for (int e = 0; e < SLOTS; e++) {
                atomic_store_explicit(&m->mine->ack[e].n, 0, memory_order_relaxed);
                atomic_store_explicit(&m->mine->entry[e].stamp, 0, memory_order_relaxed);
            }
            live++;
        } else {
            key = 0;
        }
    }
    /* Every rank learns every key (0: that rank has no mailbox), then all
     * agree whether every mailbox could be reached. */
    uint64_t keys[LM_COLL_SHM_MAX_PROCS];
    int ok = lm_coll_allgather(&key, sizeof key, keys, c) == MPI_SUCCESS && m && m->mine;
    for (int r = 0; r < n && ok; r++) {
        m->peer[r] = keys[r] ? lm_transport_shared_ptr(lm_comm_world_rank(c, r), keys[r], sizeof(mailbox)) : NULL;
        ok = m->peer[r] != NULL;
    }
    if (lm_coll_allreduce(&ok, 1, sizeof ok, min_int, NULL, c) != MPI_SUCCESS) ok = 0;
    if (ok) {
        /* the same on every member: either all of them share one address
         * space or, for each, some member is in another */
        m->same_space = 1;
        for (int r = 0; r < n; r++) m->same_space &= lm_transport_same_space(lm_comm_world_rank(c, r));
        c->coll_shm = m;
        return;
    }
    if (m && m->mine) give_back(m);
    else lm_free(LM_MEM_COLL, m);
}

void lm_coll_shm_release(lm_comm *c)
{
    struct lm_coll_shm *m = c->coll_shm;
    c->coll_shm = NULL;
    if (!m) return;
    if (all_read(m)) {
        give_back(m);
        return;
    }
    m->next_retired = retired;
    retired = m;
}

void lm_coll_shm_finalize(void)
{
    while (retired) {
        struct lm_coll_shm *m = retired;
        retired = m->next_retired;
        give_back(m);
    }
}

/* The entry of `call`, once every reader of its previous contents has
 * read them: `bytes` from src at `off` of its data, then the stamp. 0 when
 * it still has readers. */
static int publish(lm_comm *c, uint32_t call, const lm_step *st, const void *src, size_t off, size_t bytes)
{
    struct lm_coll_shm *m = c->coll_shm;
    unsigned e = entry_of(call);
    if (atomic_load_explicit(&m->mine->ack[e].n, memory_order_acquire) != m->expect[e]) return 0;
    m->expect[e] += st->readers;
    m->mine->entry[e].readers = st->readers;
    if (bytes) memcpy(m->mine->entry[e].data + off, src, bytes);
    atomic_store_explicit(&m->mine->entry[e].stamp, stamp_of(call), memory_order_release);
    return 1;
}

int lm_coll_shm_post_address(lm_comm *c, uint32_t call, const lm_step *st, const char *at)
{
    /* a FETCH at mailbox offset o reads at + (o - dst_off): as if the
     * bytes from `at` had been copied to dst_off */
    uintptr_t base = (uintptr_t)at - st->dst_off;
    return publish(c, call, st, &base, 0, sizeof base);
}

const void *lm_coll_shm_peek_address(lm_comm *c, uint32_t call, const lm_step *st)
{
    const char *data = lm_coll_shm_peek(c, call, st);
    if (!data) return NULL;
    uintptr_t base;
    memcpy(&base, data - st->src_off, sizeof base);
    return (const void *)(base + st->src_off);
}

int lm_coll_shm_read_by_all(lm_comm *c, uint32_t call)
{
    struct lm_coll_shm *m = c->coll_shm;
    unsigned e = entry_of(call);
    return atomic_load_explicit(&m->mine->ack[e].n, memory_order_acquire) == m->expect[e];
}

int lm_coll_shm_same_space(const lm_comm *c) { return c->coll_shm && c->coll_shm->same_space; }

int lm_coll_shm_post(lm_comm *c, uint32_t call, const lm_step *st, const void *src)
{
    return publish(c, call, st, src, st->dst_off, st->bytes);
}

const void *lm_coll_shm_peek(lm_comm *c, uint32_t call, const lm_step *st)
{
    mailbox *mb = c->coll_shm->peer[st->peer];
    mbox_entry *ent = &mb->entry[entry_of(call)];
    if (atomic_load_explicit(&ent->stamp, memory_order_acquire) != stamp_of(call)) return NULL;
    /* a writer ahead has the next call's entry ready: start bringing its
     * line over now, while this one is used */
    __builtin_prefetch(&mb->entry[entry_of(call + 1)], 0);
    return ent->data + st->src_off;
}

void lm_coll_shm_fetched(lm_comm *c, uint32_t call, const lm_step *st)
{
    mailbox *mb = c->coll_shm->peer[st->peer];
    unsigned e = entry_of(call);
    /* release: our reads of the entry are done before the writer may
     * reuse it. A post with one reader (a reduce's inputs, a gather's
     * blocks) is counted by that reader alone: a plain store, which does
     * not stall this core the way a locked add does (its stamp's line,
     * holding readers, is in this cache since the peek). */
    if (mb->entry[e].readers == 1) {
        uint32_t n = atomic_load_explicit(&mb->ack[e].n, memory_order_relaxed);
        atomic_store_explicit(&mb->ack[e].n, n + 1, memory_order_release);
    } else {
        atomic_fetch_add_explicit(&mb->ack[e].n, 1, memory_order_release);
    }
}
