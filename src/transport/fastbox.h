/* Fast boxes: per-pair single-producer single-consumer rings in the
 * receiver's part of the shm area, for pairs that talk a lot.
 *
 * An entry is handed over by its flag word: the sender fills header and
 * payload, then release-stores flag = 1; the receiver acquire-loads the flag
 * of its next entry, handles the message in place, then release-stores
 * flag = 0 to give the entry back. One cache line changes hands each way;
 * no atomics read-modify-write, no queue, no lock.
 *
 * A slot is claimed by a sender with one CAS on its owner word and kept until
 * the job ends (slots are few and bounded; a sender that finds none uses
 * cells only).
 *
 * Ordering with the cell queue: see shm.c (each entry carries q_before, each
 * cell fb_before). */
#ifndef LM_FASTBOX_H
#define LM_FASTBOX_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "shm_layout.h"

typedef struct lm_fastbox_entry {
    _Atomic uint32_t flag; /* 1: full (sender -> receiver); 0: free */
    uint16_t hdr_len;
    uint16_t pad;
    uint32_t payload_len;
    uint32_t q_before; /* cells the sender sent on this pair before this entry */
    unsigned char data[LM_SHM_FB_ENTRY_SIZE - LM_SHM_FB_ENTRY_HDR];
} lm_fastbox_entry;

typedef struct lm_fastbox_slot {
    _Atomic int32_t owner; /* sender's local rank + 1; 0: free */
    char pad[60];
    lm_fastbox_entry entry[LM_SHM_FB_ENTRIES];
} lm_fastbox_slot;

_Static_assert(sizeof(lm_fastbox_entry) == LM_SHM_FB_ENTRY_SIZE, "entry size");
_Static_assert(sizeof(lm_fastbox_slot) == 64 + LM_SHM_FB_ENTRIES * LM_SHM_FB_ENTRY_SIZE, "slot size");
_Static_assert((LM_SHM_FB_ENTRIES & (LM_SHM_FB_ENTRIES - 1)) == 0, "entries: power of two");

/* Payload starts 8-byte aligned after the AM header. */
static inline size_t lm_fastbox_payload_at(size_t hdr_len) { return (hdr_len + 7u) & ~(size_t)7u; }

static inline int lm_fastbox_fits(size_t hdr_len, size_t payload_len)
{
    return lm_fastbox_payload_at(hdr_len) + payload_len <= sizeof(((lm_fastbox_entry *)0)->data);
}

static inline lm_fastbox_slot *lm_fastbox_slot_at(lm_shm_area *a, int receiver, unsigned slot)
{
    return (lm_fastbox_slot *)lm_shm_area_fb_base(a, receiver) + slot;
}

/* Sender: try to put one message into entry number `head` (mod ring size).
 * 0 on success, -1 if that entry has not been given back yet. */
static inline int lm_fastbox_put(lm_fastbox_slot *s, uint32_t head, uint32_t q_before, const void *hdr, size_t hdr_len,
                                 const void *p0, size_t l0, const void *p1, size_t l1)
{
    lm_fastbox_entry *e = &s->entry[head & (LM_SHM_FB_ENTRIES - 1)];
    if (atomic_load_explicit(&e->flag, memory_order_acquire)) return -1;
    e->hdr_len = (uint16_t)hdr_len;
    e->payload_len = (uint32_t)(l0 + l1);
    e->q_before = q_before;
    memcpy(e->data, hdr, hdr_len);
    unsigned char *p = e->data + lm_fastbox_payload_at(hdr_len);
    if (l0) memcpy(p, p0, l0);
    if (l1) memcpy(p + l0, p1, l1);
    atomic_store_explicit(&e->flag, 1, memory_order_release);
    return 0;
}

/* Receiver: the entry number `tail` if it is full, else NULL. */
static inline lm_fastbox_entry *lm_fastbox_peek(lm_fastbox_slot *s, uint32_t tail)
{
    lm_fastbox_entry *e = &s->entry[tail & (LM_SHM_FB_ENTRIES - 1)];
    return atomic_load_explicit(&e->flag, memory_order_acquire) ? e : NULL;
}

static inline void lm_fastbox_release(lm_fastbox_entry *e) { atomic_store_explicit(&e->flag, 0, memory_order_release); }

/* Sender: claim a free slot of `receiver` among its first `max_slots`; the
 * slot index, or -1 if all are taken. */
int lm_fastbox_claim(lm_shm_area *a, int receiver, int my_local_rank, unsigned max_slots);

#endif
