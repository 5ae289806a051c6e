/* Lock-free multi-producer single-consumer FIFO of nodes in a shared segment
 * (the Nemesis design). Each process maps the segment at its own address, so
 * links are offsets from the segment base, never pointers; offset 0 means
 * "none" (offset 0 is the area header, never a node).
 *
 * A node starts with an _Atomic uint64_t link word. A node is in at most one
 * queue at a time. Producers never wait: one atomic exchange on the tail,
 * then one store to link the predecessor. The consumer never waits either:
 * if it catches a producer between those two steps it reports "empty for
 * now" and tries again at its next poll. */
#ifndef LM_SHM_QUEUE_H
#define LM_SHM_QUEUE_H
#include <stdatomic.h>
#include <stdint.h>

/* head is written by the consumer (and by a producer only when the queue was
 * empty); tail by producers. Separate cache lines keep them from sharing. */
typedef struct lm_shm_queue {
    _Atomic uint64_t head;
    char pad0[64 - sizeof(uint64_t)];
    _Atomic uint64_t tail;
    char pad1[64 - sizeof(uint64_t)];
} lm_shm_queue;

typedef struct lm_shm_qnode {
    _Atomic uint64_t next;
} lm_shm_qnode;

/* Any process: append the node at base+off. */
void lm_shm_queue_enqueue(void *base, lm_shm_queue *q, uint64_t off);
/* Consumer only: the oldest node's offset, or 0 if none is ready. */
uint64_t lm_shm_queue_dequeue(void *base, lm_shm_queue *q);
/* Cheap emptiness hint for pollers (may be stale by the time it returns). */
static inline int lm_shm_queue_maybe_empty(lm_shm_queue *q)
{
    return atomic_load_explicit(&q->head, memory_order_relaxed) == 0;
}

#endif
