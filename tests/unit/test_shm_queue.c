/* The MPSC cell queue on its own: FIFO per producer under contention, cells
 * recycled through the owners' free queues, nothing lost or duplicated. */
#include "transport_harness.h"
#include "transport/shm_queue.h"

#define PRODUCERS 3
#define PER_PRODUCER 100000

typedef struct msg {
    lm_shm_qnode link;
    uint32_t producer, seq;
} msg;

static lm_shm_area *A(void) { return H.area; }

static int consumer(void)
{
    uint32_t next[PRODUCERS + 1] = {0};
    long total = 0;
    lm_shm_queue *q = &lm_shm_area_ctl(A(), 0)->recv;
    while (total < (long)PRODUCERS * PER_PRODUCER) {
        uint64_t off = lm_shm_queue_dequeue(H.area, q);
        if (!off) {
            sched_yield();
            continue;
        }
        msg *m = (msg *)((char *)H.area + off);
        CHECK(m->producer >= 1 && m->producer <= PRODUCERS);
        CHECK(lm_shm_area_cell_owner(A(), off) == (int)m->producer);
        CHECK(m->seq == next[m->producer]);
        next[m->producer]++;
        total++;
        lm_shm_queue_enqueue(H.area, &lm_shm_area_ctl(A(), (int)m->producer)->free, off);
    }
    CHECK(lm_shm_queue_dequeue(H.area, q) == 0);
    return 0;
}

static int producer(int r)
{
    uint32_t fresh = 0;
    lm_shm_queue *dst = &lm_shm_area_ctl(A(), 0)->recv;
    lm_shm_queue *mine = &lm_shm_area_ctl(A(), r)->free;
    for (uint32_t seq = 0; seq < PER_PRODUCER; seq++) {
        uint64_t off;
        while ((off = lm_shm_queue_dequeue(H.area, mine)) == 0) {
            if (fresh < A()->cells_per_rank) {
                off = lm_shm_area_cell_offset(A(), r, fresh++);
                break;
            }
            sched_yield();
        }
        msg *m = (msg *)((char *)H.area + off);
        m->producer = (uint32_t)r;
        m->seq = seq;
        lm_shm_queue_enqueue(H.area, dst, off);
    }
    return 0;
}

static int rank_main(int r) { return r == 0 ? consumer() : producer(r); }

/* Single process: plain FIFO, empty, refill after empty. */
static void sequential(void)
{
    h_setup(1);
    lm_shm_queue *q = &lm_shm_area_ctl(A(), 0)->recv;
    CHECK(lm_shm_queue_dequeue(H.area, q) == 0);
    for (int round = 0; round < 3; round++) {
        for (uint32_t i = 0; i < A()->cells_per_rank; i++)
            lm_shm_queue_enqueue(H.area, q, lm_shm_area_cell_offset(A(), 0, i));
        for (uint32_t i = 0; i < A()->cells_per_rank; i++)
            CHECK(lm_shm_queue_dequeue(H.area, q) == lm_shm_area_cell_offset(A(), 0, i));
        CHECK(lm_shm_queue_dequeue(H.area, q) == 0);
    }
}

int main(void)
{
    sequential();
    CHECK(h_run(PRODUCERS + 1, rank_main, 120) == 0);
    printf("shm_queue: %d producers x %d messages in order\n", PRODUCERS, PER_PRODUCER);
    return 0;
}
