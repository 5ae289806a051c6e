#include "shm_queue.h"

static inline lm_shm_qnode *node_at(void *base, uint64_t off) { return (lm_shm_qnode *)((char *)base + off); }

void lm_shm_queue_enqueue(void *base, lm_shm_queue *q, uint64_t off)
{
    lm_shm_qnode *n = node_at(base, off);
    atomic_store_explicit(&n->next, 0, memory_order_relaxed);
    /* acq_rel: the node's contents (written before) are published with it,
     * and we see the predecessor's reset link before linking to it. */
    uint64_t prev = atomic_exchange_explicit(&q->tail, off, memory_order_acq_rel);
    if (prev == 0) atomic_store_explicit(&q->head, off, memory_order_release);
    else atomic_store_explicit(&node_at(base, prev)->next, off, memory_order_release);
}

uint64_t lm_shm_queue_dequeue(void *base, lm_shm_queue *q)
{
    uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
    if (head == 0) return 0;
    lm_shm_qnode *n = node_at(base, head);
    uint64_t next = atomic_load_explicit(&n->next, memory_order_acquire);
    if (next != 0) {
        /* Only the consumer moves head while the queue is non-empty. */
        atomic_store_explicit(&q->head, next, memory_order_relaxed);
        return head;
    }
    /* head looks like the last node. Clear head *before* swinging tail to 0:
     * a producer that then finds tail == 0 stores its node into head, and
     * that store must land after ours. */
    atomic_store_explicit(&q->head, 0, memory_order_relaxed);
    uint64_t expected = head;
    if (atomic_compare_exchange_strong_explicit(&q->tail, &expected, 0, memory_order_acq_rel, memory_order_acquire))
        return head;
    /* A producer has taken tail after head but not linked yet. It will link
     * head->next (not q->head, since its predecessor was non-zero), so putting
     * head back is safe; the node is returned on a later poll rather than
     * spinning here on a producer that may be descheduled. */
    atomic_store_explicit(&q->head, head, memory_order_relaxed);
    next = atomic_load_explicit(&n->next, memory_order_acquire);
    if (next == 0) return 0;
    atomic_store_explicit(&q->head, next, memory_order_relaxed);
    return head;
}
