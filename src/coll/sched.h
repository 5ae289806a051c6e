/* Collective schedules. A collective algorithm is a generator: for one rank
 * of a communicator it emits that rank's steps — send, receive, local copy,
 * local reduction — grouped in rounds. The steps of a round are independent
 * of each other and start together once every step of the previous round
 * has completed; that is the whole dependency graph.
 *
 * The same generator output is executed (sched_exec.c: blocking
 * collectives run it to completion, nonblocking and persistent ones are
 * progressed by the progress engine) and decomposed (decompose.c: run the
 * generator for every rank of a communicator that does not exist and list
 * the messages).
 *
 * Steps address bytes in three slots: the send buffer, the receive buffer
 * and the schedule's scratch area. Slot offsets are byte offsets into the
 * data as the algorithm sees it: a dense user buffer directly, anything
 * else a packed copy staged in scratch (sched_exec.c). */
#ifndef LM_SCHED_H
#define LM_SCHED_H
#include <stddef.h>
#include <stdint.h>

enum lm_step_kind {
    LM_STEP_SEND,
    LM_STEP_RECV,
    LM_STEP_COPY,
    LM_STEP_REDUCE,
    /* Node shared memory (coll_shm.h): POST copies bytes into this rank's
     * mailbox entry for the call and publishes it; FETCH copies bytes from
     * a peer's published entry, FETCH_REDUCE combines them into dst as
     * REDUCE does. A rank posts at most once per call, and `readers` says
     * how many FETCH steps of the communicator read that post: the entry
     * is reused only after all of them have. */
    LM_STEP_POST,
    LM_STEP_FETCH,
    LM_STEP_FETCH_REDUCE,
    /* Wait until every reader of this rank's post of the call has read
     * it: a post by address (by_address) names the caller's own buffer,
     * which must not change, nor the call end, before then. */
    LM_STEP_WAIT_READ
};
/* AUX: memory the caller of the executor provides besides the user's
 * buffers (the counts rows of the v forms across nodes, coll_counts_first.c). */
enum lm_slot { LM_SLOT_SEND, LM_SLOT_RECV, LM_SLOT_SCRATCH, LM_SLOT_AUX, LM_SLOT_COUNT };

typedef struct lm_step {
    uint8_t kind;     /* enum lm_step_kind */
    uint8_t src_slot; /* SEND, COPY, REDUCE, POST: where the bytes come from */
    uint8_t dst_slot; /* RECV, COPY, REDUCE, FETCH*: where they go */
    /* POST: publish where the bytes are instead of copying them (every
     * member shares this rank's address space); its readers' FETCH steps
     * then copy straight from there */
    uint8_t by_address;
    int peer; /* SEND, RECV, FETCH*: communicator rank */
    size_t src_off, dst_off;
    size_t bytes;       /* COPY: bytes of each block */
    uint32_t blocks;    /* COPY: blocks moved (1: one contiguous range) */
    int16_t src_stride; /* COPY: block i starts at src_off + i * src_stride * bytes */
    int16_t dst_stride; /*       and lands at dst_off + i * dst_stride * bytes */
    uint16_t readers;   /* POST: FETCH steps that read it */
} lm_step;

/* REDUCE combines as MPI_Reduce_local(in = src, inout = dst): dst = src op dst.
 * Generators for non-commutative ops keep operands in rank order. */

/* Most schedules are small (a few steps in a few rounds on few ranks):
 * those live in the schedule itself, so that building one allocates
 * nothing; larger ones move to the heap as they grow. */
#define LM_SCHED_INLINE_STEPS 8
#define LM_SCHED_INLINE_ROUNDS 8

typedef struct lm_sched {
    lm_step *steps; /* inline_steps or the heap */
    size_t nsteps, cap;
    uint32_t *round_end; /* round r holds steps [round_end[r-1], round_end[r]) */
    uint32_t nrounds, rounds_cap;
    uint32_t widest;      /* most steps in one round */
    size_t scratch_bytes; /* scratch the steps use (offsets are 64-byte aligned) */
    int failed;           /* out of memory while building */
    lm_step inline_steps[LM_SCHED_INLINE_STEPS];
    uint32_t inline_rounds[LM_SCHED_INLINE_ROUNDS];
} lm_sched;

/* A schedule points into itself: initialise it where it stays, never copy it. */
void lm_sched_init(lm_sched *s);
void lm_sched_free(lm_sched *s);

/* Builders. Failures (out of memory) are remembered in s->failed. */
void lm_sched_send(lm_sched *s, int peer, int slot, size_t off, size_t bytes);
void lm_sched_recv(lm_sched *s, int peer, int slot, size_t off, size_t bytes);
void lm_sched_copy(lm_sched *s, int src_slot, size_t src_off, int dst_slot, size_t dst_off, size_t bytes);
/* Copy `blocks` blocks of `bytes` each as one step: block i from
 * src_off + i*src_stride*bytes to dst_off + i*dst_stride*bytes (strides in
 * blocks, may be negative). Algorithms that move many equal blocks at once
 * (Bruck's packing) then keep schedules of O(rounds) steps, not O(blocks).
 * The blocks must not overlap one another across source and destination. */
void lm_sched_copy_blocks(lm_sched *s, int src_slot, size_t src_off, int src_stride, int dst_slot, size_t dst_off,
                          int dst_stride, size_t bytes, uint32_t blocks);
void lm_sched_reduce(lm_sched *s, int src_slot, size_t src_off, int dst_slot, size_t dst_off, size_t bytes);
/* Mailbox steps (node shared memory). POST: bytes from (slot, off) to
 * offset mbox_off of this rank's entry for the call, read by `readers`
 * FETCH steps. FETCH: bytes at mbox_off of peer's entry for the call to
 * (slot, off); with reduce, combined into it as a REDUCE step (reductions
 * always read from offset 0 of an entry, which is 16-byte aligned). */
void lm_sched_post(lm_sched *s, int slot, size_t off, size_t mbox_off, size_t bytes, int readers);
void lm_sched_fetch(lm_sched *s, int peer, size_t mbox_off, int slot, size_t off, size_t bytes, int reduce);
/* Turn a mailbox schedule into one whose posts carry addresses: every POST
 * and FETCH by address, and a last round that waits for this rank's post
 * to be read (ranks sharing one address space). */
void lm_sched_by_address(lm_sched *s);
/* Close the current round; a round with no steps is not recorded. */
void lm_sched_round(lm_sched *s);
/* Reserve scratch bytes; returns their offset in LM_SLOT_SCRATCH. */
size_t lm_sched_scratch(lm_sched *s, size_t bytes);

#endif
