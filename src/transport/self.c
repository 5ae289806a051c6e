#include "self.h"
#include "am_dispatch.h"
#include "util/lm_mem.h"
#include <string.h>

typedef struct self_msg {
    struct self_msg *next;
    size_t hdr_len, payload_len;
    _Alignas(16) unsigned char data[]; /* header, then payload at offset LM_AM_HDR_MAX */
} self_msg;

/* Bytes the queue may hold before senders are told LM_EAGAIN, as the shm
 * transport does when its cells run out: the point-to-point layer then keeps
 * the packets and decides again (eager or rendezvous) once the receiving
 * side has counted what it holds, so a flood to oneself stays bounded. */
#define SELF_QUEUE_LIMIT (1u << 20)

static struct {
    self_msg *head, **tail;
    size_t queued; /* payload bytes in the queue */
    int world;
    lm_transport_counters cnt;
} Q = {NULL, &Q.head, 0, -1, {0}};

void lm_self_init(int world_rank)
{
    Q.head = NULL;
    Q.tail = &Q.head;
    Q.queued = 0;
    Q.world = world_rank;
    memset(&Q.cnt, 0, sizeof Q.cnt);
}

void lm_self_finalize(void)
{
    while (Q.head) {
        self_msg *m = Q.head;
        Q.head = m->next;
        lm_free(LM_MEM_TRANSPORT, m);
    }
    Q.tail = &Q.head;
    Q.queued = 0;
}

int lm_self_send(const void *hdr, size_t hdr_len, const void *p0, size_t l0, const void *p1, size_t l1)
{
    if (hdr_len == 0 || hdr_len > LM_AM_HDR_MAX) return LM_EINVAL;
    if (Q.head && Q.queued + l0 + l1 > SELF_QUEUE_LIMIT) {
        Q.cnt.send_eagain++;
        return LM_EAGAIN;
    }
    self_msg *m = lm_malloc(LM_MEM_TRANSPORT, sizeof *m + LM_AM_HDR_MAX + l0 + l1);
    if (!m) {
        Q.cnt.send_eagain++;
        return LM_EAGAIN;
    }
    m->next = NULL;
    m->hdr_len = hdr_len;
    m->payload_len = l0 + l1;
    memcpy(m->data, hdr, hdr_len);
    if (l0) memcpy(m->data + LM_AM_HDR_MAX, p0, l0);
    if (l1) memcpy(m->data + LM_AM_HDR_MAX + l0, p1, l1);
    *Q.tail = m;
    Q.tail = &m->next;
    Q.queued += m->payload_len;
    Q.cnt.am_sent++;
    Q.cnt.am_bytes_sent += m->payload_len;
    return LM_OK;
}

int lm_self_progress(void)
{
    if (!Q.head) return 0;
    /* Deliver only what was queued before this call: handlers that send to
     * self again are served by the next progress, so a ping-pong with
     * oneself cannot spin here forever. */
    self_msg *m = Q.head;
    Q.head = NULL;
    Q.tail = &Q.head;
    int n = 0;
    while (m) {
        self_msg *next = m->next;
        Q.queued -= m->payload_len;
        lm_am_deliver(Q.world, m->data, m->hdr_len, m->data + LM_AM_HDR_MAX, m->payload_len);
        Q.cnt.am_received++;
        Q.cnt.am_bytes_received += m->payload_len;
        lm_free(LM_MEM_TRANSPORT, m);
        m = next;
        n++;
    }
    return n;
}

void lm_self_counters(lm_transport_counters *out) { *out = Q.cnt; }

void lm_self_count_copy(size_t len)
{
    Q.cnt.rget_ops++;
    Q.cnt.rget_bytes += len;
}
