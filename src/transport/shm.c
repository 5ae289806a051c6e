/* Shared-memory active messages.
 *
 * Cells: every rank owns LM_SHM_CELLS_PER_RANK cells in the area. To send, a
 * rank takes one of its own cells (from its free queue, or a never-used one:
 * pages are touched only when a cell is first needed), copies header and
 * payload in and appends it to the receiver's queue. The receiver hands the
 * cell back to the owner's free queue after the handler returns. No cell
 * free: LM_EAGAIN; the caller progresses (draining its own queue keeps
 * everyone's cells moving) and retries.
 *
 * Fast boxes: after fastbox_threshold messages to one peer the sender claims
 * one of the peer's fast-box slots and announces it with a FASTBOX_START
 * cell. The receiver polls a slot only after it handled that cell, so nothing
 * in the box can overtake what was queued before the announcement.
 *
 * Order between the two paths (a message never overtakes an earlier one from
 * the same sender): once a pair has a fast box, the sender counts what it sent
 * each way since FASTBOX_START and stamps every message with the other path's
 * count: a fast-box record carries q_before (cells sent before it), a cell
 * carries fb_before (records sent before it). The receiver
 *   - handles a fast-box record only when it has handled q_before cells of
 *     that pair, otherwise leaves it (and the records behind it) for later;
 *   - before handling a cell, first handles the pair's records up to
 *     fb_before. Those records are visible by then: they were written before
 *     the cell was published through the queue.
 * So the sender may switch paths message by message (a message too big for
 * a record, or a full ring, simply goes through a cell) without waiting for
 * any acknowledgement, and the hot path costs one extra store and compare. */
#include "shm.h"
#include "am_dispatch.h"
#include "util/lm_hashmap.h"
#include "util/lm_mem.h"
#include "fastbox.h"
#include "shm_layout.h"
#include "shm_queue.h"
#include <string.h>

enum { CELL_AM = 0, CELL_FB_START = 1 };
enum { FB_NONE = 0, FB_ACTIVE = 1, FB_UNAVAILABLE = 2 };
#define QUEUE_BATCH 32

typedef struct lm_shm_cell {
    lm_shm_qnode link;
    int32_t src_world;
    uint16_t hdr_len;
    uint8_t kind;
    uint8_t fb_slot; /* receiver slot + 1 if the pair has a fast box, else 0 */
    uint32_t payload_len;
    uint32_t fb_before; /* fast-box records the sender put before this cell */
    char pad[LM_SHM_CELL_HDR - 24];
    unsigned char am_hdr[LM_SHM_CELL_AM_HDR];
    unsigned char payload[LM_SHM_CELL_PAYLOAD];
} lm_shm_cell;
_Static_assert(sizeof(lm_shm_cell) == LM_SHM_CELL_SIZE, "cell size");
_Static_assert(LM_AM_HDR_MAX <= LM_SHM_CELL_AM_HDR, "AM header fits a cell");

struct rx_slot;

struct lm_shm_peer {
    lm_fastbox_slot *fb;      /* NULL until a fast box is claimed */
    uint32_t fb_head;         /* ring bytes written (fastbox.h) */
    uint32_t fb_freed_seen;   /* the receiver's `freed` as last read */
    uint32_t fb_last;         /* where the latest record starts */
    int last_in_ring;         /* the latest message on this pair went through the ring */
    uint32_t fb_sent, q_sent; /* since FASTBOX_START */
    uint32_t sent;            /* messages before a fast box, for the threshold */
    struct rx_slot *rx;       /* my fast box this peer sends into, if any */
    uint32_t rx_seen;         /* rx->fb_handled at my latest message to the peer */
    int local_rank;
    uint8_t fb_slot1;
    uint8_t fb_state;
};

/* Receiver side of one of my fast-box slots. */
typedef struct rx_slot {
    lm_fastbox_slot *box;
    int src_world, src_local;
    uint32_t tail; /* ring bytes read */
    uint32_t fb_handled, q_handled;
} rx_slot;

static struct {
    char *base; /* the area, as mapped here */
    lm_shm_area *area;
    lm_shm_rank_ctl *my_ctl;
    int world, me, nlocal;
    uint32_t fresh; /* cells of mine never used yet */
    lm_shm_config cfg;
    lm_hashmap peers; /* local rank -> lm_shm_peer (R1) */
    rx_slot rx[LM_SHM_FB_SLOTS];
    unsigned char rx_active[LM_SHM_FB_SLOTS];
    int n_rx_active;
    int fb_held; /* fast boxes this sender holds at receivers */
    lm_transport_counters cnt;
    int initialized;
} S;

void lm_shm_arena_init(lm_shm_area *area, int local_rank);
void lm_shm_arena_finalize(void);

static inline lm_shm_cell *cell_at(uint64_t off) { return (lm_shm_cell *)(S.base + off); }

int lm_shm_init(void *area, int world_rank, int local_rank, int local_size, const lm_shm_config *cfg)
{
    if (lm_shm_area_check(area, local_size) != 0 || local_rank < 0 || local_rank >= local_size) return LM_EINVAL;
    memset(&S, 0, sizeof S);
    S.base = area;
    S.area = area;
    S.my_ctl = lm_shm_area_ctl(S.area, local_rank);
    S.world = world_rank;
    S.me = local_rank;
    S.nlocal = local_size;
    S.cfg = *cfg;
    if (S.cfg.fastbox_max < 0) S.cfg.fastbox_max = 0;
    if (S.cfg.fastbox_max > (int)S.area->fb_slots) S.cfg.fastbox_max = (int)S.area->fb_slots;
    lm_hashmap_init(&S.peers, LM_MEM_PEER_TABLE);
    lm_shm_arena_init(S.area, local_rank);
    S.initialized = 1;
    return LM_OK;
}

int lm_shm_pipes(size_t *bytes)
{
    if (bytes) *bytes = S.initialized ? S.area->pipe_bytes : 0;
    return S.initialized ? (int)S.area->pipes : 0;
}

void *lm_shm_pipe(int local_rank, int i)
{
    if (!S.initialized || local_rank < 0 || local_rank >= S.nlocal || i < 0 || i >= (int)S.area->pipes) return NULL;
    return lm_shm_area_pipe(S.area, local_rank, (uint32_t)i);
}

void lm_shm_count_pipe(size_t sent, size_t received)
{
    S.cnt.pipe_bytes_sent += sent;
    S.cnt.pipe_bytes_received += received;
}

static void free_peer(int key, void *value, void *arg) { lm_free(LM_MEM_PEER_TABLE, value); }

void lm_shm_finalize(void)
{
    if (!S.initialized) return;
    /* Fast-box slots stay claimed: the receiver may still be polling them,
     * and the area disappears with the job. */
    lm_hashmap_foreach(&S.peers, free_peer, NULL);
    lm_hashmap_destroy(&S.peers);
    lm_shm_arena_finalize();
    S.initialized = 0;
}

lm_shm_peer *lm_shm_peer_get(int local_rank)
{
    lm_shm_peer *p = lm_hashmap_get(&S.peers, local_rank);
    if (p) return p;
    if (local_rank < 0 || local_rank >= S.nlocal) return NULL;
    p = lm_calloc(LM_MEM_PEER_TABLE, 1, sizeof *p);
    if (!p) return NULL;
    p->local_rank = local_rank;
    if (lm_hashmap_put(&S.peers, local_rank, p) != 0) {
        lm_free(LM_MEM_PEER_TABLE, p);
        return NULL;
    }
    for (int i = 0; i < S.n_rx_active; i++)
        if (S.rx[S.rx_active[i]].src_local == local_rank) p->rx = &S.rx[S.rx_active[i]];
    return p;
}

static uint64_t cell_alloc(void)
{
    uint64_t off = lm_shm_queue_dequeue(S.base, &S.my_ctl->free);
    if (off) return off;
    if (S.fresh < S.area->cells_per_rank) return lm_shm_area_cell_offset(S.area, S.me, S.fresh++);
    return 0;
}

static void cell_return(uint64_t off)
{
    int owner = lm_shm_area_cell_owner(S.area, off);
    lm_shm_queue_enqueue(S.base, &lm_shm_area_ctl(S.area, owner)->free, off);
}

/* Claim a slot at the peer and announce it; on any shortage try again at a
 * later send (no cell) or never (no slot). */
static void fastbox_start(lm_shm_peer *p)
{
    if (S.cfg.fastbox_peers > 0 && S.fb_held >= S.cfg.fastbox_peers) {
        p->fb_state = FB_UNAVAILABLE; /* this sender's fast-path budget is spent */
        return;
    }
    uint64_t off = cell_alloc();
    if (!off) return;
    int k = lm_fastbox_claim(S.area, p->local_rank, S.me, (unsigned)S.cfg.fastbox_max);
    if (k < 0) {
        p->fb_state = FB_UNAVAILABLE;
        cell_return(off);
        return;
    }
    lm_shm_cell *c = cell_at(off);
    c->src_world = S.world;
    c->kind = CELL_FB_START;
    c->fb_slot = (uint8_t)(k + 1);
    c->hdr_len = 0;
    c->payload_len = 0;
    c->fb_before = 0;
    lm_shm_queue_enqueue(S.base, &lm_shm_area_ctl(S.area, p->local_rank)->recv, off);
    p->fb = lm_fastbox_slot_at(S.area, p->local_rank, (unsigned)k);
    p->fb_slot1 = (uint8_t)(k + 1);
    p->fb_head = p->fb_freed_seen = p->fb_last = p->fb_sent = p->q_sent = 0;
    p->last_in_ring = 1;
    p->fb_state = FB_ACTIVE;
    S.fb_held++;
}

int lm_shm_send(lm_shm_peer *p, const void *hdr, size_t hdr_len, const void *p0, size_t l0, const void *p1, size_t l1)
{
    size_t len = l0 + l1;
    if (hdr_len == 0 || hdr_len > LM_AM_HDR_MAX) return LM_EINVAL;
    if (!p->fb && p->fb_state == FB_NONE && S.cfg.fastbox_threshold > 0 && S.cfg.fastbox_max > 0 &&
        ++p->sent >= (uint32_t)S.cfg.fastbox_threshold)
        fastbox_start(p);
    /* Above LM_SHM_FB_STREAM_MAX a record goes into the ring only while
     * the pair takes turns (the previous message went there too and has
     * been handled): a stream of such messages stays in the cells, which
     * measured faster than records and cells mixed in one window. */
    /* A pair that takes turns (the peer's answer has come since my latest
     * message) and whose ring is drained goes back to the ring's start
     * (lm_fastbox_rewind), so request and answer bounce on the same few
     * lines; but only while it has not walked past LM_SHM_FB_REWIND_NEAR
     * bytes into the lap. Why both: a sender that streams keeps walking the
     * ring, the receiver reading behind it, on lines that were cleared long
     * ago; rewinding whenever the receiver had caught up made streaming of
     * 2-4 KiB messages 0.4-0.6x as fast and both directions at once
     * 0.65-0.85x at 1-512 bytes, and rewinding at every turn (once per
     * window of a bidirectional stream) still cost 10% at 64 B-4 KiB
     * (alternating runs against walking only). A pair that exchanges a few
     * small messages per turn keeps rewinding; one that streams gets back
     * near the start only once a lap. And only records of one line: a
     * ping-pong of 64-256 B messages (records of 2-5 lines) took 1.1-1.4x
     * as long rewinding as walking, asking for all the lines writable
     * ahead or not, where 1-32 B took 0.82-0.88x. */
    if (p->fb && lm_fastbox_fits(hdr_len, len)) {
        int turn = 0;
        if (lm_fastbox_record_bytes(hdr_len, len) == LM_FB_ALIGN) {
            uint32_t heard = p->rx ? p->rx->fb_handled : 0;
            turn = heard != p->rx_seen && lm_fastbox_near_start(p->fb_head);
            p->rx_seen = heard;
        }
#if defined(__x86_64__)
        /* the ring's first line is about to be read (drained?) and then
         * written: ask for it writable at once, one transfer instead of a
         * shared copy and then an upgrade (8-byte ping-pong 2-4% faster) */
        if (turn) __asm__ volatile("prefetchw %0" ::"m"(*(const char *)p->fb->ring));
#endif
        int drained = (turn || len > LM_SHM_FB_STREAM_MAX) &&
                      lm_fastbox_drained(p->fb, p->fb_head, p->fb_last, p->fb_freed_seen);
        if ((len <= LM_SHM_FB_STREAM_MAX || (p->last_in_ring && drained))) {
            if (turn && drained) lm_fastbox_rewind(&p->fb_head, &p->fb_freed_seen);
            if (lm_fastbox_put(p->fb, &p->fb_head, &p->fb_freed_seen, p->q_sent, hdr, hdr_len, p0, l0, p1, l1) == 0) {
                p->fb_last = p->fb_head - lm_fastbox_record_bytes(hdr_len, len);
                p->last_in_ring = 1;
                p->fb_sent++;
                S.cnt.fastbox_sent++;
                S.cnt.am_sent++;
                S.cnt.am_bytes_sent += len;
                return LM_OK;
            }
        }
    }
    if (len > LM_SHM_CELL_PAYLOAD) return LM_EINVAL;
    p->last_in_ring = 0;
    uint64_t off = cell_alloc();
    if (!off) {
        S.cnt.send_eagain++;
        return LM_EAGAIN;
    }
    lm_shm_cell *c = cell_at(off);
    c->src_world = S.world;
    c->kind = CELL_AM;
    c->hdr_len = (uint16_t)hdr_len;
    c->payload_len = (uint32_t)len;
    c->fb_slot = p->fb ? p->fb_slot1 : 0;
    c->fb_before = p->fb_sent;
    memcpy(c->am_hdr, hdr, hdr_len);
    if (l0) memcpy(c->payload, p0, l0);
    if (l1) memcpy(c->payload + l0, p1, l1);
    lm_shm_queue_enqueue(S.base, &lm_shm_area_ctl(S.area, p->local_rank)->recv, off);
    if (p->fb) p->q_sent++;
    S.cnt.queue_sent++;
    S.cnt.am_sent++;
    S.cnt.am_bytes_sent += len;
    return LM_OK;
}

static inline void deliver_record(rx_slot *r, lm_fastbox_record *e)
{
    lm_am_deliver(r->src_world, e->data, e->hdr_len, e->data + lm_fastbox_payload_at(e->hdr_len), e->payload_len);
    S.cnt.am_received++;
    S.cnt.am_bytes_received += e->payload_len;
    lm_fastbox_consume(&r->tail, e);
    r->fb_handled++;
}

/* Records handled per slot and pass, so that one busy sender cannot keep
 * the others and the queue waiting. */
#define FB_BATCH 64

static int poll_fastbox(rx_slot *r)
{
    int n = 0;
    lm_fastbox_record *e;
    while (n < FB_BATCH && (e = lm_fastbox_peek(r->box, &r->tail)) != NULL) {
        if ((int32_t)(e->q_before - r->q_handled) > 0) break; /* an earlier cell of this pair is still in the queue */
        deliver_record(r, e);
        n++;
    }
    if (n) lm_fastbox_give_back(r->box, r->tail);
    return n;
}

static void handle_cell(uint64_t off)
{
    lm_shm_cell *c = cell_at(off);
    if (c->kind == CELL_FB_START) {
        unsigned k = c->fb_slot - 1u;
        rx_slot *r = &S.rx[k];
        r->box = lm_fastbox_slot_at(S.area, S.me, k);
        r->src_world = c->src_world;
        r->src_local = atomic_load_explicit(&r->box->owner, memory_order_relaxed) - 1;
        r->tail = r->fb_handled = r->q_handled = 0;
        S.rx_active[S.n_rx_active++] = (unsigned char)k;
        lm_shm_peer *back = lm_hashmap_get(&S.peers, r->src_local);
        if (back) back->rx = r;
    } else {
        rx_slot *r = c->fb_slot ? &S.rx[c->fb_slot - 1u] : NULL;
        if (r) {
            uint32_t before = r->fb_handled;
            while ((int32_t)(c->fb_before - r->fb_handled) > 0) {
                /* Published before this cell, so present; the loop only
                 * guards against a weakly ordered read of the length. */
                lm_fastbox_record *e = lm_fastbox_peek(r->box, &r->tail);
                if (e) deliver_record(r, e);
            }
            if (r->fb_handled != before) lm_fastbox_give_back(r->box, r->tail);
        }
        lm_am_deliver(c->src_world, c->am_hdr, c->hdr_len, c->payload, c->payload_len);
        S.cnt.am_received++;
        S.cnt.am_bytes_received += c->payload_len;
        if (r) r->q_handled++;
    }
    cell_return(off);
}

int lm_shm_progress(void)
{
    int n = 0;
    for (int i = 0; i < S.n_rx_active; i++) n += poll_fastbox(&S.rx[S.rx_active[i]]);
    for (int i = 0; i < QUEUE_BATCH; i++) {
        uint64_t off = lm_shm_queue_dequeue(S.base, &S.my_ctl->recv);
        if (!off) break;
        handle_cell(off);
        n++;
    }
    return n;
}

size_t lm_shm_max_payload(void) { return LM_SHM_CELL_PAYLOAD; }

void lm_shm_counters(lm_transport_counters *out) { *out = S.cnt; }
