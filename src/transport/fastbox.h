/* Fast boxes: per-pair single-producer single-consumer rings in the
 * receiver's part of the shm area, for pairs that talk a lot.
 *
 * A ring holds records back to back, each a whole number of cache lines
 * (LM_FB_ALIGN): a 16-byte record header, the AM header, the payload. The
 * first word of a record is its length, stored last with release; the
 * receiver acquire-loads the word at its tail and finds a length (a
 * record: handle it in place, move on by that length), LM_FB_WRAP (the
 * rest of the ring is unused: go on at its start) or 0 (nothing yet).
 * Every line of the ring that is free has 0 in its first word: the ring
 * starts zeroed, and the receiver clears the first word of each line of a
 * record it has handled (one store for a small message, as a flag would
 * take), so bytes of an earlier lap are never taken for a header. The
 * receiver also publishes how far it has read (`freed`, in the slot's
 * first line) once per pass; the sender reads it only when its cached copy
 * says the ring is full. Small messages take one line each, so a ring of
 * 32 KiB holds hundreds of them in flight, and messages up to
 * LM_SHM_FB_PAYLOAD_MAX still fit.
 *
 * A sender that finds the ring drained may go back to its start from near a
 * lap's start (lm_fastbox_rewind), so that a pair taking turns reuses one
 * line; the receiver follows (lm_fastbox_peek).
 *
 * A slot is claimed by a sender with one CAS on its owner word and kept until
 * the job ends (slots are few and bounded; a sender that finds none uses
 * cells only).
 *
 * Ordering with the cell queue: see shm.c (each record carries q_before, each
 * cell fb_before). */
#ifndef LM_FASTBOX_H
#define LM_FASTBOX_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "shm_layout.h"
#include "util/lm_copy.h"

#define LM_FB_ALIGN 64u
#define LM_FB_WRAP 1u /* a length no record has (records are LM_FB_ALIGN multiples) */

typedef struct lm_fastbox_record {
    _Atomic uint32_t len; /* bytes of the record; 0: not yet written; LM_FB_WRAP */
    uint16_t hdr_len;
    uint16_t pad;
    uint32_t payload_len;
    uint32_t q_before;    /* cells the sender sent on this pair before this record */
    unsigned char data[]; /* AM header, then the payload 8-byte aligned */
} lm_fastbox_record;

typedef struct lm_fastbox_slot {
    _Atomic int32_t owner;  /* sender's local rank + 1; 0: free */
    _Atomic uint32_t freed; /* ring bytes the receiver has read, all laps (mod 2^32) */
    char pad[56];
    _Alignas(64) unsigned char ring[LM_SHM_FB_RING_BYTES];
} lm_fastbox_slot;

_Static_assert(sizeof(lm_fastbox_slot) == 64 + LM_SHM_FB_RING_BYTES, "slot size");
_Static_assert((LM_SHM_FB_RING_BYTES & (LM_SHM_FB_RING_BYTES - 1)) == 0, "ring: power of two");
_Static_assert(sizeof(lm_fastbox_record) == 16, "record header");

/* Payload starts 8-byte aligned after the AM header. */
static inline size_t lm_fastbox_payload_at(size_t hdr_len) { return (hdr_len + 7u) & ~(size_t)7u; }

static inline int lm_fastbox_fits(size_t hdr_len, size_t payload_len)
{
    return hdr_len <= 64 && payload_len <= LM_SHM_FB_PAYLOAD_MAX;
}

/* Sender: has the receiver handled every record put in so far? last: where
 * the latest record starts (records are handled in order, and a handled
 * record's first word is cleared). */
static inline int lm_fastbox_drained(lm_fastbox_slot *s, uint32_t head, uint32_t last, uint32_t freed_seen)
{
    if (freed_seen == head) return 1;
    return atomic_load_explicit(&((lm_fastbox_record *)(s->ring + (last & (LM_SHM_FB_RING_BYTES - 1))))->len,
                                memory_order_acquire) == 0;
}

static inline uint32_t lm_fastbox_record_bytes(size_t hdr_len, size_t payload_len)
{
    size_t n = sizeof(lm_fastbox_record) + lm_fastbox_payload_at(hdr_len) + payload_len;
    return (uint32_t)((n + LM_FB_ALIGN - 1) & ~(size_t)(LM_FB_ALIGN - 1));
}

static inline lm_fastbox_slot *lm_fastbox_slot_at(lm_shm_area *a, int receiver, unsigned slot)
{
    return (lm_fastbox_slot *)lm_shm_area_fb_base(a, receiver) + slot;
}

static inline lm_fastbox_record *lm_fastbox_at(lm_fastbox_slot *s, uint32_t pos)
{
    return (lm_fastbox_record *)(s->ring + (pos & (LM_SHM_FB_RING_BYTES - 1)));
}

/* Both sides: a rewind may leave from `at` (ring bytes, all laps): within
 * LM_SHM_FB_REWIND_NEAR of a lap's start, not at it. */
static inline int lm_fastbox_near_start(uint32_t at)
{
    uint32_t pos = at & (LM_SHM_FB_RING_BYTES - 1);
    return pos > 0 && pos <= LM_SHM_FB_REWIND_NEAR;
}

/* Sender: the receiver has handled every record put so far
 * (lm_fastbox_drained), so the next one may go to the ring's start instead
 * of *head: the rest of this lap is skipped without a mark, and the
 * receiver, finding nothing at its tail but a record at the start, follows
 * (lm_fastbox_peek). Why: a pair that takes turns then reuses the same few
 * lines, which move between the two cores like one line bounced back and
 * forth, instead of a line not touched for hundreds of messages each time
 * (an 8-byte ping-pong of the rings alone: 67 ns per message walking the
 * ring against 31-46 ns on one reused line, the bare line's floor 30). */
static inline void lm_fastbox_rewind(uint32_t *head, uint32_t *freed_seen)
{
    /* only from near the lap's start, where the receiver looks for it */
    if (!lm_fastbox_near_start(*head)) return;
    *freed_seen = *head; /* all of it handled and cleared */
    *head += LM_SHM_FB_RING_BYTES - (*head & (LM_SHM_FB_RING_BYTES - 1));
}

/* Sender: put one message at *head (ring bytes written, all laps), which
 * advances; *freed_seen caches the receiver's `freed`. 0 on success, -1 if
 * the ring has no room for it now (nothing written). The message must fit
 * (lm_fastbox_fits). */
static inline int lm_fastbox_put(lm_fastbox_slot *s, uint32_t *head, uint32_t *freed_seen, uint32_t q_before,
                                 const void *hdr, size_t hdr_len, const void *p0, size_t l0, const void *p1, size_t l1)
{
    uint32_t len = lm_fastbox_record_bytes(hdr_len, l0 + l1);
    uint32_t h = *head, pos = h & (LM_SHM_FB_RING_BYTES - 1);
    /* a record never straddles the end: the rest of the ring is skipped,
     * marked by a wrap mark where the record would have started */
    uint32_t skip = pos + len > LM_SHM_FB_RING_BYTES ? LM_SHM_FB_RING_BYTES - pos : 0;
    uint32_t need = skip + len;
    if (h + need - *freed_seen > LM_SHM_FB_RING_BYTES) {
        *freed_seen = atomic_load_explicit(&s->freed, memory_order_acquire);
        if (h + need - *freed_seen > LM_SHM_FB_RING_BYTES) return -1;
    }
    /* the wrap mark is visible before the record behind it: a receiver
     * that finds a record at the ring's start and nothing at its tail takes
     * it for a rewind (lm_fastbox_peek), which would leave a late mark in a
     * free line */
    if (skip) atomic_store_explicit(&lm_fastbox_at(s, h)->len, LM_FB_WRAP, memory_order_release);
    lm_fastbox_record *e = lm_fastbox_at(s, h + skip);
    e->hdr_len = (uint16_t)hdr_len;
    e->payload_len = (uint32_t)(l0 + l1);
    e->q_before = q_before;
    lm_copy(e->data, hdr, hdr_len);
    unsigned char *p = e->data + lm_fastbox_payload_at(hdr_len);
    lm_copy(p, p0, l0);
    lm_copy(p + l0, p1, l1);
    atomic_store_explicit(&e->len, len, memory_order_release);
    *head = h + skip + len;
    return 0;
}

/* Receiver: the record at *tail if one is there (passing a wrap mark, which
 * it clears, or a rewind, moving *tail to the ring's start), else NULL.
 * Nothing at the tail but a record at the ring's start: records are
 * published in order, so had that record been put after the one due at the
 * tail (a ring gone round), the tail's would be visible by now; it is not,
 * so the sender found everything handled and rewound (lm_fastbox_rewind).
 * A rewind leaves from within LM_SHM_FB_REWIND_NEAR of the lap's start, so
 * a tail farther in never looks back there. */
static inline lm_fastbox_record *lm_fastbox_peek(lm_fastbox_slot *s, uint32_t *tail)
{
    lm_fastbox_record *e = lm_fastbox_at(s, *tail);
    uint32_t len = atomic_load_explicit(&e->len, memory_order_acquire);
    if (len == 0) {
        lm_fastbox_record *start = (lm_fastbox_record *)s->ring;
        if (!lm_fastbox_near_start(*tail) || atomic_load_explicit(&start->len, memory_order_acquire) == 0) return NULL;
        len = atomic_load_explicit(&e->len, memory_order_acquire);
        if (len == 0) {
            *tail += LM_SHM_FB_RING_BYTES - (*tail & (LM_SHM_FB_RING_BYTES - 1));
            return start;
        }
    }
    if (len == LM_FB_WRAP) {
        atomic_store_explicit(&e->len, 0, memory_order_relaxed);
        *tail += LM_SHM_FB_RING_BYTES - (*tail & (LM_SHM_FB_RING_BYTES - 1));
        e = lm_fastbox_at(s, *tail);
        len = atomic_load_explicit(&e->len, memory_order_acquire);
    }
    return len ? e : NULL;
}

/* Receiver: past the record just handled, whose lines are cleared for the
 * next lap. */
static inline void lm_fastbox_consume(uint32_t *tail, lm_fastbox_record *e)
{
    uint32_t len = atomic_load_explicit(&e->len, memory_order_relaxed);
    for (uint32_t off = LM_FB_ALIGN; off < len; off += LM_FB_ALIGN)
        atomic_store_explicit((_Atomic uint32_t *)((unsigned char *)e + off), 0, memory_order_relaxed);
    /* release: a sender that sees the 0 (lm_fastbox_drained) may write here
     * again, after every read of the record above */
    atomic_store_explicit(&e->len, 0, memory_order_release);
    *tail += len;
}

/* Receiver: let the sender reuse everything before tail. */
static inline void lm_fastbox_give_back(lm_fastbox_slot *s, uint32_t tail)
{
    atomic_store_explicit(&s->freed, tail, memory_order_release);
}

/* Sender: claim a free slot of `receiver` among its first `max_slots`; the
 * slot index, or -1 if all are taken. */
int lm_fastbox_claim(lm_shm_area *a, int receiver, int my_local_rank, unsigned max_slots);

#endif
