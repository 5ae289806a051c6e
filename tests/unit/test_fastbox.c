/* Fast boxes: the ring itself, then order across the switch between the
 * fast box and the cell queue under long mixed-size streams (one way and
 * both ways at once), then an 8-byte ping-pong whose latency is printed. */
#include "transport_harness.h"
#include "transport/fastbox.h"
#include <time.h>

typedef struct hdr {
    uint8_t id;
    uint8_t pad[3];
    uint32_t seq;
} hdr;
enum { AM_DATA = 3, AM_PING = 4 };

#define STREAM 200000

static uint32_t next_seq[H_MAX_RANKS];
static long received;

/* Sizes that alternate between fitting a record and not, in runs of
 * varying length, plus the exact boundary. */
static size_t size_of(uint32_t seq)
{
    size_t fit = LM_SHM_FB_PAYLOAD_MAX;
    uint32_t x = seq * 2654435761u;
    switch ((seq / 7) % 5) {
    case 0: return seq % 2 ? 8 : 5000;               /* strict alternation */
    case 1: return x % 3 ? x % 64 : 3000 + x % 9000; /* mostly small */
    case 2: return x % 3 ? 3000 + x % 9000 : x % 64; /* mostly large */
    case 3: return fit + (seq % 2);                  /* boundary: fits / one over */
    default: return x % 16000;
    }
}

static void data_handler(int src, const void *h, size_t hl, const void *p, size_t pl)
{
    const hdr *m = h;
    if (m->seq != next_seq[src]) {
        fprintf(stderr, "rank %d from %d: got %u, expected %u\n", (int)getpid(), src, m->seq, next_seq[src]);
        exit(1);
    }
    CHECK(pl == size_of(m->seq));
    const unsigned char *b = p;
    if (pl) CHECK(b[0] == (unsigned char)m->seq && b[pl - 1] == (unsigned char)(m->seq + pl - 1));
    next_seq[src]++;
    received++;
}

static void send_numbered(int dst, uint32_t seq)
{
    static unsigned char buf[16384];
    size_t len = size_of(seq);
    for (size_t i = 0; i < len; i++) buf[i] = (unsigned char)(seq + i);
    hdr m = {AM_DATA, {0}, seq};
    h_send(dst, &m, sizeof m, buf, len);
}

static int one_way(int r)
{
    h_init_rank(r, 8, 8, 0);
    lm_transport_register_am(AM_DATA, data_handler);
    h_barrier();
    if (r == 1) {
        for (uint32_t s = 0; s < STREAM; s++) send_numbered(0, s);
        lm_transport_counters c;
        lm_transport_get_counters("shm", &c);
        printf("one way: %llu via fast box, %llu via cells\n", (unsigned long long)c.fastbox_sent,
               (unsigned long long)c.queue_sent);
        CHECK(c.fastbox_sent > STREAM / 10 && c.queue_sent > STREAM / 10);
    } else {
        while (received < STREAM)
            if (lm_transport_progress() == 0) sched_yield();
        CHECK(next_seq[1] == STREAM);
    }
    h_barrier();
    lm_transport_finalize();
    return 0;
}

/* Both send to each other at once; each progresses while its sends wait. */
static int both_ways(int r)
{
    h_init_rank(r, 4, 8, 0);
    lm_transport_register_am(AM_DATA, data_handler);
    h_barrier();
    for (uint32_t s = 0; s < STREAM; s++) {
        send_numbered(1 - r, s);
        if (s % 3 == 0) lm_transport_progress();
    }
    while (received < STREAM)
        if (lm_transport_progress() == 0) sched_yield();
    CHECK(next_seq[1 - r] == STREAM);
    h_barrier();
    lm_transport_finalize();
    return 0;
}

/* --- ping-pong ------------------------------------------------------------ */
static volatile int pongs;
static void ping_handler(int src, const void *h, size_t hl, const void *p, size_t pl) { pongs++; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int ping_pong(int r)
{
    enum { WARMUP = 1000, ITERS = 100000 };
    h_init_rank(r, 8, 8, 0);
    lm_transport_register_am(AM_PING, ping_handler);
    h_barrier();
    uint64_t payload = 42;
    hdr m = {AM_PING, {0}, 0};
    double t0 = 0;
    for (int i = 0; i < WARMUP + ITERS; i++) {
        if (i == WARMUP) t0 = now();
        if (r == 0) {
            h_send(1, &m, sizeof m, &payload, 8);
            while (pongs <= i) lm_transport_progress();
        } else {
            while (pongs <= i) lm_transport_progress();
            h_send(0, &m, sizeof m, &payload, 8);
        }
    }
    if (r == 0) {
        double half = (now() - t0) / ITERS / 2;
        lm_transport_counters c;
        lm_transport_get_counters("shm", &c);
        printf("ping-pong 8 B: %.3f us half round trip (%llu of %d via fast box)\n", half * 1e6,
               (unsigned long long)c.fastbox_sent, WARMUP + ITERS);
        CHECK(c.fastbox_sent >= ITERS);
    }
    h_barrier();
    lm_transport_finalize();
    return 0;
}

/* --- the ring on its own -------------------------------------------------- */
static uint32_t lcg(uint32_t *x) { return *x = *x * 1664525u + 1013904223u; }

/* Many laps of records of random sizes, put and taken in random bursts, in
 * a ring whose bytes start as garbage except the first word of each line
 * (what the protocol keeps 0 in free lines): every record comes back whole
 * and in order, so no stale byte is ever taken for a header. With `rewind`
 * the sender goes back to the ring's start, half of the times it finds
 * everything handled (shm.c: every time a pair takes turns). */
static void ring_laps(lm_fastbox_slot *s, int rewind)
{
    static unsigned char buf[LM_SHM_FB_PAYLOAD_MAX];
    memset(s->ring, 0xa5, sizeof s->ring);
    for (uint32_t off = 0; off < LM_SHM_FB_RING_BYTES; off += LM_FB_ALIGN) memset(s->ring + off, 0, 4);
    atomic_store(&s->freed, 0);
    uint32_t head = 0, seen = 0, tail = 0, last = 0, x = 12345, put = 0, got = 0, full = 0, rewinds = 0;
    hdr h = {AM_DATA, {0}, 0};
    while (got < 200000) {
        /* with rewinds, short bursts: a rewind leaves from near a lap's start */
        for (uint32_t k = lcg(&x) % (rewind ? 6 : 40); k > 0; k--) {
            uint32_t y = lcg(&x) >> 8;
            size_t len = y % 4 ? y % 100 : y % (LM_SHM_FB_PAYLOAD_MAX + 1);
            for (size_t i = 0; i < len; i++) buf[i] = (unsigned char)(put + i);
            h.seq = put;
            uint32_t before = head;
            if (rewind && (y & 16) && lm_fastbox_drained(s, head, last, seen)) {
                CHECK(got == put); /* drained means handled, nothing less */
                lm_fastbox_rewind(&head, &seen);
                rewinds += head != before;
            }
            if (lm_fastbox_put(s, &head, &seen, put, &h, sizeof h, buf, len / 2, buf + len / 2, len - len / 2)) {
                full++;
                break;
            }
            last = head - lm_fastbox_record_bytes(sizeof h, len);
            put++;
        }
        for (uint32_t k = lcg(&x) % 40; k > 0; k--) {
            lm_fastbox_record *e = lm_fastbox_peek(s, &tail);
            if (!e) {
                CHECK(got == put);
                break;
            }
            const unsigned char *p = e->data + lm_fastbox_payload_at(e->hdr_len);
            CHECK(e->hdr_len == sizeof h && ((hdr *)e->data)->seq == got && e->q_before == got);
            for (uint32_t i = 0; i < e->payload_len; i++) CHECK(p[i] == (unsigned char)(got + i));
            lm_fastbox_consume(&tail, e);
            got++;
        }
        lm_fastbox_give_back(s, tail);
    }
    CHECK(full > 0 && head / LM_SHM_FB_RING_BYTES > 100); /* it filled up, and went round many times */
    CHECK(!rewind || rewinds > 300);
}

/* A rewind by hand: records left at the ring's end and the tail's line
 * clear, the next record goes to the start, and the receiver follows it
 * there; a record written at the start after one due at the tail (a ring
 * gone round) is not taken for a rewind. */
static void rewound(lm_fastbox_slot *s)
{
    memset(s->ring, 0, sizeof s->ring);
    atomic_store(&s->freed, 0);
    hdr h = {AM_DATA, {0}, 0};
    uint32_t head = 0, seen = 0, tail = 0, last = 0;
    lm_fastbox_record *e;
    for (int i = 0; i < 5; i++) { /* 5 lines into the ring, all handled */
        CHECK(lm_fastbox_put(s, &head, &seen, 0, &h, sizeof h, "x", 1, NULL, 0) == 0);
        last = head - LM_FB_ALIGN;
        CHECK((e = lm_fastbox_peek(s, &tail)) != NULL);
        lm_fastbox_consume(&tail, e);
    }
    CHECK(lm_fastbox_drained(s, head, last, seen) && tail == 5 * LM_FB_ALIGN);
    lm_fastbox_rewind(&head, &seen);
    CHECK(head == LM_SHM_FB_RING_BYTES && seen == 5 * LM_FB_ALIGN);
    h.seq = 99;
    CHECK(lm_fastbox_put(s, &head, &seen, 0, &h, sizeof h, "y", 1, NULL, 0) == 0);
    CHECK((e = lm_fastbox_peek(s, &tail)) != NULL && ((hdr *)e->data)->seq == 99);
    CHECK(tail == LM_SHM_FB_RING_BYTES && (unsigned char *)e == s->ring);
    lm_fastbox_consume(&tail, e);
    CHECK(lm_fastbox_peek(s, &tail) == NULL);
    /* not a rewind: the tail's record is there, the start's came after it */
    memset(s->ring, 0, sizeof s->ring);
    head = seen = tail = LM_SHM_FB_RING_BYTES - LM_FB_ALIGN;
    for (uint32_t i = 0; i < 2; i++) {
        h.seq = i;
        CHECK(lm_fastbox_put(s, &head, &seen, 0, &h, sizeof h, "z", 1, NULL, 0) == 0);
    }
    for (uint32_t i = 0; i < 2; i++) {
        CHECK((e = lm_fastbox_peek(s, &tail)) != NULL && ((hdr *)e->data)->seq == i);
        lm_fastbox_consume(&tail, e);
    }
    CHECK(tail == head && lm_fastbox_peek(s, &tail) == NULL);
}

static void ring(void)
{
    h_setup(2);
    lm_shm_area *a = H.area;
    CHECK(lm_fastbox_claim(a, 0, 1, 2) == 0);
    CHECK(lm_fastbox_claim(a, 0, 1, 2) == 1);
    CHECK(lm_fastbox_claim(a, 0, 1, 2) == -1); /* bounded */
    lm_fastbox_slot *s = lm_fastbox_slot_at(a, 0, 0);
    hdr h = {AM_DATA, {0}, 0};
    CHECK(lm_fastbox_fits(sizeof h, LM_SHM_FB_PAYLOAD_MAX) && !lm_fastbox_fits(sizeof h, LM_SHM_FB_PAYLOAD_MAX + 1));
    CHECK(lm_fastbox_record_bytes(sizeof h, 8) == 64); /* a small message takes one line */
    uint32_t head = 0, seen = 0, tail = 0, n = 0;
    while (lm_fastbox_put(s, &head, &seen, 7, &h, sizeof h, "ab", 2, "cd", 2) == 0) h.seq = ++n;
    CHECK(n == LM_SHM_FB_RING_BYTES / LM_FB_ALIGN && head == LM_SHM_FB_RING_BYTES); /* every line used */
    for (uint32_t i = 0; i < 3; i++) {
        lm_fastbox_record *e = lm_fastbox_peek(s, &tail);
        CHECK(e && e->q_before == 7 && e->payload_len == 4 && ((hdr *)e->data)->seq == i);
        CHECK(memcmp(e->data + lm_fastbox_payload_at(sizeof h), "abcd", 4) == 0);
        lm_fastbox_consume(&tail, e);
    }
    CHECK(lm_fastbox_put(s, &head, &seen, 7, &h, sizeof h, NULL, 0, NULL, 0) == -1); /* not given back yet */
    lm_fastbox_give_back(s, tail);
    CHECK(lm_fastbox_put(s, &head, &seen, 7, &h, sizeof h, NULL, 0, NULL, 0) == 0);
    lm_fastbox_record *e;
    while ((e = lm_fastbox_peek(s, &tail)) != NULL) lm_fastbox_consume(&tail, e);
    CHECK(tail == head && head == LM_SHM_FB_RING_BYTES + LM_FB_ALIGN);
    lm_fastbox_give_back(s, tail);
    /* records of the largest payload (one line more than the payload): one
     * that does not fit before the end of the ring goes to its start, the
     * rest of the ring skipped behind a wrap mark */
    static unsigned char big[LM_SHM_FB_PAYLOAD_MAX];
    uint32_t rec = lm_fastbox_record_bytes(sizeof h, sizeof big), start = head, model = head, wraps = 0;
    CHECK(rec == LM_SHM_FB_PAYLOAD_MAX + LM_FB_ALIGN);
    for (int i = 0; i < 8; i++) {
        CHECK(lm_fastbox_put(s, &head, &seen, 7, &h, sizeof h, big, sizeof big, NULL, 0) == 0);
        if (model % LM_SHM_FB_RING_BYTES + rec > LM_SHM_FB_RING_BYTES) {
            model += LM_SHM_FB_RING_BYTES - model % LM_SHM_FB_RING_BYTES;
            wraps++;
        }
        uint32_t last = model; /* where this record starts */
        model += rec;
        CHECK(head == model);
        /* not handled yet: the ring is not drained, whatever `freed` said */
        CHECK(!lm_fastbox_drained(s, head, last, seen));
        CHECK((e = lm_fastbox_peek(s, &tail)) != NULL && e->payload_len == sizeof big);
        lm_fastbox_consume(&tail, e);
        /* handled: drained, seen from the record alone, before any give-back */
        CHECK(lm_fastbox_drained(s, head, last, seen));
        lm_fastbox_give_back(s, tail);
    }
    CHECK(wraps > 0 && tail == head && head - start > 8 * rec);
    CHECK(lm_fastbox_drained(s, head, head, head)); /* `freed` caught up */
    ring_laps(lm_fastbox_slot_at(a, 0, 1), 0);
    ring_laps(lm_fastbox_slot_at(a, 0, 1), 1);
    rewound(lm_fastbox_slot_at(a, 0, 1));
}

int main(void)
{
    ring();
    printf("ring: ok\n");
    CHECK(h_run(2, one_way, 240) == 0);
    printf("one way: %d mixed-size messages in order: ok\n", STREAM);
    CHECK(h_run(2, both_ways, 240) == 0);
    printf("both ways: %d mixed-size messages each way in order: ok\n", STREAM);
    CHECK(h_run(2, ping_pong, 120) == 0);
    return 0;
}
